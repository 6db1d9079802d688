package atomicfile

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// syncfs writes back everything dirty on the file system holding dir and
// waits for it, as sync(1) -f does.
func syncfs(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	for {
		err := unix.Syncfs(int(d.Fd()))
		if err != unix.EINTR {
			if err != nil {
				return &os.PathError{Op: "syncfs", Path: dir, Err: err}
			}
			return nil
		}
	}
}

// deviceOf is the file system f is on.
func deviceOf(f *os.File) (uint64, bool) {
	fi, err := f.Stat()
	if err != nil {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Dev), true
}
