package statefile

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSpentAddsUpAndTravelsInTheDocument: what a workspace spent is
// summed by currency, survives a reopen's read, and is carried by pull
// and push (the document), so a ceiling still holds after a push.
func TestSpentAddsUpAndTravelsInTheDocument(t *testing.T) {
	s := openNew(t)
	if got, err := s.Spent(); err != nil || got != nil {
		t.Fatalf("Spent of a new state = %v, %v; want nil", got, err)
	}
	for _, add := range []struct {
		cur string
		n   int64
	}{{"USD", 250_000}, {"USD", 1_000_000}, {"EUR", 3}, {"USD", 0}} {
		if err := s.Update(func(tx *Tx) error { return tx.AddSpent(add.cur, add.n) }); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]int64{"USD": 1_250_000, "EUR": 3}
	got, err := s.Spent()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Spent (-want +got):\n%s", diff)
	}
	if err := s.Update(func(tx *Tx) error { return tx.AddSpent("USD", -1) }); err == nil {
		t.Error("AddSpent took a negative amount")
	}
	doc, err := s.Document()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, doc.Spent); diff != "" {
		t.Errorf("Document().Spent (-want +got):\n%s", diff)
	}
	raw, err := doc.raw()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, x := range raw.data[string(bucketMeta)] {
		found = found || string(x.k) == string(keySpent)
	}
	if !found {
		t.Error("the document's spend is not written back")
	}
}
