package reconcile

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/genform/genform/reconcile/plans"
)

// A no-op plan's cost grows with its instances, so what planning one more
// instance allocates is held down: its expansion, its fingerprint, the
// stat of its file and the count it declares, in objects and in bytes
// (measured as the difference between 2,000 and 1,000 instances, which
// cancels what a plan allocates once). A method value made per instance,
// a list per resource, room per resource in a map that stays empty or a
// Change allocated on its own shows here: 8.1 allocations and 1,174 bytes
// now, 19.1 and 2,143 before the fingerprint, the file check and the
// Changes were held down.
func TestNoOpPlanAllocationsPerInstance(t *testing.T) {
	measure := func(n int) (allocs, bytes float64) {
		var b strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "image \"i%05d\" {\n  prompt       = \"picture number %d\"\n  image_number = 1\n}\n\n", i, i)
		}
		f := newFixture(t)
		f.applied(b.String())
		cfg := f.write(b.String())
		plan := func() {
			p, d := f.plan(cfg)
			if d != "" || p.HasChanges() {
				t.Fatalf("not a no-op plan: %s", d)
			}
		}
		plan()
		const runs = 5
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			plan()
		}
		runtime.ReadMemStats(&after)
		return float64(after.Mallocs-before.Mallocs) / runs, float64(after.TotalAlloc-before.TotalAlloc) / runs
	}
	a1, b1 := measure(1000)
	a2, b2 := measure(2000)
	const mostAllocs, mostBytes = 9, 1240
	if per := (a2 - a1) / 1000; per > mostAllocs {
		t.Errorf("planning a no-op instance allocates %.1f times, more than %d", per, mostAllocs)
	}
	if per := (b2 - b1) / 1000; per > mostBytes {
		t.Errorf("planning a no-op instance allocates %.0f bytes, more than %d", per, mostBytes)
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
