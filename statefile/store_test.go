package statefile

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/genform/genform/internal/addrs"
)

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
