package statefile

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/addrs"
)

// TestDocumentCoversRecords fails when a record gains a field the state
// document does not carry: a push would silently drop it. Add the field
// to the document (docResource, DocResource.resource and their kin), then
// here.
func TestDocumentCoversRecords(t *testing.T) {
	for _, c := range []struct {
		typ  any
		have []string
	}{
		{Resource{}, []string{"Addr", "Endpoint", "Fingerprint", "Request", "GenerationID", "CreationID", "Handle", "Version", "Usage", "Status", "Error", "Detail", "Outputs", "Dir", "WatermarkFree", "Deps", "CreatedAt", "UpdatedAt", "Serial", "Failure"}},
		{Failure{}, []string{"Endpoint", "Fingerprint", "Request", "GenerationID", "Error", "Refused", "At"}},
		{Output{}, []string{"Index", "ID", "MediaURL", "ThumbnailURL", "Path", "Size", "ModTime", "SHA256", "ContentType", "Stored"}},
		{Intent{}, []string{"Addr", "Endpoint", "Fingerprint", "Request", "GenerationID", "Handle", "CreatedAt", "SubmittedAt", "Answer"}},
		{Answer{}, []string{"Version", "Usage", "Detail", "Outputs"}},
		{Protection{}, []string{"Addr", "PreventDestroy"}},
		{Meta{}, []string{"SchemaVersion", "Lineage", "Serial", "Service", "RunStart"}},
	} {
		typ := reflect.TypeOf(c.typ)
		for i := range typ.NumField() {
			if name := typ.Field(i).Name; !slices.Contains(c.have, name) {
				t.Errorf("%s.%s is not in the state document: genform state push would drop it", typ.Name(), name)
			}
		}
	}
}

// TestDocumentWritesBackTheBytes checks that a state pulled as its
// document and pushed back is the very bytes it was: every record, the
// history and the meta, the serial aside, and values kept with their
// white space and HTML characters.
func TestDocumentWritesBackTheBytes(t *testing.T) {
	s := openNew(t)
	at := time.Date(2026, 11, 24, 9, 30, 1, 123456789, time.UTC)
	s.now = func() time.Time { return at }
	hero := &Resource{
		Addr: a("image.hero"), Endpoint: addrs.Text2Image, Fingerprint: "sha256:1",
		Request:      json.RawMessage(`{"prompt":"a <lighthouse> & \u00e9","seed":-1}`),
		GenerationID: "gen-1", CreationID: "cr-1", Status: "succeed", Error: "",
		Detail:        json.RawMessage("{\n  \"status\": \"succeed\"\n}"),
		Dir:           "generated/image/hero",
		WatermarkFree: true,
		Deps:          []addrs.Resource{dep("image.base")},
		Outputs: []Output{{Index: 0, ID: "o1", MediaURL: "https://cdn.example.com/1.png", ThumbnailURL: "https://cdn.example.com/1t.png",
			Path: "generated/image/hero/0.png", Size: 42, ModTime: at, SHA256: strings.Repeat("cd", 32), ContentType: "image/png", Stored: true}},
		Failure: &Failure{Endpoint: addrs.Text2Image, Fingerprint: "sha256:2", Request: json.RawMessage(`{"prompt":"x"}`), GenerationID: "gen-2", Error: "refused", Refused: true, At: at},
	}
	clip := &Resource{Addr: a(`video.clip["a b"]`), Endpoint: addrs.Image2Video, Fingerprint: "sha256:3", Request: json.RawMessage(`{}`),
		GenerationID: "gen-3", Status: "failed", Error: "timeout", Dir: "generated/video/clip"}
	live := &Resource{Addr: a("image.live"), Endpoint: addrs.ModelEndpoint("replicate", "black-forest-labs/flux-schnell", addrs.Image),
		Fingerprint: "sha256:5", Request: json.RawMessage(`{"prompt":"p"}`), GenerationID: "p1", CreationID: "p1",
		Handle: json.RawMessage(`{"get":"https://api.replicate.com/v1/predictions/p1"}`), Version: "v9",
		Usage: json.RawMessage(`{"predict_time":1.25}`), Status: "succeed", Dir: "generated/image/live"}
	err := s.Update(func(tx *Tx) error {
		for _, r := range []*Resource{hero, clip, live} {
			if err := tx.Record(r); err != nil {
				return err
			}
		}
		if err := tx.RecordIntent(&Intent{Addr: a("video.next"), Endpoint: addrs.Text2Video, Fingerprint: "sha256:4", Request: json.RawMessage(`{"prompt":"n"}`), GenerationID: "j", SubmittedAt: at}); err != nil {
			return err
		}
		if err := tx.RecordIntent(&Intent{Addr: a("image.queued"), Endpoint: addrs.ModelEndpoint("fal", "fal-ai/flux/dev", addrs.Image), Fingerprint: "sha256:6", Request: json.RawMessage(`{"prompt":"q"}`), GenerationID: "r1", Handle: json.RawMessage(`{"status_url":"https://queue.fal.run/fal-ai/flux/requests/r1/status"}`), SubmittedAt: at}); err != nil {
			return err
		}
		if err := tx.RecordIntent(&Intent{Addr: a("image.answered"), Endpoint: addrs.ModelEndpoint("openai", "gpt-image-2", addrs.Image), Fingerprint: "sha256:7",
			Request: json.RawMessage(`{"prompt":"o"}`), GenerationID: "img-1", Handle: json.RawMessage(`{"created":1,"images":1}`), SubmittedAt: at,
			Answer: &Answer{Usage: json.RawMessage(`{"total_tokens":9}`), Detail: json.RawMessage(`{"created":1,"data":[{}]}`),
				Outputs: []Output{{Index: 0, SHA256: strings.Repeat("ef", 32), Size: 7, ContentType: "image/png"}}}}); err != nil {
			return err
		}
		if err := tx.Protect(a("image.hero"), true); err != nil {
			return err
		}
		return tx.SetService("simulator")
	})
	if err != nil {
		t.Fatal(err)
	}
	want, err := s.dump()
	if err != nil {
		t.Fatal(err)
	}
	text := documentText(t, s)
	if !strings.Contains(text.String(), `"prompt": "a <lighthouse> & \u00e9"`) {
		t.Errorf("the request is not shown as JSON, as it was sent:\n%s", text.String())
	}
	back, err := ReadDocument(text)
	if err != nil {
		t.Fatal(err)
	}
	got, err := back.raw()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range bucketNames {
		w, g := want.data[string(name)], got.data[string(name)]
		if len(w) != len(g) {
			t.Errorf("bucket %s: %d keys pushed back, want %d", name, len(g), len(w))
			continue
		}
		for i := range w {
			if !bytes.Equal(w[i].k, g[i].k) || !bytes.Equal(w[i].v, g[i].v) {
				t.Errorf("bucket %s, key %q: pushed back %q under %q, want %q", name, w[i].k, g[i].v, g[i].k, w[i].v)
			}
		}
	}
}

