package statefile

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
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

// oldSchema1File writes, with bbolt alone, a state file exactly as a
// genform from before the service key wrote it: schema 1, the three meta
// keys, and a resource.
func oldSchema1File(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	rec := sampleResource("image.hero", 1)
	rec.Failure = &Failure{Endpoint: rec.Endpoint, Fingerprint: "sha256:failed", Request: json.RawMessage(`{"prompt":"a [fail]"}`),
		GenerationID: "gen-failed", Error: "the service reported the generation failed", At: t0.Add(time.Hour)}
	rawBolt(t, path, func(tx *bolt.Tx) error {
		root, err := tx.CreateBucket(bucketRoot)
		if err != nil {
			return err
		}
		meta, err := root.CreateBucket(bucketMeta)
		if err != nil {
			return err
		}
		for k, v := range map[string]string{"schema_version": "1", "lineage": "0913f291-636d-4878-8613-c1fd719794eb", "serial": "4"} {
			if err := meta.Put([]byte(k), []byte(v)); err != nil {
				return err
			}
		}
		resources, err := root.CreateBucket(bucketResources)
		if err != nil {
			return err
		}
		if err := resources.Put(key(rec.Addr), encodeResource(rec)); err != nil {
			return err
		}
		for _, name := range [][]byte{bucketIntents, bucketProtections} {
			if _, err := root.CreateBucket(name); err != nil {
				return err
			}
		}
		return nil
	})
	return path
}

// TestOldFileHasNoService: a file written before the service key existed
// reads as "no service recorded yet" (the migration to the history does
// not invent one), and takes one at the first SetService.
func TestOldFileHasNoService(t *testing.T) {
	path := oldSchema1File(t)
	s, err := Open(path, Options{})
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
	path := s.Path()
	s.Close()
	rawBolt(t, path, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketRoot).Bucket(bucketMeta).Put([]byte("from_the_future"), []byte("\x00anything"))
	})
	s, err := Open(path, Options{})
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
	path := s.Path()
	s.Close()
	rawBolt(t, path, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketRoot).Bucket(bucketMeta).Put(keyService, []byte{})
	})
	_, err := Open(path, Options{})
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), `meta record "service" is corrupt`) {
		t.Errorf("Open = %v, want the service named as corrupt", err)
	}
}

// TestLayout compares the bucket tree of a file that holds one of
// everything with the drawing in the package documentation, so that a key
// added without being drawn (or drawn and never written) fails here, and
// checks the schema: the service key was added to schema 1 without a
// schema change (see doc.go for why); the history made it 2.
func TestLayout(t *testing.T) {
	s := openNew(t)
	err := s.Update(func(tx *Tx) error {
		if err := tx.SetService("https://gen.example.com"); err != nil {
			return err
		}
		if err := tx.Record(sampleResource("image.a", 1)); err != nil {
			return err
		}
		if err := tx.RecordIntent(intent("image.b", "")); err != nil {
			return err
		}
		return tx.Protect(a("image.a"), true)
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = boltDB(s).View(func(tx *bolt.Tx) error {
		var walk func(prefix string, b *bolt.Bucket) error
		walk = func(prefix string, b *bolt.Bucket) error {
			return b.ForEach(func(k, v []byte) error {
				name := string(k)
				if _, ok := canonicalAddr(name); ok {
					name = "<address>"
				}
				if _, _, ok := splitHistoryKey(k); ok {
					name = `<fp>\x00<id>`
				}
				if v != nil {
					got = append(got, prefix+name)
					return nil
				}
				got = append(got, prefix+name+"/")
				return walk(prefix+name+"/", b.Bucket(k))
			})
		}
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			got = append(got, string(name)+"/")
			return walk(string(name)+"/", b)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := drawnLayout(t)
	if !slices.Equal(got, want) {
		t.Errorf("the file's layout:\n  %s\ndoc.go draws:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if m, _ := s.Meta(); m.SchemaVersion != 2 || SchemaVersion != 2 {
		t.Errorf("schema %d (SchemaVersion %d), want 2", m.SchemaVersion, SchemaVersion)
	}
}

// drawnLayout reads the bucket drawing of doc.go as sorted paths
// ("genform/meta/serial", "genform/resources/").
func drawnLayout(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var paths, stack []string
	for _, line := range strings.Split(string(doc), "\n") {
		line, ok := strings.CutPrefix(line, "//\t")
		if !ok || !strings.HasPrefix(line, "genform/") && !strings.ContainsAny(line, "├└") {
			continue
		}
		// Each level of the tree is four runes of "│   ", "├── " or "└── ".
		depth, rest := 0, []rune(line)
		for len(rest) >= 4 && strings.ContainsRune("│├└ ", rest[0]) {
			depth, rest = depth+1, rest[4:]
		}
		name, _, _ := strings.Cut(string(rest), " ")
		stack = append(stack[:depth], name)
		paths = append(paths, strings.Join(stack, ""))
		if !strings.HasSuffix(name, "/") {
			stack = stack[:depth]
		}
	}
	if len(paths) == 0 {
		t.Fatal("no layout drawing found in doc.go")
	}
	slices.Sort(paths)
	return paths
}
