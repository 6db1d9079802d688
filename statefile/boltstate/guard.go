package boltstate

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/genform/genform/statefile"
)

// bbolt trusts the pages of its file. It memory-maps the file and follows
// the page numbers it finds there; on a page that is not what its parent
// says (two pages swapped, a page zeroed or overwritten), it panics with a
// failed assertion ("invalid freelist page", "Page expected to be: 24, but
// self identifies as 0"), indexes out of range, or reads outside the map,
// which Go reports as a fault that kills the process. Either way the
// process would exit with status 2, which plan -detailed-exitcode means as
// "changes present". checkFile refuses what it can see from the header
// before bbolt opens the file; guard turns what bbolt finds later into a
// statefile.CorruptError, so every command refuses a damaged file with
// exit 1 and a message saying how to restore it.

// guard runs fn, which uses bbolt on the file at path, and returns a
// *statefile.CorruptError for a panic raised inside bbolt or a fault
// reading the memory map. Any other panic (a bug, not damage) is raised
// again. It also names the backup of the file, when there is one, in a
// *statefile.CorruptError fn returns.
//
// A fault is turned into a panic only in the goroutine that calls guard
// (debug.SetPanicOnFault), so bbolt must not be reached from another
// goroutine inside fn.
func guard(path string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		cause, ok := damage(r)
		if !ok {
			panic(r)
		}
		err = &statefile.CorruptError{Path: path, Err: cause}
		nameBackup(err, path)
	}()
	err = fn()
	nameBackup(err, path)
	return err
}

// damage says whether the panic r being recovered comes from a damaged
// file: a fault reading memory (with SetPanicOnFault, only the memory map
// can fault: Go's own memory does not), or a panic raised by bbolt's code.
// It must be called from the deferred function that recovered r, while the
// panicking frames are still on the stack.
func damage(r any) (error, bool) {
	if f, ok := r.(interface{ Addr() uintptr }); ok {
		return fmt.Errorf("a page points outside the file (%v)", f), true
	}
	if inBolt() {
		return fmt.Errorf("its pages are damaged (%v)", r), true
	}
	return nil, false
}

// boltPackage prefixes the names of bbolt's functions, its internal
// packages' included.
const boltPackage = "go.etcd.io/bbolt"

// inBolt reports whether the panic being recovered was raised in bbolt's
// code: the first frame below runtime.gopanic that is not the runtime's
// own (which raises index errors on behalf of the code that indexed).
func inBolt() bool {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	panicking := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic":
			panicking = true
		case panicking && !strings.HasPrefix(f.Function, "runtime."):
			return strings.HasPrefix(f.Function, boltPackage+".") || strings.HasPrefix(f.Function, boltPackage+"/")
		}
		if !more {
			return false
		}
	}
}
