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
