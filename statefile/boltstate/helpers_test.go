package boltstate

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/statefile"
)

// The names of statefile's layout these tests read and write past the
// store, as its documentation draws them.
var (
	bucketMeta       = []byte("meta")
	bucketResources  = []byte("resources")
	bucketHistory    = []byte("history")
	keySchemaVersion = []byte("schema_version")
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
func intent(addr, generationID string) *statefile.Intent {
	i := a(addr)
	return &statefile.Intent{Addr: i, Endpoint: endpointFor(i), GenerationID: generationID}
}

// openNew creates a state file in a fresh directory and closes it when the
// test ends.
func openNew(t testing.TB) *statefile.Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), ".genform", "state.db"), statefile.Options{Create: true, Command: "test"})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// reopen closes s and opens its file again, as the next genform command
// would.
func reopen(t testing.TB, s *statefile.Store) *statefile.Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s2, err := Open(s.Path(), statefile.Options{})
	if err != nil {
		t.Fatalf("reopening: %v", err)
	}
	t.Cleanup(func() { s2.Close() })
	return s2
}

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// sampleResource is a resource as apply records it after a success: a real
// request and creation detail, and n downloaded outputs.
func sampleResource(addr string, n int) *statefile.Resource {
	r := &statefile.Resource{
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
		o := statefile.Output{
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

// fill records n resources with four outputs each, as a state after an
// apply of n images would hold.
func fill(b testing.TB, s *statefile.Store, n int) {
	b.Helper()
	const batch = 2000
	for start := 0; start < n; start += batch {
		err := s.Update(func(tx *statefile.Tx) error {
			for i := start; i < min(start+batch, n); i++ {
				if err := tx.Record(sampleResource(fmt.Sprintf("image.hero[%d]", i), 4)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// currentFile makes a state file as this build writes it, with a resource.
func currentFile(t *testing.T) (path string, meta statefile.Meta) {
	t.Helper()
	s := openNew(t)
	if err := s.Update(func(tx *statefile.Tx) error { return tx.Record(sampleResource("image.hero", 2)) }); err != nil {
		t.Fatal(err)
	}
	m, err := s.Meta()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return s.Path(), m
}

// writerOnCurrentFile makes a state file as currentFile does and opens it
// for a writer (genform apply), which is closed when the test ends.
func writerOnCurrentFile(t *testing.T) (path string, w *statefile.Store) {
	t.Helper()
	path, _ = currentFile(t)
	w, err := Open(path, statefile.Options{Command: "apply"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return path, w
}

// filledFile makes a state file of n resources (see fill) and closes it,
// so that a test or benchmark can open it as it needs.
func filledFile(tb testing.TB, n int) (path string) {
	tb.Helper()
	s := openNew(tb)
	fill(tb, s, n)
	if err := s.Close(); err != nil {
		tb.Fatal(err)
	}
	return s.Path()
}

// openBackend opens the file at path as bbolt's backend alone, without a
// store over it, and closes it when the test ends.
func openBackend(tb testing.TB, path string, opts statefile.Options) *backend {
	tb.Helper()
	be, _, err := open(path, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { be.Close() })
	return be
}

// waitingWriter opens path in another goroutine as a writer that waits up
// to a minute for the lock, and closes it as soon as it has it; the
// channel gives Open's error.
func waitingWriter(path string) <-chan error {
	done := make(chan error, 1)
	go func() {
		w, err := Open(path, statefile.Options{Command: "apply", LockTimeout: time.Minute})
		if err == nil {
			w.Close()
		}
		done <- err
	}()
	return done
}

// resourceNames lists the addresses of the resources s holds, in order.
func resourceNames(t *testing.T, s *statefile.Store) []string {
	t.Helper()
	snap, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for addr := range snap.Resources {
		names = append(names, addr.String())
	}
	slices.Sort(names)
	return names
}

func assertAddrs(t *testing.T, s *statefile.Store, want ...string) {
	t.Helper()
	got := resourceNames(t, s)
	if diff := cmp.Diff(want, got, cmpSorted); diff != "" {
		t.Errorf("resources in state (-want +got):\n%s", diff)
	}
}

var cmpSorted = cmpopts.SortSlices(func(a, b string) bool { return a < b })
