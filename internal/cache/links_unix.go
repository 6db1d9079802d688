//go:build unix

package cache

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// links is the number of hard links to a file.
func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// linkIn hard-links the file at src (outside the cache) to rel inside
// it: the directory is opened through the root, so a link that leads out
// of the cache is not followed, and the new name is made in it with
// linkat.
func linkIn(r *os.Root, src, rel string) error {
	d, err := r.Open(filepath.Dir(rel))
	if err != nil {
		return err
	}
	defer d.Close()
	return os.NewSyscallError("linkat", unix.Linkat(unix.AT_FDCWD, src, int(d.Fd()), filepath.Base(rel), 0))
}

// linkOut hard-links the entry rel, opened through the root, to dst
// outside the cache.
func linkOut(r *os.Root, rel, dst string) error {
	d, err := r.Open(filepath.Dir(rel))
	if err != nil {
		return err
	}
	defer d.Close()
	return os.NewSyscallError("linkat", unix.Linkat(int(d.Fd()), filepath.Base(rel), unix.AT_FDCWD, dst, 0))
}
