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
		{"a change commits and counts", func(tx *Tx) error { return tx.PutResource(sampleResource("image.a", 1)) }, false, 1},
		{"several changes in one Update count once", func(tx *Tx) error {
			if err := tx.PutResource(sampleResource("image.b", 1)); err != nil {
				return err
			}
			return tx.PutIntent(&Intent{Addr: "image.c"})
		}, false, 2},
		{"reading only does not count", func(tx *Tx) error {
			_, err := tx.Resource("image.a")
			return err
		}, false, 2},
		{"deleting nothing does not count", func(tx *Tx) error { return tx.DeleteIntent("image.none") }, false, 2},
		{"setting what is set does not count", func(tx *Tx) error { return tx.SetProtected("image.none", false) }, false, 2},
		{"a failed Update does not count", func(tx *Tx) error {
			if err := tx.PutResource(sampleResource("image.d", 1)); err != nil {
				return err
			}
			return errors.New("boom")
		}, true, 2},
		{"a delete counts", func(tx *Tx) error { return tx.DeleteResource("image.a") }, false, 3},
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
	if err := s.Update(func(tx *Tx) error { return tx.PutResource(sampleResource("image.kept", 1)) }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := s.Update(func(tx *Tx) error {
		if err := tx.PutResource(sampleResource("image.lost", 1)); err != nil {
			return err
		}
		if err := tx.DeleteResource("image.kept"); err != nil {
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
				_ = tx.PutResource(sampleResource("image.lost", 1))
				panic("boom")
			})
		}()
		assertAddrs(t, s, "image.kept")
		// The write lock must have been released.
		if err := s.Update(func(tx *Tx) error { return tx.PutResource(sampleResource("image.after", 1)) }); err != nil {
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
	if err := leaked.PutResource(sampleResource("image.a", 1)); !errors.Is(err, errTxDone) {
		t.Errorf("PutResource after Update = %v, want errTxDone", err)
	}
	if _, err := leaked.Resource("image.a"); !errors.Is(err, errTxDone) {
		t.Errorf("Resource after Update = %v, want errTxDone", err)
	}
}

func assertAddrs(t *testing.T, s *Store, want ...string) {
	t.Helper()
	snap, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for a := range snap.Resources {
		got = append(got, a)
	}
	if diff := cmp.Diff(want, got, cmpSorted); diff != "" {
		t.Errorf("resources in state (-want +got):\n%s", diff)
	}
}

var cmpSorted = cmpopts.SortSlices(func(a, b string) bool { return a < b })

func TestSnapshotRoundTrip(t *testing.T) {
	s := openNew(t)
	fixedClock(s, t0.Add(time.Hour))
	a := sampleResource("image.hero", 4)
	b := sampleResource(`image.hero["red"]`, 1)
	b.Kind, b.Endpoint, b.WatermarkFree, b.Deps = "video", "/v1/jobs/image2video", true, []string{"image.hero", ""}
	c := &Resource{Addr: "image.failed[0]", Kind: "image", Status: "failed", Error: "prompt refused", CreatedAt: t0}
	in := &Intent{Addr: "video.intro", Kind: "video", Endpoint: "/v1/jobs/text2video", Fingerprint: "sha256:1", Request: []byte(`{"prompt":"title"}`), GenerationID: "gen-9", CreatedAt: t0, SubmittedAt: t0.Add(time.Second)}
	in2 := &Intent{Addr: "image.pending", Request: []byte(`{}`), CreatedAt: t0}
	err := s.Update(func(tx *Tx) error {
		for _, r := range []*Resource{a, b, c} {
			if err := tx.PutResource(r); err != nil {
				return err
			}
		}
		for _, i := range []*Intent{in, in2} {
			if err := tx.PutIntent(i); err != nil {
				return err
			}
		}
		return tx.SetProtected("image.hero", true)
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
	// PutResource stamps UpdatedAt with the transaction's time.
	want := &Snapshot{
		Meta:        m,
		Resources:   map[string]*Resource{},
		Intents:     map[string]*Intent{"video.intro": in, "image.pending": in2},
		Protections: map[string]bool{"image.hero": true},
	}
	for _, r := range []*Resource{a, b, c} {
		r2 := *r
		r2.UpdatedAt = t0.Add(time.Hour)
		want.Resources[r.Addr] = &r2
	}
	if diff := cmp.Diff(want, snap); diff != "" {
		t.Errorf("snapshot after reopen (-want +got):\n%s", diff)
	}
	if m.Serial != 1 {
		t.Errorf("serial = %d, want 1", m.Serial)
	}
	got, err := s.Resource("image.hero")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.Resources["image.hero"], got); diff != "" {
		t.Errorf("Resource(image.hero) (-want +got):\n%s", diff)
	}
	if got, err := s.Resource("image.absent"); got != nil || err != nil {
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
				func(tx *Tx) error { return tx.PutIntent(&Intent{Addr: addr, Kind: "image"}) },
				func(tx *Tx) error { return tx.PutIntent(&Intent{Addr: addr, Kind: "image", GenerationID: "g-" + addr}) },
				func(tx *Tx) error {
					if err := tx.PutResource(sampleResource(addr, 2)); err != nil {
						return err
					}
					return tx.DeleteIntent(addr)
				},
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
