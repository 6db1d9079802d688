package plans

import (
	"testing"
	"unsafe"

	"github.com/genform/genform/internal/addrs"
)

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

// TestChangeSize guards the packing of Change's one-byte fields: a plan
// holds one Change for every instance, and Go allocates 320 bytes for one
// of up to 320, 352 past that. Its two addresses each hold a module's
// (a pointer), which took it from 304 to 320: the same allocation.
func TestChangeSize(t *testing.T) {
	if n := unsafe.Sizeof(Change{}); n > 320 {
		t.Errorf("a Change is %d bytes, more than 320: keep its one-byte fields side by side", n)
	}
}
