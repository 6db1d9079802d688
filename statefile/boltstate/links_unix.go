//go:build unix

package boltstate

import (
	"os"
	"syscall"
)

// oNoFollow makes an open fail, with errLoop, when the path's last element
// is a symbolic link.
const oNoFollow = syscall.O_NOFOLLOW

const errLoop = syscall.ELOOP

// processExists reports whether a process with this id runs on this host.
// A process of another user answers EPERM: it exists.
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}

// unlock releases the flock f holds. Closing f is not enough when the file
// is still memory-mapped: the mapping keeps the open file, and its lock,
// alive.
func unlock(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// oNonBlock makes an open of a FIFO return at once instead of waiting for
// its other end; it changes nothing for a regular file.
const oNonBlock = syscall.O_NONBLOCK
