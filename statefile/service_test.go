package statefile

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestSetService: the service is recorded once, read back by every way of
// reading the meta, survives closing the file, and counts in the serial
// only when it changes.
func TestSetService(t *testing.T) {
	s := openNew(t)
	if m, err := s.Meta(); err != nil || m.Service != "" {
		t.Fatalf("a new state names service %q (%v), want none", m.Service, err)
	}
	steps := []struct {
		name        string
		id          string
		wantErr     string
		wantService string
		wantSerial  uint64
	}{
		{"the first service is recorded", "https://gen.example.com", "", "https://gen.example.com", 1},
		{"the same service again changes nothing", "https://gen.example.com", "", "https://gen.example.com", 1},
		{"another service replaces it", "simulator", "", "simulator", 2},
		{"no service is refused", "", "no service given", "simulator", 2},
		{"a control character is refused", "https://gen.example.com\n", "is not a service identity", "simulator", 2},
		{"invalid UTF-8 is refused", "https://gen.\xffexample.com", "is not a service identity", "simulator", 2},
	}
	outer := t
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			err := s.Update(func(tx *Tx) error { return tx.SetService(st.id) })
			if st.wantErr == "" && err != nil || st.wantErr != "" && (err == nil || !strings.Contains(err.Error(), st.wantErr)) {
				t.Fatalf("SetService(%q) = %v, want error containing %q", st.id, err, st.wantErr)
			}
			s = reopen(outer, s)
			m, err := s.Meta()
			if err != nil {
				t.Fatal(err)
			}
			if m.Service != st.wantService || m.Serial != st.wantSerial {
				t.Errorf("meta = %+v, want service %q and serial %d", m, st.wantService, st.wantSerial)
			}
			snap, err := s.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			if snap.Meta != m {
				t.Errorf("Snapshot().Meta = %+v, Meta() = %+v", snap.Meta, m)
			}
		})
	}
}

// TestSetServiceRollsBackWithItsUpdate: the service is part of the
// transaction, so an Update that fails after setting it leaves the one
// recorded before.
func TestSetServiceRollsBackWithItsUpdate(t *testing.T) {
	s := openNew(t)
	if err := s.Update(func(tx *Tx) error { return tx.SetService("simulator") }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := s.Update(func(tx *Tx) error {
		if err := tx.SetService("https://gen.example.com"); err != nil {
			return err
		}
		if m, err := tx.Meta(); err != nil || m.Service != "https://gen.example.com" {
			t.Errorf("inside the Update, Meta = %+v, %v", m, err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update = %v", err)
	}
	if m, _ := s.Meta(); m.Service != "simulator" || m.Serial != 1 {
		t.Errorf("after a failed Update, meta = %+v, want service simulator and serial 1", m)
	}
	var kept *Tx
	s.Update(func(tx *Tx) error { kept = tx; return nil })
	if err := kept.SetService("simulator"); !errors.Is(err, errTxDone) {
		t.Errorf("SetService after its Update = %v, want errTxDone", err)
	}
}

// oldSchema1State makes a state exactly as a genform from before the
// service key wrote it: schema 1, the three meta keys, and a resource.
func oldSchema1State(t *testing.T) *memState {
	t.Helper()
	rec := sampleResource("image.hero", 1)
	rec.Failure = &Failure{Endpoint: rec.Endpoint, Fingerprint: "sha256:failed", Request: json.RawMessage(`{"prompt":"a [fail]"}`),
		GenerationID: "gen-failed", Error: "the service reported the generation failed", At: t0.Add(time.Hour)}
	st := newState(t)
	st.edit(func(d memData) {
		d[string(bucketMeta)] = map[string][]byte{"schema_version": []byte("1"), "lineage": []byte("0913f291-636d-4878-8613-c1fd719794eb"), "serial": []byte("4")}
		d[string(bucketResources)] = map[string][]byte{string(key(rec.Addr)): encodeResource(rec)}
		for _, name := range [][]byte{bucketIntents, bucketProtections} {
			d[string(name)] = map[string][]byte{}
		}
	})
	return st
}

// TestOldFileHasNoService: a file written before the service key existed
// reads as "no service recorded yet" (the migration to the history does
// not invent one), and takes one at the first SetService.
func TestOldFileHasNoService(t *testing.T) {
	s, err := openMem(oldSchema1State(t), Options{})
	if err != nil {
		t.Fatalf("opening a file without the service key: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Check(); err != nil {
		t.Errorf("Check: %v", err)
	}
	snap, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	want := Meta{SchemaVersion: 2, Lineage: "0913f291-636d-4878-8613-c1fd719794eb", Serial: 4}
	if snap.Meta != want || len(snap.Resources) != 1 {
		t.Fatalf("snapshot meta = %+v with %d resources, want %+v with 1", snap.Meta, len(snap.Resources), want)
	}
	if err := s.Update(func(tx *Tx) error { return tx.SetService("https://gen.example.com") }); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s)
	want.Serial, want.Service, want.RunStart = 5, "https://gen.example.com", 4
	if m, err := s.Meta(); err != nil || m != want {
		t.Errorf("meta after SetService = %+v, %v; want %+v", m, err, want)
	}
}

// TestUnknownMetaKeysAreIgnored: a file whose meta holds a key this
// genform does not know still reads, the way a genform from before the
// service key reads a file that has it. (Its meta reading is this one's
// without the service: keys read by name, the bucket never listed.)
func TestUnknownMetaKeysAreIgnored(t *testing.T) {
	s := openNew(t)
	if err := s.Update(func(tx *Tx) error { return tx.Record(sampleResource("image.hero", 1)) }); err != nil {
		t.Fatal(err)
	}
	before, _ := s.Meta()
	st := memOf(s)
	s.Close()
	st.edit(func(d memData) { d[string(bucketMeta)]["from_the_future"] = []byte("\x00anything") })
	s, err := openMem(st, Options{})
	if err != nil {
		t.Fatalf("opening a file with an unknown meta key: %v", err)
	}
	defer s.Close()
	if err := s.Check(); err != nil {
		t.Errorf("Check: %v", err)
	}
	if snap, err := s.Snapshot(); err != nil || snap.Meta != before || len(snap.Resources) != 1 {
		t.Errorf("snapshot = %+v, %v; want meta %+v and the resource", snap, err, before)
	}
}

// TestEmptyServiceIsCorrupt: SetService never writes an empty service, so
// an empty one is damage, not "none recorded".
func TestEmptyServiceIsCorrupt(t *testing.T) {
	s := openNew(t)
	st := memOf(s)
	s.Close()
	st.edit(func(d memData) { d[string(bucketMeta)][string(keyService)] = []byte{} })
	_, err := openMem(st, Options{})
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), `meta record "service" is corrupt`) {
		t.Errorf("Open = %v, want the service named as corrupt", err)
	}
}
