//go:build unix

package cache

import (
	"io/fs"
	"syscall"
)

// links is the number of hard links to a file.
func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
