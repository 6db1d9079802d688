package reconcile

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/genform/genform/reconcile/plans"
)

// A no-op plan's cost grows with its instances, so what planning one more
// instance allocates is held down: its expansion, its fingerprint, the
// stat of its file and the count it declares (measured as the difference
// between 600 and 300 instances, which cancels what a plan allocates
// once). A method value made per instance, or a list made per resource,
// shows here.
func TestNoOpPlanAllocationsPerInstance(t *testing.T) {
	allocs := func(n int) float64 {
		var b strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "image \"i%05d\" {\n  prompt       = \"picture number %d\"\n  image_number = 1\n}\n\n", i, i)
		}
		f := newFixture(t)
		f.applied(b.String())
		cfg := f.write(b.String())
		return testing.AllocsPerRun(5, func() {
			p, d := f.plan(cfg)
			if d != "" || p.HasChanges() {
				t.Fatalf("not a no-op plan: %s", d)
			}
		})
	}
	const most = 10
	if per := (allocs(600) - allocs(300)) / 300; per > most {
		t.Errorf("planning a no-op instance allocates %.1f times, more than %d", per, most)
	}
}

// The Changes of a plan's instances are cut from blocks (newChange): side
// by side in memory, each of exactly a Change's size, where allocated one
// by one each would be rounded up to Go's next size class.
func TestChangesShareBlocks(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&b, "image \"i%03d\" {\n  prompt = \"picture %d\"\n}\n", i, i)
	}
	f := newFixture(t)
	f.applied(b.String())
	p, d := f.plan(f.write(b.String()))
	if d != "" || len(p.Changes) != 100 {
		t.Fatalf("plan of %d changes: %s", len(p.Changes), d)
	}
	adjacent := 0
	for i := 1; i < len(p.Changes); i++ {
		if uintptr(unsafe.Pointer(p.Changes[i]))-uintptr(unsafe.Pointer(p.Changes[i-1])) == unsafe.Sizeof(plans.Change{}) {
			adjacent++
		}
	}
	// Blocks of 16 at first, then larger: at most a dozen boundaries.
	if adjacent < 88 {
		t.Errorf("%d of 99 consecutive Changes sit side by side, want at least 88", adjacent)
	}
}
