package statefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/genform/genform/internal/addrs"
)

func TestOpenCreatesPrivateFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".genform", "state.db")
	s, err := Open(path, Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode().Perm(); got != 0o600 {
		t.Errorf("state file mode = %v, want 0600", got)
	}
	st, err = os.Stat(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode().Perm(); got != 0o700 {
		t.Errorf("state directory mode = %v, want 0700", got)
	}
	m, err := s.Meta()
	if err != nil {
		t.Fatal(err)
	}
	if m.SchemaVersion != SchemaVersion || m.Serial != 0 {
		t.Errorf("new file meta = %+v, want schema %d serial 0", m, SchemaVersion)
	}
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(m.Lineage) {
		t.Errorf("lineage %q is not a random UUID", m.Lineage)
	}
	if s.Path() != path {
		t.Errorf("Path() = %q, want %q", s.Path(), path)
	}
}

func TestOpenWithoutCreate(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, path string)
	}{
		{"missing file", func(t *testing.T, path string) {}},
		{"missing directory", func(t *testing.T, path string) {}},
		{"empty file left by an interrupted creation", func(t *testing.T, path string) {
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state.db")
			if tt.name == "missing directory" {
				path = filepath.Join(dir, ".genform", "state.db")
			}
			tt.setup(t, path)
			before, _ := os.ReadFile(path)
			s, err := Open(path, Options{})
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("error %q does not match fs.ErrNotExist", err)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the file", err)
			}
			after, statErr := os.ReadFile(path)
			if before == nil && !errors.Is(statErr, fs.ErrNotExist) {
				t.Errorf("Open without Create created %s", path)
			}
			if before != nil && len(after) != 0 {
				t.Errorf("Open without Create wrote %d bytes", len(after))
			}
			if _, err := os.Stat(filepath.Dir(path)); filepath.Dir(path) != dir && err == nil {
				t.Errorf("Open without Create created the directory")
			}
		})
	}
}

func TestOpenInitialisesEmptyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path, Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Meta(); err != nil {
		t.Fatal(err)
	}
}

func TestLineageAndSerial(t *testing.T) {
	s := openNew(t)
	m0, err := s.Meta()
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name       string
		fn         func(tx *Tx) error
		wantErr    bool
		wantSerial uint64
	}{
		{"a change commits and counts", func(tx *Tx) error { return tx.Record(sampleResource("image.a", 1)) }, false, 1},
		{"several changes in one Update count once", func(tx *Tx) error {
			if err := tx.Record(sampleResource("image.b", 1)); err != nil {
				return err
			}
			return tx.RecordIntent(intent("image.c", ""))
		}, false, 2},
		{"reading only does not count", func(tx *Tx) error {
			_, err := tx.Resource(a("image.a"))
			return err
		}, false, 2},
		{"clearing nothing does not count", func(tx *Tx) error { return tx.ClearIntent(a("image.none")) }, false, 2},
		{"setting what is set does not count", func(tx *Tx) error { return tx.Protect(a("image.none"), false) }, false, 2},
		{"forgetting nothing does not count", func(tx *Tx) error {
			_, err := tx.Forget(a("image.none"))
			return err
		}, false, 2},
		{"a failed Update does not count", func(tx *Tx) error {
			if err := tx.Record(sampleResource("image.d", 1)); err != nil {
				return err
			}
			return errors.New("boom")
		}, true, 2},
		{"a Forget counts", func(tx *Tx) error {
			_, err := tx.Forget(a("image.a"))
			return err
		}, false, 3},
	}
	outer := t
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if err := s.Update(st.fn); (err != nil) != st.wantErr {
				t.Fatalf("Update: %v", err)
			}
			s = reopen(outer, s)
			m, err := s.Meta()
			if err != nil {
				t.Fatal(err)
			}
			if m.Serial != st.wantSerial {
				t.Errorf("serial = %d, want %d", m.Serial, st.wantSerial)
			}
			if m.Lineage != m0.Lineage {
				t.Errorf("lineage changed from %s to %s", m0.Lineage, m.Lineage)
			}
		})
	}
}

