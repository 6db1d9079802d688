package boltstate

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

	"github.com/genform/genform/statefile"
)

func TestOpenCreatesPrivateFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".genform", "state.db")
	s, err := Open(path, statefile.Options{Create: true})
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
	if m.SchemaVersion != statefile.SchemaVersion || m.Serial != 0 {
		t.Errorf("new file meta = %+v, want schema %d serial 0", m, statefile.SchemaVersion)
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
			s, err := Open(path, statefile.Options{})
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
	s, err := Open(path, statefile.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Meta(); err != nil {
		t.Fatal(err)
	}
}

func TestUpdateErrorRollsBack(t *testing.T) {
	s := openNew(t)
	if err := s.Update(func(tx *statefile.Tx) error { return tx.Record(sampleResource("image.kept", 1)) }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := s.Update(func(tx *statefile.Tx) error {
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
			_ = s.Update(func(tx *statefile.Tx) error {
				_ = tx.Record(sampleResource("image.lost", 1))
				panic("boom")
			})
		}()
		assertAddrs(t, s, "image.kept")
		// The write lock must have been released.
		if err := s.Update(func(tx *statefile.Tx) error { return tx.Record(sampleResource("image.after", 1)) }); err != nil {
			t.Fatal(err)
		}
		assertAddrs(t, s, "image.after", "image.kept")
	})
}

func TestCheckCleanFile(t *testing.T) {
	s := openNew(t)
	fill(t, s, 50)
	if err := s.Check(); err != nil {
		t.Fatal(err)
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
			steps := []func(tx *statefile.Tx) error{
				func(tx *statefile.Tx) error { return tx.RecordIntent(intent(addr, "")) },
				func(tx *statefile.Tx) error { return tx.RecordIntent(intent(addr, "g-"+addr)) },
				// Record clears the intent in the same transaction.
				func(tx *statefile.Tx) error { return tx.Record(sampleResource(addr, 2)) },
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

// TestBatchConcurrentSteps runs the steps of many parallel jobs through
// Batch, with some steps failing: every successful step is durable after
// reopening, no failed step left anything, and each committed change
// counted the serial up.
func TestBatchConcurrentSteps(t *testing.T) {
	s := openNew(t)
	const n = 60
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			addr := fmt.Sprintf("image.p%02d", i)
			errs[i] = s.Batch(func(tx *statefile.Tx) error {
				if err := tx.Record(sampleResource(addr, 2)); err != nil {
					return err
				}
				if i%7 == 0 {
					return errors.New("step refused")
				}
				return nil
			})
		}(i)
	}
	wg.Wait()
	s = reopen(t, s)
	snap, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for i := 0; i < n; i++ {
		addr := fmt.Sprintf("image.p%02d", i)
		_, got := snap.Resources[a(addr)]
		if i%7 == 0 {
			if errs[i] == nil || got {
				t.Errorf("%s: failed step returned %v and left a record: %v", addr, errs[i], got)
			}
			continue
		}
		want++
		if errs[i] != nil || !got {
			t.Errorf("%s: Batch returned %v, recorded %v", addr, errs[i], got)
		}
	}
	if snap.Meta.Serial != uint64(want) {
		t.Errorf("serial %d after %d committed steps", snap.Meta.Serial, want)
	}
	if err := s.Check(); err != nil {
		t.Errorf("Check: %v", err)
	}
}
