package statefile

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// openNew creates a state file in a fresh directory and closes it when the
// test ends.
func openNew(t testing.TB) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), ".genform", "state.db"), Options{Create: true, Command: "test"})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// reopen closes s and opens its file again, as the next genform command
// would.
func reopen(t testing.TB, s *Store) *Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s2, err := Open(s.Path(), Options{})
	if err != nil {
		t.Fatalf("reopening: %v", err)
	}
	t.Cleanup(func() { s2.Close() })
	return s2
}

// fixedClock makes record timestamps predictable.
func fixedClock(s *Store, t time.Time) { s.now = func() time.Time { return t } }

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// sampleResource is a resource as apply records it after a success: a real
// request and creation detail, and n downloaded outputs.
func sampleResource(addr string, n int) *Resource {
	r := &Resource{
		Addr:         addr,
		Kind:         "image",
		Endpoint:     "/v1/jobs/text2image",
		Fingerprint:  "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		Request:      json.RawMessage(`{"prompt":"a lighthouse at dusk, cinematic","negative_prompt":"blurry","config":{"image_number":4,"aspect_ratio":"16:9","resolution":1080},"settings":{"seed":42,"is_public":false}}`),
		GenerationID: "gen-01JD8Z3W8K2Q",
		CreationID:   "cr-01JD8Z3W8K2Q",
		Status:       "succeed",
		Dir:          "generated/image/" + addr,
		Deps:         []string{"image.base"},
		CreatedAt:    t0,
		UpdatedAt:    t0.Add(time.Minute),
	}
	detail := map[string]any{
		"creation_id": r.CreationID, "user_id": "u-1", "username": "someone", "type": "image", "input_type": "text",
		"prompt": "a lighthouse at dusk, cinematic", "negative_prompt": "blurry", "status": "succeed",
		"create_time": "2026-11-21T10:00:00Z", "update_time": "2026-11-21T10:00:09Z",
		"settings": map[string]any{"fps": 0, "width": 1920, "height": 1080},
		"commits":  map[string]any{"like_count": 0, "is_like": false, "collects_count": 0, "is_collect": false},
	}
	var outs []any
	for i := range n {
		o := Output{
			Index:        i,
			ID:           fmt.Sprintf("out-%d", i),
			MediaURL:     fmt.Sprintf("https://cdn.example.com/media/%s/%d.png", r.CreationID, i),
			ThumbnailURL: fmt.Sprintf("https://cdn.example.com/thumb/%s/%d.png", r.CreationID, i),
			Path:         fmt.Sprintf("%s/%d.png", r.Dir, i),
			Size:         1<<20 + int64(i),
			ModTime:      t0.Add(time.Duration(i) * time.Second).Add(123456789),
			SHA256:       "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
			ContentType:  "image/png",
		}
		r.Outputs = append(r.Outputs, o)
		outs = append(outs, map[string]any{"id": o.ID, "media_url": o.MediaURL, "thumbnail_url": o.ThumbnailURL})
	}
	detail["outputs"] = outs
	r.Detail, _ = json.Marshal(detail)
	return r
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
