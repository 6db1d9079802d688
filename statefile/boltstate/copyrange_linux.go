package boltstate

import (
	"os"

	"golang.org/x/sys/unix"
)

// copyRange copies n bytes of src from offset off to dst's current
// offset, in the kernel (copy_file_range): the bytes do not pass through
// this process, and a file system that shares extents (XFS, Btrfs) shares
// them instead of copying. It returns how many it copied; an error with 0
// means the call is not supported here, and the caller copies otherwise.
func copyRange(dst, src *os.File, off, n int64) (int64, error) {
	var done int64
	for done < n {
		m, err := unix.CopyFileRange(int(src.Fd()), &off, int(dst.Fd()), nil, int(min(n-done, 1<<30)), 0)
		if err != nil {
			return done, err
		}
		if m == 0 {
			break // src is shorter than asked: the caller's copy says so
		}
		done += int64(m)
	}
	return done, nil
}
