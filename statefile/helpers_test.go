package statefile

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/genform/genform/internal/addrs"
)

// a parses an instance address, and panics on one that does not parse: it
// is for addresses written in tests.
func a(s string) addrs.Instance {
	addr, err := addrs.ParseInstance(s)
	if err != nil {
		panic(err)
	}
	return addr
}

// dep parses a resource address (no instance key), for Deps.
func dep(s string) addrs.Resource {
	addr := a(s)
	if !addr.Key.IsZero() {
		panic(fmt.Sprintf("%s is not a resource address", s))
	}
	return addr.Resource
}

// endpointFor is the endpoint a test records for addr: text-to-image for an
// image, text-to-video for a video.
func endpointFor(addr addrs.Instance) addrs.Endpoint {
	if addr.Resource.Kind == addrs.Video {
		return addrs.Text2Video
	}
	return addrs.Text2Image
}

// intent is the intent apply records before it submits addr.
func intent(addr, generationID string) *Intent {
	i := a(addr)
	return &Intent{Addr: i, Endpoint: endpointFor(i), GenerationID: generationID}
}

// key is the key a record of addr is filed under.
func key(addr addrs.Instance) []byte { return []byte(addr.String()) }

// openNew creates a state in a new memory storage (see memBackend) and
// closes it when the test ends.
func openNew(t testing.TB) *Store {
	t.Helper()
	s, err := openMem(newState(t), Options{Create: true, Command: "test"})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// reopen closes s and opens its storage again, as the next genform
// command would.
func reopen(t testing.TB, s *Store) *Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s2, err := openMem(memOf(s), Options{})
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
		Addr:         a(addr),
		Endpoint:     endpointFor(a(addr)),
		Fingerprint:  "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		Request:      json.RawMessage(`{"prompt":"a lighthouse at dusk, cinematic","negative_prompt":"blurry","config":{"image_number":4,"aspect_ratio":"16:9","resolution":1080},"settings":{"seed":42,"is_public":false}}`),
		GenerationID: "gen-01JD8Z3W8K2Q",
		CreationID:   "cr-01JD8Z3W8K2Q",
		Status:       "succeed",
		Dir:          "generated/" + a(addr).Resource.Kind.String() + "/" + addr,
		Deps:         []addrs.Resource{dep("image.base")},
		CreatedAt:    t0,
		UpdatedAt:    t0.Add(time.Minute),
	}
	detail := map[string]any{
		"creation_id": r.CreationID, "user_id": "u-1", "username": "someone", "type": r.Addr.Resource.Kind.String(), "input_type": "text",
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

// tamper returns a copy of the record rec with its string field num set to
// val (left out when val is ""), and every other field as it was: a record
// as a damaged or hand-edited file would hold it.
func tamper(rec []byte, num int, val string) []byte {
	e := encoder{}
	r := newReader(rec, string(rec))
	done := false
	for start := 0; r.next(); start = r.off {
		if r.f.num != num {
			e.b = append(e.b, rec[start:r.off]...)
			continue
		}
		if !done {
			e.string(num, val)
			done = true
		}
	}
	if r.err != nil {
		panic(r.err)
	}
	if !done {
		e.string(num, val)
	}
	return e.b
}

// fieldOf returns the string field num of the record rec as a decoder
// reads it (the last one, when there are several), or "".
func fieldOf(rec []byte, num int) string {
	r := newReader(rec, string(rec))
	v := ""
	for r.next() {
		if r.f.num == num && r.f.wire == wireBytes {
			v = r.str[r.f.start:r.f.end]
		}
	}
	return v
}

// rawPut files value under key in bucket of s, past the store's checks,
// as a damaged or hand-edited file would hold it.
func rawPut(t testing.TB, s *Store, bucket []byte, key string, value []byte) {
	t.Helper()
	err := s.be.Update(func(tx RawTx) error {
		b, err := tx.Bucket(bucket)
		if err != nil {
			return err
		}
		return b.Put([]byte(key), value)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// serial returns the state's serial.
func serial(t testing.TB, s *Store) uint64 {
	t.Helper()
	m, err := s.Meta()
	if err != nil {
		t.Fatal(err)
	}
	return m.Serial
}
