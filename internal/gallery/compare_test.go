package gallery

import (
	"encoding/json"
	"testing"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/secrets"
	"github.com/genform/genform/statefile"
)

func snapshot(recs ...*statefile.Resource) *statefile.Snapshot {
	s := &statefile.Snapshot{Resources: map[addrs.Instance]*statefile.Resource{}}
	for _, r := range recs {
		s.Resources[r.Addr] = r
	}
	return s
}

func rec(addr, prompt string, shas ...string) *statefile.Resource {
	r := &statefile.Resource{Addr: addrs.MustParseInstance(addr), Endpoint: addrs.Text2Image, Status: "succeed",
		Request: json.RawMessage(`{"prompt":"` + prompt + `","settings":{"seed":7}}`), GenerationID: "g-" + prompt}
	for i, s := range shas {
		r.Outputs = append(r.Outputs, statefile.Output{Index: i, SHA256: s, Path: "generated/x/" + s + ".png", ContentType: "image/png"})
	}
	return r
}

// TestCompare: instances are compared by their outputs' sha256s in
// order, whatever else changed; new, changed and deleted are told apart
// and counted; the prompt's diff is made where both sides have one.
func TestCompare(t *testing.T) {
	base := snapshot(
		rec("image.same", "one", "a1"),
		rec("image.reworded", "two", "b1"), // same bytes, another prompt: not shown
		rec("image.changed", "a lighthouse at dusk", "c1", "c2"),
		rec("image.reordered", "four", "d1", "d2"),
		rec("image.gone", "five", "e1"),
	)
	selected := snapshot(
		rec("image.same", "one", "a1"),
		rec("image.reworded", "two again", "b1"),
		rec("image.changed", "a lighthouse at dawn", "c1", "c3", "c4"),
		rec("image.reordered", "four", "d2", "d1"),
		rec("image.fresh", "six", "f1"),
	)
	c := Compare("default", "pr-1", base, selected, secrets.NewHider(nil))
	var got []string
	for _, d := range c.Differences {
		got = append(got, d.Addr+" "+d.Change)
	}
	want := []string{"image.changed changed", "image.fresh new", "image.gone deleted", "image.reordered changed"}
	if len(got) != len(want) {
		t.Fatalf("differences %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("difference %d is %q, want %q", i, got[i], want[i])
		}
	}
	if c.New != 1 || c.Changed != 2 || c.Deleted != 1 {
		t.Errorf("counts %d new, %d changed, %d deleted", c.New, c.Changed, c.Deleted)
	}
	ch := c.Differences[0]
	if len(ch.Before.Pictures) != 2 || len(ch.After.Pictures) != 3 || ch.After.Pictures[2].Label() != "#2" || ch.After.Seed != "7" {
		t.Errorf("image.changed: %+v, %+v", ch.Before, ch.After)
	}
	if len(ch.PromptDiff) != 3 || ch.PromptDiff[1].Text != "dusk" || ch.PromptDiff[2].Text != "dawn" {
		t.Errorf("prompt diff %+v", ch.PromptDiff)
	}
	if c.Differences[1].Before != nil || c.Differences[2].After != nil || c.Differences[2].Now() != c.Differences[2].Before {
		t.Error("a new instance has no before, a deleted one no after")
	}
}
