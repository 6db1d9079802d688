package jsonstate

import (
	"bytes"
	"encoding/json"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/statefile"
)

// TestStateJSON pins the documented field names of the state document:
// scripts read them, so renaming one is a format change.
func TestStateJSON(t *testing.T) {
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	snap := &statefile.Snapshot{
		Meta: statefile.Meta{Lineage: "lin", Serial: 7},
		Resources: map[addrs.Instance]*statefile.Resource{addrs.MustParseInstance("image.a"): {
			Addr: addrs.MustParseInstance("image.a"), Endpoint: addrs.Text2Image, Fingerprint: "fp",
			Request:      json.RawMessage(`{"prompt":"p","config":{"image_number":1}}`),
			GenerationID: "g", CreationID: "c", Status: "succeed", Dir: "generated/image/a",
			Outputs:   []statefile.Output{{Index: 0, ID: "o", MediaURL: "m", Path: "generated/image/a/0.png", Size: 3, ModTime: when, SHA256: "h", ContentType: "image/png"}},
			CreatedAt: when, UpdatedAt: when,
		}},
		Intents:     map[addrs.Instance]*statefile.Intent{addrs.MustParseInstance("video.v"): {Addr: addrs.MustParseInstance("video.v"), Endpoint: addrs.Text2Video, GenerationID: "j", CreatedAt: when}},
		Protections: map[addrs.Instance]bool{addrs.MustParseInstance("image.a"): true},
	}
	var buf bytes.Buffer
	if err := Write(&buf, snap, "simulator", nil, nil, nil); err != nil {
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
	wantOut := []string{"content_type", "id", "index", "media_url", "mtime", "path", "sha256", "size", "stored", "thumbnail_url"}
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
