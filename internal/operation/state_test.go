package operation

import (
	"encoding/json"
	"testing"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/statefile"
)

// A record whose stored JSON a damaged page changed still decodes (records
// carry no checksum); show -json names it instead of failing in the JSON
// encoder.
func TestDamagedJSONNamesTheRecord(t *testing.T) {
	rec := func(addr, detail string) *statefile.Resource {
		return &statefile.Resource{Addr: addrs.MustParseInstance(addr), Endpoint: addrs.Text2Image,
			Request: json.RawMessage(`{"prompt":"p"}`), Detail: json.RawMessage(detail)}
	}
	snap := &statefile.Snapshot{Resources: map[addrs.Instance]*statefile.Resource{
		addrs.MustParseInstance("image.a"):        rec("image.a", `{"status":"succeed"}`),
		addrs.MustParseInstance(`image.b["red"]`): rec(`image.b["red"]`, "{\"status\":\"succ\x00\x00\x00\"}"),
	}}
	err := DamagedJSON(snap, ".genform/state.db", false)
	want := `state file .genform/state.db: resource record image.b["red"] holds a creation detail that is not JSON, so the file is damaged; restore it from version control or a backup, or forget the resource with: genform state rm 'image.b["red"]'`
	if err == nil || err.Error() != want {
		t.Errorf("damagedJSON = %v\nwant %s", err, want)
	}
	err = DamagedJSON(snap, "PostgreSQL schema genform", true)
	want = `the state in PostgreSQL schema genform: resource record image.b["red"] holds a creation detail that is not JSON, so the state is damaged; restore it from a backup of the database, or forget the resource with: genform state rm 'image.b["red"]'`
	if err == nil || err.Error() != want {
		t.Errorf("damagedJSON of a state in a database = %v\nwant %s", err, want)
	}
	delete(snap.Resources, addrs.MustParseInstance(`image.b["red"]`))
	if err := DamagedJSON(snap, ".genform/state.db", false); err != nil {
		t.Errorf("damagedJSON of a sound state = %v", err)
	}
}

// TestSuggestAddr: an address is suggested by its parts: another key of
// the same resource, or a resource of the same kind whose name is close;
// never one that only shares the kind (image.c is not image.a).
func TestSuggestAddr(t *testing.T) {
	known := []addrs.Instance{
		addrs.MustParseInstance("image.a"),
		addrs.MustParseInstance("image.hero"),
		addrs.MustParseInstance("image.variant[0]"),
		addrs.MustParseInstance("image.variant[1]"),
		addrs.MustParseInstance(`video.clip["red"]`),
		addrs.MustParseInstance(`video.clip["blue"]`),
	}
	for given, want := range map[string]string{
		"image.c":            "",
		"image.heor":         "image.hero",
		"image.heroo":        "image.hero",
		"video.hero":         "",
		"image.variant[12]":  "image.variant[1]",
		"image.variant[7]":   "image.variant[0]",
		"image.varient[1]":   "image.variant[1]",
		"image.varient[9]":   "image.variant[0]",
		`video.clips["red"]`: `video.clip["red"]`,
	} {
		if got := suggestAddr(addrs.MustParseInstance(given), known); got != want {
			t.Errorf("suggestAddr(%s) = %q, want %q", given, got, want)
		}
	}
}
