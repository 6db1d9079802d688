// Command genform is a declarative reconciler for generated media: it plans
// and applies image and video generations declared in *.gen.hcl files.
package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"

	"github.com/genform/genform/internal/command"
)

// gcPercent is the garbage collector's target when GOGC is not set. A
// command's live heap only grows (configuration, state, plan), so with Go's
// default of 100 the heap peaks near twice what the command ends with; 70
// makes that 1.7 times, which keeps a no-op plan of 10,000 resources under
// 64 MiB of RSS. The cost stays linear in the work: each collection scans
// the live heap, and there is one per 0.7 live heaps allocated.
const gcPercent = 70

// largeHeap is the live heap from which the collector goes back to Go's
// default target (see watchHeap). A no-op plan of 10,000 resources lives in
// about 35 MiB; one of 100,000 in about 250 MiB, where collecting at 70%
// costs a tenth of the run (1.70 s against 1.50 s) for memory the 600 MiB
// target does not need (440 MiB against 450).
const largeHeap = 128 << 20

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
		watchHeap()
	}
	os.Exit(command.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// sentinel is what watchHeap's finalizer is set on: an object with a
// pointer, which Go never packs with others (a finalizer on a packed tiny
// object may never run).
type sentinel struct{ _ *int }

// watchHeap looks at the live heap after every collection, with a
// finalizer that each collection runs and that arms the next, until the
// heap passes largeHeap; then it sets Go's default target and stops.
func watchHeap() {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var arm func()
	arm = func() {
		runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 && sample[0].Value.Uint64() > largeHeap {
				debug.SetGCPercent(100)
				return
			}
			arm()
		})
	}
	arm()
}
