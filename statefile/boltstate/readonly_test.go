package boltstate

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/statefile"
	"github.com/genform/genform/statefile/filetest"
)

// dirNames lists the names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// Readers share the lock while no writer holds it: any number read at
// once, and write nothing beside the state, not even the holder info. A
// writer waits for all of them; a reader that keeps writers out
// (KeepWritersOut) waits for a writer. (Other readers read beside a
// writer: readcopy_test.go.)
func TestReadersShareTheLock(t *testing.T) {
	path, _ := currentFile(t)
	before := dirNames(t, filepath.Dir(path))
	contents := filetest.ReadFile(t, path)

	r1, err := Open(path, statefile.Options{ReadOnly: true, Command: "show"})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := Open(path, statefile.Options{ReadOnly: true, Command: "gallery"})
	if err != nil {
		t.Fatalf("a second reader: %v", err)
	}
	for _, r := range []*statefile.Store{r1, r2} {
		if res, err := r.Resource(a("image.hero")); err != nil || res == nil {
			t.Errorf("reading: %v, %v", res, err)
		}
	}
	if got := dirNames(t, filepath.Dir(path)); !slices.Equal(got, before) {
		t.Errorf("readers changed the directory: %v, was %v", got, before)
	}

	_, err = Open(path, statefile.Options{Command: "apply"})
	var le *statefile.LockedError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "or by commands reading it (show") {
		t.Fatalf("a writer beside readers: %v, want a LockedError that says readers may hold it", err)
	}
	// The writer waits for the last reader.
	done := waitingWriter(path)
	time.Sleep(100 * time.Millisecond)
	r1.Close()
	time.Sleep(100 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("the writer got in while a reader held the lock: %v", err)
	default:
	}
	r2.Close()
	if err := <-done; err != nil {
		t.Fatalf("the waiting writer: %v", err)
	}

	// While a writer holds it, a reader keeping writers out is refused,
	// naming the writer, or waits for it.
	w, err := Open(path, statefile.Options{Command: "apply"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(path, statefile.Options{ReadOnly: true, KeepWritersOut: true, Command: "init"})
	if !errors.As(err, &le) || le.Holder == nil || le.Holder.Command != "apply" {
		t.Fatalf("a reader keeping writers out beside a writer: %v, want a LockedError naming genform apply", err)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		w.Close()
	}()
	r, err := Open(path, statefile.Options{ReadOnly: true, KeepWritersOut: true, LockTimeout: time.Minute})
	if err != nil {
		t.Fatalf("a reader waiting for the writer: %v", err)
	}
	r.Close()
	if got := filetest.ReadFile(t, path); string(got) != string(contents) {
		t.Error("the file changed, with nothing written to it")
	}
}

// A reader of the file cannot write to it, nor create one, and a missing
// file is not created by looking.
func TestReaderCannotWrite(t *testing.T) {
	path, _ := currentFile(t)
	r, err := Open(path, statefile.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, write := range []func(func(*statefile.Tx) error) error{r.Update, r.Batch} {
		err := write(func(tx *statefile.Tx) error {
			_, err := tx.Forget(a("image.hero"))
			return err
		})
		if err == nil || !strings.Contains(err.Error(), "opened read-only") {
			t.Errorf("a write through a reader = %v, want it refused", err)
		}
	}
	if res, err := r.Resource(a("image.hero")); err != nil || res == nil {
		t.Errorf("after the refused writes: %v, %v", res, err)
	}

	if _, err := Open(path, statefile.Options{ReadOnly: true, Create: true}); err == nil {
		t.Error("Open(ReadOnly, Create) succeeded")
	}
	missing := filepath.Join(t.TempDir(), "state.db")
	if _, err := Open(missing, statefile.Options{ReadOnly: true}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a reader of a missing file: %v, want fs.ErrNotExist", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Error("a reader created the file")
	}
}
