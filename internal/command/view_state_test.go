package command

import (
	"bytes"
	"encoding/json"
	"math/big"
	"sort"
	"testing"
	"time"

	"github.com/genform/genform/internal/formats/jsonstate"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/statefile"
)

// TestStateJSON pins the documented field names of the state document:
// scripts read them, so renaming one is a format change.
func TestStateJSON(t *testing.T) {
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	snap := &statefile.Snapshot{
		Meta: statefile.Meta{Lineage: "lin", Serial: 7},
		Resources: map[addrs.Instance]*statefile.Resource{mustAddr("image.a"): {
			Addr: mustAddr("image.a"), Endpoint: addrs.Text2Image, Fingerprint: "fp",
			Request:      json.RawMessage(`{"prompt":"p","config":{"image_number":1}}`),
			GenerationID: "g", CreationID: "c", Status: "succeed", Dir: "generated/image/a",
			Outputs:   []statefile.Output{{Index: 0, ID: "o", MediaURL: "m", Path: "generated/image/a/0.png", Size: 3, ModTime: when, SHA256: "h", ContentType: "image/png"}},
			CreatedAt: when, UpdatedAt: when,
		}},
		Intents:     map[addrs.Instance]*statefile.Intent{mustAddr("video.v"): {Addr: mustAddr("video.v"), Endpoint: addrs.Text2Video, GenerationID: "j", CreatedAt: when}},
		Protections: map[addrs.Instance]bool{mustAddr("image.a"): true},
	}
	var buf bytes.Buffer
	if err := jsonstate.Write(&buf, snap, "simulator", nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]any) []string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return ks
	}
	if diff := cmp.Diff([]string{"format_version", "history", "intents", "lineage", "resources", "serial", "service"}, keys(doc)); diff != "" {
		t.Errorf("document keys (-want +got):\n%s", diff)
	}
	res := doc["resources"].([]any)[0].(map[string]any)
	wantRes := []string{"address", "attributes", "created_at", "creation_id", "depends_on", "dir", "endpoint", "fingerprint",
		"generation_id", "kind", "outputs", "protected", "request", "resource", "status", "updated_at", "watermark_free"}
	if diff := cmp.Diff(wantRes, keys(res)); diff != "" {
		t.Errorf("resource keys (-want +got):\n%s", diff)
	}
	out := res["outputs"].([]any)[0].(map[string]any)
	wantOut := []string{"content_type", "id", "index", "media_url", "mtime", "path", "sha256", "size", "thumbnail_url"}
	if diff := cmp.Diff(wantOut, keys(out)); diff != "" {
		t.Errorf("output keys (-want +got):\n%s", diff)
	}
	if res["protected"] != true || res["attributes"].(map[string]any)["image_number"] != 1.0 || out["mtime"] != "2026-01-02T03:04:05Z" {
		t.Errorf("resource = %v", res)
	}
	it := doc["intents"].([]any)[0].(map[string]any)
	if it["address"] != "video.v" || it["generation_id"] != "j" {
		t.Errorf("intent = %v", it)
	}
}

func TestFormatCty(t *testing.T) {
	tests := []struct {
		name string
		v    cty.Value
		want string
		json string
	}{
		{"string", cty.StringVal("a \"b\""), `"a \"b\""`, `"a \"b\""`},
		{"number", cty.NumberVal(big.NewFloat(1.5)), "1.5", "1.5"},
		{"unknown", cty.UnknownVal(cty.String), "(known after apply)", "null"},
		{"null", cty.NullVal(cty.String), "null", "null"},
		{"empty list", cty.ListValEmpty(cty.String), "[]", "[]"},
		{"list", cty.TupleVal([]cty.Value{cty.StringVal("x"), cty.True}), "[\n  \"x\",\n  true,\n]", `["x",true]`},
		{"object", cty.ObjectVal(map[string]cty.Value{"b": cty.UnknownVal(cty.String), "long key": cty.NumberIntVal(2)}),
			"{\n  b          = (known after apply)\n  \"long key\" = 2\n}", `{"b":null,"long key":2}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := formatCty(tt.v, ""); got != tt.want {
				t.Errorf("formatCty = %q, want %q", got, tt.want)
			}
			b, err := json.Marshal(config.JSONValue(tt.v))
			if err != nil || string(b) != tt.json {
				t.Errorf("ctyToJSON = %s, %v; want %s", b, err, tt.json)
			}
		})
	}
}

func TestDotQuote(t *testing.T) {
	if got, want := dotQuote(`image.v["a\b"]`), `"image.v[\"a\\b\"]"`; got != want {
		t.Errorf("dotQuote = %s, want %s", got, want)
	}
}

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
