//go:build !unix

package boltstate

import (
	"os"
	"syscall"
)

// oNoFollow is 0 where the system has no O_NOFOLLOW: the Lstat check
// before each open is all there is.
const oNoFollow = 0

// errLoop is never returned where oNoFollow is 0.
const errLoop = syscall.Errno(0x7fffffff)

// processExists cannot tell here, and says yes: the holder info is then
// shown as it is.
func processExists(pid int) bool { return true }

// unlock has nothing to do here beyond closing the file, which the caller
// does.
func unlock(f *os.File) {}

// oNonBlock is 0 here: the Lstat check before each open is all there is.
const oNonBlock = 0
