package harness

import (
	"os"
	"syscall"
)

// CanMount reports whether this process may mount a tmpfs (root on Linux):
// the condition [mount] of the scripts, and of the tests that fill or
// freeze a small disk.
func CanMount() bool {
	if os.Geteuid() != 0 {
		return false
	}
	dir, err := os.MkdirTemp("", "genform-mount-probe")
	if err != nil {
		return false
	}
	defer os.Remove(dir)
	if syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k") != nil {
		return false
	}
	syscall.Unmount(dir, 0)
	return true
}
