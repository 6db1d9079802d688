package reconcile

import (
	"fmt"
	"strings"
	"testing"
)

// A no-op plan's cost grows with its instances, so what planning one more
// instance allocates is held down: its Change, its fingerprint, the stat
// of its file and the count it declares (measured as the difference
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
	const most = 11
	if per := (allocs(600) - allocs(300)) / 300; per > most {
		t.Errorf("planning a no-op instance allocates %.1f times, more than %d", per, most)
	}
}
