package workdir

import (
	"syscall"
	"time"
)

// statFile is what CheckFile reads of os.Stat(path): the size, the
// modification time and whether it is a regular file (links followed).
// It reads them with the one system call os.Stat makes, into a struct on
// the stack: a plan checks every output of every instance, and os.Stat
// allocates a FileInfo for each, most of a no-op plan's garbage after its
// Changes (TestCheckFileAllocations).
func statFile(path string) (size int64, modTime time.Time, regular bool, err error) {
	var st syscall.Stat_t
	for {
		if err = syscall.Stat(path, &st); err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return 0, time.Time{}, false, err
	}
	return st.Size, time.Unix(st.Mtim.Unix()), st.Mode&syscall.S_IFMT == syscall.S_IFREG, nil
}
