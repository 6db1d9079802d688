//go:build !linux

package workdir

import (
	"os"
	"time"
)

// statFile is what CheckFile reads of os.Stat(path): the size, the
// modification time and whether it is a regular file (links followed).
func statFile(path string) (size int64, modTime time.Time, regular bool, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, time.Time{}, false, err
	}
	return fi.Size(), fi.ModTime(), fi.Mode().IsRegular(), nil
}