func TestUpdateErrorRollsBack(t *testing.T) {
	s := openNew(t)
	if err := s.Update(func(tx *Tx) error { return tx.Record(sampleResource("image.kept", 1)) }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := s.Update(func(tx *Tx) error {
		if err := tx.Record(sampleResource("image.lost", 1)); err != nil {
			return err
		}
		if _, err := tx.Forget(a("image.kept")); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update returned %v, want fn's error", err)
	}
	assertAddrs(t, s, "image.kept")

	t.Run("panic", func(t *testing.T) {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("panic did not propagate")
				}
			}()
			_ = s.Update(func(tx *Tx) error {
				_ = tx.Record(sampleResource("image.lost", 1))
				panic("boom")
			})
		}()
		assertAddrs(t, s, "image.kept")
		// The write lock must have been released.
		if err := s.Update(func(tx *Tx) error { return tx.Record(sampleResource("image.after", 1)) }); err != nil {
			t.Fatal(err)
		}
		assertAddrs(t, s, "image.after", "image.kept")
	})
}

func TestTxUnusableAfterUpdate(t *testing.T) {
	s := openNew(t)
	var leaked *Tx
	if err := s.Update(func(tx *Tx) error { leaked = tx; return nil }); err != nil {
		t.Fatal(err)
	}
	writes := map[string]func() error{
		"Record":       func() error { return leaked.Record(sampleResource("image.a", 1)) },
		"RecordIntent": func() error { return leaked.RecordIntent(intent("image.a", "")) },
		"ClearIntent":  func() error { return leaked.ClearIntent(a("image.a")) },
		"Protect":      func() error { return leaked.Protect(a("image.a"), true) },
		"Forget":       func() error { _, err := leaked.Forget(a("image.a")); return err },
		"Move":         func() error { return leaked.Move(a("image.a"), sampleResource("image.b", 1)) },
		"Resource":     func() error { _, err := leaked.Resource(a("image.a")); return err },
		"Intent":       func() error { _, err := leaked.Intent(a("image.a")); return err },
		"Protected":    func() error { _, err := leaked.Protected(a("image.a")); return err },
		"Meta":         func() error { _, err := leaked.Meta(); return err },
	}
	for name, fn := range writes {
		if err := fn(); !errors.Is(err, errTxDone) {
			t.Errorf("%s after Update = %v, want errTxDone", name, err)
		}
	}
}

func assertAddrs(t *testing.T, s *Store, want ...string) {
	t.Helper()
	snap, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for addr := range snap.Resources {
		got = append(got, addr.String())
	}
	if diff := cmp.Diff(want, got, cmpSorted); diff != "" {
		t.Errorf("resources in state (-want +got):\n%s", diff)
	}
}

var cmpSorted = cmpopts.SortSlices(func(a, b string) bool { return a < b })

// cmpAddrs compares addresses as values: their fields are unexported.
var cmpAddrs = cmp.Comparer(func(x, y addrs.Instance) bool { return x == y })

