package statefile

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/addrs"
)

// generation returns a record of addr holding generation gid of the
// request fp.
func generation(addr, fp, gid string) *Resource {
	r := sampleResource(addr, 1)
	r.Fingerprint, r.GenerationID, r.CreationID = fp, gid, gid
	r.CreatedAt, r.UpdatedAt = time.Time{}, time.Time{}
	return r
}

func record(t *testing.T, s *Store, fn func(tx *Tx) error) {
	t.Helper()
	if err := s.Update(fn); err != nil {
		t.Fatal(err)
	}
}

func gids(entries []*Resource) string {
	var ids []string
	for _, e := range entries {
		ids = append(ids, e.GenerationID+"@"+e.Addr.String())
	}
	return strings.Join(ids, " ")
}

// TestHistoryKeepsEveryGeneration: a replaced generation stays in the
// history with its files' hashes, the failed one beside a record too, a
// forgotten instance's generation stays, and a move makes the new address
// the entry's holder.
func TestHistoryKeepsEveryGeneration(t *testing.T) {
	s := openNew(t)
	clock := t0
	s.now = func() time.Time { return clock }

	record(t, s, func(tx *Tx) error { return tx.Record(generation("image.hero", "fp-one", "g1")) })
	clock = clock.Add(time.Hour)
	two := generation("image.hero", "fp-two", "g2")
	two.Outputs[0].SHA256 = "sha-two"
	record(t, s, func(tx *Tx) error { return tx.Record(two) })

	one, err := s.Generations("fp-one")
	if err != nil || len(one) != 1 {
		t.Fatalf("Generations(fp-one) = %v, %v; want the replaced generation", gids(one), err)
	}
	if one[0].Outputs[0].SHA256 != sampleResource("image.hero", 1).Outputs[0].SHA256 || one[0].Status != "succeed" || !one[0].CreatedAt.Equal(t0) {
		t.Errorf("entry = %+v", one[0])
	}

	// A failure kept beside the record is an entry of its own.
	clock = clock.Add(time.Hour)
	withFailure := *two
	withFailure.Failure = &Failure{Endpoint: two.Endpoint, Fingerprint: "fp-bad", Request: json.RawMessage(`{"prompt":"x [fail]"}`),
		GenerationID: "g3", Error: "failed on the service", At: clock}
	record(t, s, func(tx *Tx) error { return tx.Record(&withFailure) })
	bad, err := s.Generation("fp-bad", "g3")
	if err != nil || bad == nil || bad.Status != "failed" || bad.Error != "failed on the service" || len(bad.Outputs) != 0 {
		t.Fatalf("failure entry = %+v, %v", bad, err)
	}

	// Recording the same generation again (files downloaded anew) updates
	// its entry and keeps when it was first recorded.
	clock = clock.Add(time.Hour)
	again := withFailure
	again.Outputs = append([]Output(nil), two.Outputs...)
	again.Outputs[0].SHA256 = "sha-two-again"
	record(t, s, func(tx *Tx) error { return tx.Record(&again) })
	e, _ := s.Generation("fp-two", "g2")
	if e.Outputs[0].SHA256 != "sha-two-again" || !e.CreatedAt.Equal(t0.Add(time.Hour)) || !e.UpdatedAt.Equal(clock) {
		t.Errorf("entry after a second record: sha %s, created %v, updated %v", e.Outputs[0].SHA256, e.CreatedAt, e.UpdatedAt)
	}

	// A move: the entry's holder follows.
	moved := again
	moved.Addr = a("image.hero2")
	moved.Dir = "generated/image/hero2"
	moved.Outputs = []Output{again.Outputs[0]}
	moved.Outputs[0].Path = "generated/image/hero2/0.png"
	record(t, s, func(tx *Tx) error { return tx.Move(a("image.hero"), &moved) })
	if e, _ := s.Generation("fp-two", "g2"); e.Addr != a("image.hero2") || e.Outputs[0].Path != "generated/image/hero2/0.png" {
		t.Errorf("entry after move: %s at %s", e.Addr, e.Outputs[0].Path)
	}

	// Forget leaves the history alone.
	record(t, s, func(tx *Tx) error { _, err := tx.Forget(a("image.hero2")); return err })
	all, err := s.History(addrs.Instance{})
	if err != nil {
		t.Fatal(err)
	}
	// The failure kept beside the record moved with it.
	if got := gids(all); got != "g3@image.hero2 g2@image.hero2 g1@image.hero" {
		t.Errorf("history, newest first = %s", got)
	}
	if mine, _ := s.History(a("image.hero")); gids(mine) != "g1@image.hero" {
		t.Errorf("history of image.hero = %s", gids(mine))
	}
	if err := s.Check(); err != nil {
		t.Errorf("Check: %v", err)
	}
}

