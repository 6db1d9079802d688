package command

import (
	"encoding/json"
	"testing"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/statefile"
)

// mustAddr parses an instance address for a test.
func mustAddr(s string) addrs.Instance {
	a, err := addrs.ParseInstance(s)
	if err != nil {
		panic(err)
	}
	return a
}

// A record whose stored JSON a damaged page changed still decodes (records
// carry no checksum); show -json names it instead of failing in the JSON
// encoder.
func TestDamagedJSONNamesTheRecord(t *testing.T) {
	rec := func(addr, detail string) *statefile.Resource {
		return &statefile.Resource{Addr: mustAddr(addr), Endpoint: addrs.Text2Image,
			Request: json.RawMessage(`{"prompt":"p"}`), Detail: json.RawMessage(detail)}
	}
	snap := &statefile.Snapshot{Resources: map[addrs.Instance]*statefile.Resource{
		mustAddr("image.a"):        rec("image.a", `{"status":"succeed"}`),
		mustAddr(`image.b["red"]`): rec(`image.b["red"]`, "{\"status\":\"succ\x00\x00\x00\"}"),
	}}
	err := damagedJSON(snap, ".genform/state.db")
	want := `state file .genform/state.db: resource record image.b["red"] holds a creation detail that is not JSON, so the file is damaged; restore it from version control or a backup, or forget the resource with: genform state rm 'image.b["red"]'`
	if err == nil || err.Error() != want {
		t.Errorf("damagedJSON = %v\nwant %s", err, want)
	}
	delete(snap.Resources, mustAddr(`image.b["red"]`))
	if err := damagedJSON(snap, ".genform/state.db"); err != nil {
		t.Errorf("damagedJSON of a sound state = %v", err)
	}
}