func TestSnapshotRoundTrip(t *testing.T) {
	s := openNew(t)
	fixedClock(s, t0.Add(time.Hour))
	hero := sampleResource("image.hero", 4)
	clip := sampleResource(`video.clip["red"]`, 1)
	clip.Endpoint, clip.WatermarkFree, clip.Deps = addrs.Image2Video, true, []addrs.Resource{dep("image.hero"), dep("video.intro")}
	failed := &Resource{Addr: a("image.failed[0]"), Endpoint: addrs.Text2Image, Status: "failed", Error: "prompt refused", CreatedAt: t0}
	in := &Intent{Addr: a("video.intro"), Endpoint: addrs.KeyFrames, Fingerprint: "sha256:1", Request: []byte(`{"prompt":"title"}`), GenerationID: "gen-9", CreatedAt: t0, SubmittedAt: t0.Add(time.Second)}
	in2 := &Intent{Addr: a("image.pending"), Endpoint: addrs.Text2Image, Request: []byte(`{}`), CreatedAt: t0}
	err := s.Update(func(tx *Tx) error {
		for _, r := range []*Resource{hero, clip, failed} {
			if err := tx.Record(r); err != nil {
				return err
			}
		}
		for _, i := range []*Intent{in, in2} {
			if err := tx.RecordIntent(i); err != nil {
				return err
			}
		}
		return tx.Protect(a("image.hero"), true)
	})
	if err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s)
	snap, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	m, _ := s.Meta()
	// Record stamps UpdatedAt with the transaction's time, and the serial
	// a new generation is first recorded at.
	want := &Snapshot{
		Meta:        m,
		Resources:   map[addrs.Instance]*Resource{},
		Intents:     map[addrs.Instance]*Intent{a("video.intro"): in, a("image.pending"): in2},
		Protections: map[addrs.Instance]bool{a("image.hero"): true},
	}
	for _, r := range []*Resource{hero, clip, failed} {
		r2 := *r
		r2.UpdatedAt, r2.Serial = t0.Add(time.Hour), 1
		want.Resources[r.Addr] = &r2
	}
	if diff := cmp.Diff(want, snap, cmpAddrs); diff != "" {
		t.Errorf("snapshot after reopen (-want +got):\n%s", diff)
	}
	if m.Serial != 1 {
		t.Errorf("serial = %d, want 1", m.Serial)
	}
	got, err := s.Resource(a("image.hero"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.Resources[a("image.hero")], got, cmpAddrs); diff != "" {
		t.Errorf("Resource(image.hero) (-want +got):\n%s", diff)
	}
	if got, err := s.Resource(a("image.absent")); got != nil || err != nil {
		t.Errorf("Resource(absent) = %v, %v; want nil, nil", got, err)
	}
}

func TestCheckCleanFile(t *testing.T) {
	s := openNew(t)
	fill(t, s, 50)
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestCloseTwice(t *testing.T) {
	s := openNew(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := s.Snapshot(); err == nil {
		t.Error("Snapshot after Close succeeded")
	}
}

// TestConcurrentSteps runs apply-like steps from many goroutines, as the
// engine does with parallelism > 1, while another goroutine plans.
func TestConcurrentSteps(t *testing.T) {
	s := openNew(t)
	const jobs = 20
	stop := make(chan struct{})
	readerDone := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				readerDone <- nil
				return
			default:
			}
			snap, err := s.Snapshot()
			if err != nil {
				readerDone <- err
				return
			}
			// A reader sees each job either before, during or after, never
			// with both its intent and its resource.
			for addr := range snap.Resources {
				if snap.Intents[addr] != nil {
					readerDone <- fmt.Errorf("%s has both an intent and a resource", addr)
					return
				}
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, jobs)
	for i := range jobs {
		wg.Go(func() {
			addr := fmt.Sprintf("image.job[%d]", i)
			steps := []func(tx *Tx) error{
				func(tx *Tx) error { return tx.RecordIntent(intent(addr, "")) },
				func(tx *Tx) error { return tx.RecordIntent(intent(addr, "g-"+addr)) },
				// Record clears the intent in the same transaction.
				func(tx *Tx) error { return tx.Record(sampleResource(addr, 2)) },
			}
			for _, step := range steps {
				if err := s.Update(step); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	if err := <-readerDone; err != nil {
		t.Fatal(err)
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	snap, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Resources) != jobs || len(snap.Intents) != 0 || snap.Meta.Serial != 3*jobs {
		t.Errorf("after %d jobs: %d resources, %d intents, serial %d; want %d, 0, %d",
			jobs, len(snap.Resources), len(snap.Intents), snap.Meta.Serial, jobs, 3*jobs)
	}
}