// TestHistoryUnchangedEntryNotRewritten: recording a record whose
// generation the history already holds as it is leaves the entry alone,
// its last-recorded time included.
func TestHistoryUnchangedEntryNotRewritten(t *testing.T) {
	s := openNew(t)
	fixedClock(s, t0)
	record(t, s, func(tx *Tx) error { return tx.Record(generation("image.hero", "fp", "g1")) })
	rec, err := s.Resource(a("image.hero"))
	if err != nil {
		t.Fatal(err)
	}
	fixedClock(s, t0.Add(time.Hour))
	record(t, s, func(tx *Tx) error { return tx.Record(rec) })
	if e, _ := s.Generation("fp", "g1"); !e.UpdatedAt.Equal(t0) {
		t.Errorf("entry rewritten at %v", e.UpdatedAt)
	}
}

// TestHistoryNotFiled: a record with no generation (an adopted creation
// whose request is not known, a record without an id) has nothing to
// file, and an id with a NUL byte is not filed rather than refusing the
// record.
func TestHistoryNotFiled(t *testing.T) {
	s := openNew(t)
	record(t, s, func(tx *Tx) error {
		if err := tx.Record(generation("image.a", "", "g1")); err != nil {
			return err
		}
		return tx.Record(generation("image.b", "fp", "g\x00x"))
	})
	if n, err := s.HistoryLen(); err != nil || n != 0 {
		t.Errorf("history holds %d entries (%v), want none", n, err)
	}
	if e, err := s.Generation("fp", "g\x00x"); e != nil || err != nil {
		t.Errorf("Generation with a NUL = %v, %v", e, err)
	}
}

// TestHistoryDamagedEntry: an entry that does not decode, or is not the
// generation its key names, is reported by the reads that meet it and by
// Check, naming it.
func TestHistoryDamagedEntry(t *testing.T) {
	s := openNew(t)
	record(t, s, func(tx *Tx) error { return tx.Record(generation("image.a", "fp", "g1")) })
	other := generation("image.a", "fp", "g2")
	rawPut(t, s, bucketHistory, string(historyKey("fp", "g1")), encodeResource(other))
	for name, read := range map[string]func() error{
		"Generations": func() error { _, err := s.Generations("fp"); return err },
		"Generation":  func() error { _, err := s.Generation("fp", "g1"); return err },
		"History":     func() error { _, err := s.History(addrs.Instance{}); return err },
		"Check":       s.Check,
	} {
		err := read()
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "generation g1") {
			t.Errorf("%s = %v, want the entry named as corrupt", name, err)
		}
	}
}

// TestRecordHistory: a generation no record holds is filed in the history
// and nothing else changes; a bad one is refused.
func TestRecordHistory(t *testing.T) {
	s := openNew(t)
	fixedClock(s, t0)
	e := generation("image.hero", "fp-kept", "g-kept")
	record(t, s, func(tx *Tx) error { return tx.RecordHistory(e) })
	if rec, _ := s.Resource(a("image.hero")); rec != nil {
		t.Errorf("RecordHistory made a record: %+v", rec)
	}
	got, err := s.Generation("fp-kept", "g-kept")
	if err != nil || got == nil || got.Addr != a("image.hero") || !got.CreatedAt.Equal(t0) || len(got.Outputs) != 1 {
		t.Fatalf("entry = %+v, %v", got, err)
	}
	for name, bad := range map[string]func(r *Resource){
		"no status":      func(r *Resource) { r.Status = "" },
		"no fingerprint": func(r *Resource) { r.Fingerprint = "" },
		"a path outside": func(r *Resource) { r.Outputs[0].Path = "../x.png" },
		"bad JSON":       func(r *Resource) { r.Request = json.RawMessage("{") },
	} {
		r := generation("image.hero", "fp-bad", "g-bad")
		bad(r)
		if err := s.Update(func(tx *Tx) error { return tx.RecordHistory(r) }); err == nil {
			t.Errorf("%s: recorded", name)
		}
	}
	if n, _ := s.HistoryLen(); n != 1 {
		t.Errorf("history holds %d entries", n)
	}
}

// TestMoveHistory files the entries last recorded for a moved address
// under the address it moved to, and leaves the others as they were.
func TestMoveHistory(t *testing.T) {
	s := openNew(t)
	record(t, s, func(tx *Tx) error { return tx.Record(generation("image.boat", "fp-one", "g1")) })
	record(t, s, func(tx *Tx) error { return tx.Record(generation("image.boat", "fp-two", "g2")) })
	record(t, s, func(tx *Tx) error { return tx.Record(generation("image.sea", "fp-three", "g3")) })
	record(t, s, func(tx *Tx) error {
		moved := *generation("image.ship", "fp-two", "g2")
		if err := tx.Move(a("image.boat"), &moved); err != nil {
			return err
		}
		return tx.MoveHistory(map[addrs.Instance]addrs.Instance{a("image.boat"): a("image.ship")})
	})
	ship, err := s.History(a("image.ship"))
	if err != nil || gids(ship) != "g2@image.ship g1@image.ship" {
		t.Fatalf("History(image.ship) = %q, %v; want g2 and g1", gids(ship), err)
	}
	if boat, _ := s.History(a("image.boat")); len(boat) != 0 {
		t.Errorf("History(image.boat) = %q, want nothing", gids(boat))
	}
	if sea, _ := s.History(a("image.sea")); gids(sea) != "g3@image.sea" {
		t.Errorf("History(image.sea) = %q", gids(sea))
	}
}
