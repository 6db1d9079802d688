package reconcile

import (
	"strings"
	"testing"

	"github.com/genform/genform/internal/addrs"
)

// TestNames checks the names the JSON documents and the saved plan file
// spell actions, reasons and local changes with: each reads back as
// itself, no two are alike, and an unknown one is an error.
func TestNames(t *testing.T) {
	type named struct {
		name  string
		parse func(string) (any, error)
		value any
	}
	var all []named
	for _, act := range Actions {
		all = append(all, named{act.String(), func(s string) (any, error) { return ParseAction(s) }, act})
	}
	for i := range declaredConsts(t, "ReasonCode") {
		c := ReasonCode(i)
		all = append(all, named{c.String(), func(s string) (any, error) { return ParseReasonCode(s) }, c})
	}
	for i := range declaredConsts(t, "LocalWhat") {
		w := LocalWhat(i + 1)
		all = append(all, named{w.String(), func(s string) (any, error) { return ParseLocalWhat(s) }, w})
	}
	seen := map[string]any{}
	for _, n := range all {
		t.Run(n.name, func(t *testing.T) {
			got, err := n.parse(n.name)
			if err != nil || got != n.value {
				t.Errorf("parsing %q: %v, %v; want %v", n.name, got, err, n.value)
			}
			if prev, ok := seen[n.name]; ok && prev != n.value && n.name != "" {
				t.Errorf("%q names both %v and %v", n.name, prev, n.value)
			}
			seen[n.name] = n.value
		})
	}
	if len(Actions) != int(Delete)+1 {
		t.Errorf("Actions lists %d actions, want every one of the %d", len(Actions), int(Delete)+1)
	}
	for _, bad := range []string{"", "nope"} {
		if _, err := ParseLocalWhat(bad); err == nil {
			t.Errorf("ParseLocalWhat(%q) is not an error", bad)
		}
	}
	if _, err := ParseAction("nope"); err == nil {
		t.Error(`ParseAction("nope") is not an error`)
	}
	if _, err := ParseReasonCode("nope"); err == nil {
		t.Error(`ParseReasonCode("nope") is not an error`)
	}
	// A value past the names prints as what it is, never as "".
	for got, want := range map[string]string{
		Action(99).String():     "Action(99)",
		ReasonCode(99).String(): "ReasonCode(99)",
		LocalWhat(0).String():   "LocalWhat(0)",
		LocalWhat(99).String():  "LocalWhat(99)",
		Phase(0).String():       "Phase(0)",
		Phase(99).String():      "Phase(99)",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	phases := map[string]bool{}
	for p := PhaseSubmitting; p <= PhaseWarning; p++ {
		if s := p.String(); s == "" || phases[s] || strings.HasPrefix(s, "Phase(") {
			t.Errorf("phase %d is named %q", p, s)
		}
		phases[p.String()] = true
	}
}

// TestPlanSummary checks the counts a plan's footer shows: generations,
// the images and videos they yield, and every other action.
func TestPlanSummary(t *testing.T) {
	img, vid := addrs.Resource{Kind: addrs.Image, Name: "i"}, addrs.Resource{Kind: addrs.Video, Name: "v"}
	c := func(act Action, r addrs.Resource, media int) *Change {
		return &Change{Addr: r.Instance(addrs.NoKey), Action: act, Media: media}
	}
	tests := []struct {
		name        string
		changes     []*Change
		want        Summary
		generations int
		hasChanges  bool
	}{
		{name: "nothing to do", changes: []*Change{c(NoOp, img, 4), c(NoOp, vid, 1)}, want: Summary{NoOp: 2}},
		{name: "every action",
			changes: []*Change{
				c(Create, img, 4), c(Replace, img, 2), c(Replace, vid, 1), c(Update, img, 4),
				c(Move, img, 4), c(Resume, vid, 1), c(Delete, img, 0), c(NoOp, vid, 1),
			},
			want:        Summary{Generate: 3, Images: 6, Videos: 1, Redownload: 1, Move: 1, Resume: 1, Delete: 1, NoOp: 1},
			generations: 3, hasChanges: true},
		{name: "a delete alone", changes: []*Change{c(Delete, vid, 0)}, want: Summary{Delete: 1}, hasChanges: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &Plan{Changes: tc.changes}
			if got := p.Summary(); got != tc.want {
				t.Errorf("summary %+v, want %+v", got, tc.want)
			}
			if got := p.Generations(); got != tc.generations {
				t.Errorf("%d generations, want %d", got, tc.generations)
			}
			if got := p.HasChanges(); got != tc.hasChanges {
				t.Errorf("HasChanges() = %v", got)
			}
		})
	}
}
