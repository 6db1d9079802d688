package reconcile

import (
	"strings"
	"testing"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// TestMovedPlans plans the moves moved blocks make of a state: the change
// of the address moved to carries the address moved from, is a move when
// nothing else changes, what the request needs when it changed, and no
// record is deleted for a move.
func TestMovedPlans(t *testing.T) {
	const before = `
image "a" {
  prompt       = "a red apple"
  image_number = 1
}
image "pair" {
  count        = 2
  prompt       = "twin ${count.index}"
  image_number = 1
}
image "keep" {
  prompt       = "a pear"
  image_number = 1
}
`
	tests := []struct {
		name  string
		after string
		want  map[string]string // address: action, and "<- previous" when moved
	}{
		{"rename", `
image "b" {
  prompt       = "a red apple"
  image_number = 1
}
moved {
  from = image.a
  to   = image.b
}`, map[string]string{"image.b": "move <- image.a", "image.pair[0]": "delete", "image.pair[1]": "delete", "image.keep": "delete"}},
		{"rename and a new prompt", `
image "b" {
  prompt       = "a green apple"
  image_number = 1
}
moved {
  from = image.a
  to   = image.b
}`, map[string]string{"image.b": "replace <- image.a", "image.pair[0]": "delete", "image.pair[1]": "delete", "image.keep": "delete"}},
		{"count to for_each, and a chain", `
image "keyed" {
  for_each     = { x = 0, y = 1 }
  prompt       = "twin ${each.value}"
  image_number = 1
}
image "c" {
  prompt       = "a red apple"
  image_number = 1
}
image "keep" {
  prompt       = "a pear"
  image_number = 1
}
moved {
  from = image.pair[0]
  to   = image.keyed["x"]
}
moved {
  from = image.pair[1]
  to   = image.keyed["y"]
}
moved {
  from = image.a
  to   = image.b
}
moved {
  from = image.b
  to   = image.c
}`, map[string]string{`image.keyed["x"]`: `move <- image.pair[0]`, `image.keyed["y"]`: `move <- image.pair[1]`, "image.c": "move <- image.a", "image.keep": "no-op"}},
		{"whole resource, keys kept", `
image "duo" {
  count        = 2
  prompt       = "twin ${count.index}"
  image_number = 1
}
image "a" {
  prompt       = "a red apple"
  image_number = 1
}
image "keep" {
  prompt       = "a pear"
  image_number = 1
}
moved {
  from = image.pair
  to   = image.duo
}`, map[string]string{"image.duo[0]": "move <- image.pair[0]", "image.duo[1]": "move <- image.pair[1]", "image.a": "no-op", "image.keep": "no-op"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.applied(before)
			p, diags := f.plan(f.write(tt.after))
			if diags != "" {
				t.Fatal(diags)
			}
			got := map[string]string{}
			for _, c := range p.Changes {
				s := c.Action.String()
				if !c.PrevAddr.IsZero() {
					s += " <- " + c.PrevAddr.String()
				}
				got[c.Addr.String()] = s
				if c.Action == plans.Move && (c.Reason == nil || c.Reason.Code != plans.ReasonMoved) {
					t.Errorf("%s: reason %v, want moved", c.Addr, c.Reason)
				}
			}
			for a, w := range tt.want {
				if got[a] != w {
					t.Errorf("%s: %q, want %q", a, got[a], w)
				}
			}
			if len(got) != len(tt.want) {
				t.Errorf("changes %v, want %v", got, tt.want)
			}
		})
	}
}

// TestMovedRefusals refuses the moves a plan cannot make: to an address
// the state holds, two records to one address, a record with an
// unfinished submission, and to an instance the configuration does not
// make (a whole resource moved to one with fewer keys).
func TestMovedRefusals(t *testing.T) {
	const before = `
image "a" {
  prompt       = "a red apple"
  image_number = 1
}
image "b" {
  prompt       = "a pear"
  image_number = 1
}
image "pair" {
  count        = 2
  prompt       = "twin ${count.index}"
  image_number = 1
}
`
	tests := []struct {
		name, after, want string
		intent            string
	}{
		{"target held", `
image "b" {
  prompt       = "a pear"
  image_number = 1
}
image "pair" {
  count        = 2
  prompt       = "twin ${count.index}"
  image_number = 1
}
moved {
  from = image.a
  to   = image.b
}`, "Moved to an address the state holds: The moved block moves image.a to image.b, but the state already holds a generation at image.b", ""},
		{"fewer keys", `
image "a" {
  prompt       = "a red apple"
  image_number = 1
}
image "b" {
  prompt       = "a pear"
  image_number = 1
}
image "duo" {
  count        = 1
  prompt       = "twin ${count.index}"
  image_number = 1
}
moved {
  from = image.pair
  to   = image.duo
}`, "Moved to an undeclared address: The moved block moves image.pair[1] to image.duo[1], which the configuration does not make", ""},
		{"unfinished submission", `
image "c" {
  prompt       = "a red apple"
  image_number = 1
}
image "b" {
  prompt       = "a pear"
  image_number = 1
}
image "pair" {
  count        = 2
  prompt       = "twin ${count.index}"
  image_number = 1
}
moved {
  from = image.a
  to   = image.c
}`, "Moved instance has an unfinished submission: The moved block moves image.a to image.c, but an interrupted apply left a submission of image.a unfinished (job job-9)", "image.a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.applied(before)
			if tt.intent != "" {
				a := addrs.MustParseInstance(tt.intent)
				rec := f.state.Resources[a]
				f.state.Intents[a] = &statefile.Intent{Addr: a, Endpoint: rec.Endpoint, Fingerprint: "other", GenerationID: "job-9"}
			}
			_, diags := f.plan(f.write(tt.after))
			if !strings.Contains(diags, tt.want) {
				t.Fatalf("diagnostics %q, want %q", diags, tt.want)
			}
		})
	}
}

// TestMovedNoOpWithoutState plans a configuration whose moved blocks name
// nothing the state holds: the blocks are left in place after the move,
// and change nothing.
func TestMovedNoOpWithoutState(t *testing.T) {
	f := newFixture(t)
	const cfg = `
image "b" {
  prompt       = "a red apple"
  image_number = 1
}
moved {
  from = image.a
  to   = image.b
}`
	f.applied(cfg)
	p, diags := f.plan(f.write(cfg))
	if diags != "" || p.HasChanges() {
		t.Fatalf("a moved block left in place changes the plan: %v, %s", actions(p), diags)
	}
}
