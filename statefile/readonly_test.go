package statefile

import (
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strings"
	"testing"

	"github.com/genform/genform/internal/addrs"
)

// A reader cannot write: its Update and Batch are refused before they
// reach the backend, it cannot create a state, and one that does not exist
// is not created by looking. (That the bbolt file is neither created nor
// changed is boltstate's test.)
func TestReaderCannotWrite(t *testing.T) {
	st, _ := currentState(t)
	r, err := openMem(st, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, write := range []func(func(*Tx) error) error{r.Update, r.Batch} {
		err := write(func(tx *Tx) error {
			_, err := tx.Forget(a("image.hero"))
			return err
		})
		if !errors.Is(err, errReadOnly) {
			t.Errorf("a write through a reader = %v, want it refused", err)
		}
	}
	if res, err := r.Resource(a("image.hero")); err != nil || res == nil {
		t.Errorf("after the refused writes: %v, %v", res, err)
	}

	if _, err := openMem(st, Options{ReadOnly: true, Create: true}); err == nil {
		t.Error("Open(ReadOnly, Create) succeeded")
	}
	missing := newState(t)
	if _, err := openMem(missing, Options{ReadOnly: true}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a reader of a missing state: %v, want fs.ErrNotExist", err)
	}
	if missing.snapshot() != nil {
		t.Error("a reader created the state")
	}
}

// A reader cannot upgrade a state of an older schema, since that writes:
// it says what will.
func TestReaderOfAnOlderSchema(t *testing.T) {
	st, _ := currentState(t)
	contents := st.snapshot()
	withSchema(t, next, migration{next, "nothing", func(RawTx) error { return nil }, false})
	_, err := openMem(st, Options{ReadOnly: true})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("written by an older genform (schema %d)", SchemaVersion)) {
		t.Fatalf("Open(ReadOnly) = %v, want a refusal saying the file must be upgraded", err)
	}
	if !reflect.DeepEqual(st.snapshot(), contents) {
		t.Error("the reader changed the state")
	}
	if len(st.backups) != 0 {
		t.Error("the reader made a backup")
	}
}

// A reader takes a schema 1 state, which has no history yet, as it is: its
// records read, its history is empty, and the state is not changed (its
// first writer adds the history).
func TestReaderOfASchema1File(t *testing.T) {
	st := oldSchema1State(t)
	contents := st.snapshot()
	r, err := openMem(st, Options{ReadOnly: true, Command: "show"})
	if err != nil {
		t.Fatalf("Open(ReadOnly) of a schema 1 file: %v", err)
	}
	snap, err := r.Snapshot()
	if err != nil || len(snap.Resources) != 1 || snap.Meta.SchemaVersion != 1 {
		t.Errorf("snapshot = %+v, %v", snap, err)
	}
	if h, err := r.History(addrs.Instance{}); err != nil || len(h) != 0 {
		t.Errorf("history = %v, %v; want it empty", h, err)
	}
	if g, err := r.Generations("sha256:failed"); err != nil || g != nil {
		t.Errorf("Generations = %v, %v", g, err)
	}
	if err := r.Check(); err != nil {
		t.Errorf("Check: %v", err)
	}
	r.Close()
	if !reflect.DeepEqual(st.snapshot(), contents) {
		t.Error("the reader changed the state")
	}
	// The first writer upgrades it.
	w, err := openMem(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if n, err := w.HistoryLen(); err != nil || n != 2 {
		t.Errorf("history after the upgrade: %d, %v", n, err)
	}
}
