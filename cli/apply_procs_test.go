package cli

import (
	"runtime"
	"testing"
)

// TestOneProc: an apply against a service runs Go on one processor and
// gives the others back afterwards, unless GOMAXPROCS was set by the user.
func TestOneProc(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(before) })
	runtime.GOMAXPROCS(4)

	t.Setenv("GOMAXPROCS", "")
	restore := oneProc()
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Errorf("during the apply GOMAXPROCS is %d, want 1", n)
	}
	restore()
	if n := runtime.GOMAXPROCS(0); n != 4 {
		t.Errorf("after the apply GOMAXPROCS is %d, want the 4 it was", n)
	}

	t.Setenv("GOMAXPROCS", "4")
	restore = oneProc()
	if n := runtime.GOMAXPROCS(0); n != 4 {
		t.Errorf("with GOMAXPROCS=4 set, the apply runs on %d processors", n)
	}
	restore()
}
