package apply

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/genform/genform/reconcile/plans"
)

// TestApplyMovedReplace applies a moved block's instance whose prompt
// changed too: the record moves to the new address first, then is
// replaced there; the old address is gone from the state, the history of
// both generations is filed under the new one, and a failed replacement
// leaves the old generation at the new address, so the next plan is the
// replacement alone.
func TestApplyMovedReplace(t *testing.T) {
	before := appleConfig
	after := strings.Replace(strings.Replace(appleConfig, `image "a"`, `image "b"`, 1), "a red apple", "a green apple", 1) + `
moved {
  from = image.a
  to   = image.b
}
`
	for _, fail := range []bool{false, true} {
		name := "replaced"
		if fail {
			name = "replacement fails"
		}
		t.Run(name, func(t *testing.T) {
			svc, w := convergedDir(t, before)
			if fail {
				svc.scripts = map[string]fakeJob{"a green apple": {createErr: errors.New("refused for the test")}}
			}
			p := w.plan(after)
			c := p.Change(a("image.b"))
			if c == nil || c.Action != plans.Replace || c.PrevAddr != a("image.a") || p.Change(a("image.a")) != nil {
				t.Fatalf("plan %v; want image.b replaced, moved from image.a, and no change of image.a", actions(p))
			}
			res := w.apply(context.Background(), p)
			snap := w.snapshot()
			if snap.Resources[a("image.a")] != nil {
				t.Errorf("image.a is still in the state")
			}
			rec := snap.Resources[a("image.b")]
			if rec == nil {
				t.Fatal("image.b is not in the state")
			}
			hist, err := w.store.History(a("image.b"))
			if err != nil {
				t.Fatal(err)
			}
			if fail {
				if failedAddrs(res.Failed) != "image.b" || rec.GenerationID != "job-1" {
					t.Fatalf("failed %v, record %s: want image.b failed holding job-1", res.Failed, rec.GenerationID)
				}
				w.checkFiles(rec, "generated/image/a")
				if len(hist) != 1 {
					t.Errorf("history of image.b: %d entries, want job-1", len(hist))
				}
				next := w.plan(after)
				if c := next.Change(a("image.b")); c.Action != plans.Replace || !c.PrevAddr.IsZero() {
					t.Errorf("next plan: %s from %q, want a replacement alone", c.Action, c.PrevAddr)
				}
				return
			}
			if addrList(res.Generated) != "image.b" || len(res.Failed) > 0 || rec.GenerationID != "job-2" {
				t.Fatalf("generated %v, failed %v, record %s", res.Generated, res.Failed, rec.GenerationID)
			}
			w.checkFiles(rec, "generated/image/b")
			if w.exists("generated/image/a") {
				t.Error("generated/image/a is still there")
			}
			if len(hist) != 2 {
				t.Errorf("history of image.b: %d entries, want job-1 and job-2", len(hist))
			}
			w.checkNoChanges(after, "the plan after the moved replacement")
		})
	}
}