// TestReadDocumentRefuses checks that a document that is not one, or
// holds a record the state could not read, is refused whole, saying what.
func TestReadDocumentRefuses(t *testing.T) {
	s := openNew(t)
	good := documentText(t, s).String()
	res := func(r string) string {
		return strings.Replace(good, `"resources": []`, `"resources": [`+r+`]`, 1)
	}
	for _, c := range []struct{ name, doc, want string }{
		{"empty", "", "it is empty"},
		{"not JSON", "SQLite format 3", "not a state document"},
		{"unknown field", strings.Replace(good, `"lineage"`, `"extra": 1, "lineage"`, 1), `unknown field "extra"`},
		{"format", strings.Replace(good, `"format_version": "1"`, `"format_version": "9"`, 1), `format_version is "9"`},
		{"two documents", good + good, "more than one"},
		{"bad address", res(`{"address": "image", "endpoint": "text2image", "fingerprint": "f"}`), `resource 0 (image): "image" is not a resource address`},
		{"wrong endpoint", res(`{"address": "image.a", "endpoint": "text2video", "fingerprint": "f"}`), `endpoint "text2video"`},
		{"outside", res(`{"address": "image.a", "endpoint": "/v1/jobs/text2image", "fingerprint": "f", "dir": "../x"}`), "leads outside"},
		{"twice", res(`{"address": "image.a", "endpoint": "/v1/jobs/text2image", "fingerprint": "f"}, {"address": "image.a", "endpoint": "/v1/jobs/text2image", "fingerprint": "f"}`), "resource 1 (image.a): it is listed twice"},
		{"bad time", res(`{"address": "image.a", "endpoint": "/v1/jobs/text2image", "fingerprint": "f", "created_at": "yesterday"}`), `created_at "yesterday"`},
		{"bad request", res(`{"address": "image.a", "endpoint": "/v1/jobs/text2image", "fingerprint": "f", "request": "{not json"}`), "not JSON"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := ReadDocument(strings.NewReader(c.doc))
			if err == nil {
				_, err = s.Push(d, "state.json", false)
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// documentText is the document of s as WriteDocument writes it.
func documentText(t *testing.T, s *Store) *bytes.Buffer {
	t.Helper()
	doc, err := s.Document()
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := WriteDocument(&text, doc); err != nil {
		t.Fatal(err)
	}
	return &text
}
