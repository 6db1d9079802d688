package statefile

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/genform/genform/internal/addrs"
)

// TestMigrations checks the real list: ordered, past schema 1, and ending
// at SchemaVersion, so that raising SchemaVersion without a migration, or
// adding one out of order, fails here.
func TestMigrations(t *testing.T) {
	prev := 1
	for _, m := range migrations {
		if m.schemaVersion != prev+1 {
			t.Errorf("migration %q goes to schema %d after schema %d", m.name, m.schemaVersion, prev)
		}
		if m.name == "" || m.migrate == nil {
			t.Errorf("migration to schema %d has no name or no function", m.schemaVersion)
		}
		prev = m.schemaVersion
	}
	if prev != SchemaVersion {
		t.Errorf("migrations end at schema %d, SchemaVersion is %d", prev, SchemaVersion)
	}
}

// withSchema pretends, for one test, that this build writes schema v with
// the given migrations after the real ones, as a future genform would.
func withSchema(t *testing.T, v int, ms ...migration) {
	t.Helper()
	oldV, oldMs := currentSchema, migrations
	currentSchema, migrations = v, append(slices.Clip(migrations), ms...)
	t.Cleanup(func() { currentSchema, migrations = oldV, oldMs })
}

// currentState makes a state as this build writes it, with a resource,
// and returns its storage.
func currentState(t *testing.T) (st *memState, meta Meta) {
	t.Helper()
	s := openNew(t)
	if err := s.Update(func(tx *Tx) error { return tx.Record(sampleResource("image.hero", 2)) }); err != nil {
		t.Fatal(err)
	}
	m, err := s.Meta()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return memOf(s), m
}

// realMigrations is this build's list, for tests that go back to it.
var realMigrations = migrations

// next is the first schema after this build's, for injected migrations.
const next = SchemaVersion + 1

func TestMigrationUpgradesOldFile(t *testing.T) {
	st, before := currentState(t)
	var ran []string
	// The next schema moves the resource's kind into a bucket of its own;
	// the one after adds a bucket. Both read the layout their predecessor
	// wrote.
	withSchema(t, next+1,
		migration{schemaVersion: next, name: "index kinds", migrate: func(tx RawTx) error {
			ran = append(ran, "index kinds")
			kinds, err := tx.CreateBucket([]byte("kinds"))
			if err != nil {
				return err
			}
			resources, err := tx.Bucket(bucketResources)
			if err != nil {
				return err
			}
			return resources.ForEach(func(k, v []byte) error {
				r, err := decodeResource(k, v)
				if err != nil {
					return err
				}
				return kinds.Put(k, []byte(r.Addr.Resource.Kind.String()))
			})
		}},
		migration{schemaVersion: next + 1, name: "add notes", migrate: func(tx RawTx) error {
			ran = append(ran, "add notes")
			if kinds, err := tx.Bucket([]byte("kinds")); err != nil || kinds == nil {
				return errors.New("the layout before missing")
			}
			_, err := tx.CreateBucket([]byte("notes"))
			return err
		}},
	)
	s, err := openMem(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if strings.Join(ran, ", ") != "index kinds, add notes" {
		t.Errorf("migrations ran: %v", ran)
	}
	after, err := s.Meta()
	if err != nil {
		t.Fatal(err)
	}
	if after.SchemaVersion != next+1 || after.Lineage != before.Lineage || after.Serial != before.Serial {
		t.Errorf("meta after migration = %+v, want schema %d and lineage/serial of %+v", after, next+1, before)
	}
	if got := st.snapshot()["kinds"]["image.hero"]; string(got) != "image" {
		t.Errorf("migrated kinds[image.hero] = %q", got)
	}
	if r, err := s.Resource(a("image.hero")); err != nil || r == nil || len(r.Outputs) != 2 {
		t.Errorf("resource after migration = %v, %v", r, err)
	}

	// The backup, kept under the schema it had, is the state as it was,
	// still readable by this genform. (That the bbolt file's backup is
	// written as a private file is boltstate's test.)
	currentSchema, migrations = SchemaVersion, realMigrations
	backup := &memState{name: "backup", data: st.backups[SchemaVersion], backups: map[int]memData{}}
	b, err := openMem(backup, Options{})
	if err != nil {
		t.Fatalf("opening the backup as schema %d: %v", SchemaVersion, err)
	}
	defer b.Close()
	if m, _ := b.Meta(); m != before {
		t.Errorf("backup meta = %+v, want %+v", m, before)
	}

	// Opening again migrates nothing.
	currentSchema, migrations = next+1, realMigrations
	ran = nil
	s.Close()
	s2, err := openMem(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s2.Close()
	if len(ran) != 0 {
		t.Errorf("second Open ran migrations again: %v", ran)
	}
}

func TestFailingMigrationLeavesFileUntouched(t *testing.T) {
	st, before := currentState(t)
	path, contents := st.name, st.snapshot()
	withSchema(t, next, migration{schemaVersion: next, name: "break things", migrate: func(tx RawTx) error {
		resources, err := tx.Bucket(bucketResources)
		if err != nil {
			return err
		}
		if err := resources.Delete([]byte("image.hero")); err != nil {
			return err
		}
		return errors.New("disk on fire")
	}})
	_, err := openMem(st, Options{})
	if err == nil {
		t.Fatal("Open succeeded")
	}
	for _, want := range []string{path, fmt.Sprintf("schema %d (break things)", next), "disk on fire"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if !reflect.DeepEqual(contents, st.snapshot()) {
		t.Error("failed migration modified the state")
	}
	if _, ok := st.backups[SchemaVersion]; ok {
		t.Error("failed migration left a backup behind")
	}
	currentSchema, migrations = SchemaVersion, realMigrations
	s, err := openMem(st, Options{})
	if err != nil {
		t.Fatalf("file unreadable after a failed migration: %v", err)
	}
	defer s.Close()
	if m, _ := s.Meta(); m != before {
		t.Errorf("meta = %+v, want %+v", m, before)
	}
	if r, err := s.Resource(a("image.hero")); err != nil || r == nil {
		t.Errorf("resource lost: %v, %v", r, err)
	}
}

// TestMigrationToHistory opens a schema 1 state: the generation its
// record holds, and the failed one kept beside it, are in the history
// afterwards, the record itself unchanged, and the backup is the old
// state.
func TestMigrationToHistory(t *testing.T) {
	st := oldSchema1State(t)
	s, err := openMem(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if m, _ := s.Meta(); m.SchemaVersion != 2 || m.Serial != 4 {
		t.Errorf("meta = %+v, want schema 2 and serial 4", m)
	}
	if err := s.Check(); err != nil {
		t.Errorf("Check: %v", err)
	}
	rec, err := s.Resource(a("image.hero"))
	if err != nil || rec == nil {
		t.Fatalf("record after migration: %v, %v", rec, err)
	}
	hist, err := s.History(addrs.Instance{})
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 2 {
		t.Fatalf("history holds %d entries, want the record's generation and its failure", len(hist))
	}
	got, err := s.Generation(rec.Fingerprint, rec.GenerationID)
	if err != nil || got == nil {
		t.Fatalf("the record's generation: %v, %v", got, err)
	}
	if got.Addr != rec.Addr || got.Status != "succeed" || len(got.Outputs) != len(rec.Outputs) || got.Outputs[0].SHA256 != rec.Outputs[0].SHA256 {
		t.Errorf("entry = %+v, want the record's generation", got)
	}
	if !got.CreatedAt.Equal(rec.UpdatedAt) {
		t.Errorf("entry recorded at %v, want the record's last write %v", got.CreatedAt, rec.UpdatedAt)
	}
	failed, err := s.Generations(rec.Failure.Fingerprint)
	if err != nil || len(failed) != 1 || failed[0].Status != "failed" || failed[0].Error != rec.Failure.Error || string(failed[0].Request) != string(rec.Failure.Request) {
		t.Errorf("failure entry = %+v, %v", failed, err)
	}
	// The backup is the schema 1 layout, for a genform that reads only it.
	backup := st.backups[1]
	if v, hist := string(backup[string(bucketMeta)][string(keySchemaVersion)]), backup[string(bucketHistory)]; v != "1" || hist != nil {
		t.Errorf("backup: schema %q, history bucket %v; want schema 1 without one", v, hist != nil)
	}
	if backup[string(bucketResources)]["image.hero"] == nil {
		t.Error("backup lost the record")
	}
}

// TestMigrationSkipsDamagedRecord: a record that cannot be decoded does
// not stop the migration; it stays for state rm to mend.
func TestMigrationSkipsDamagedRecord(t *testing.T) {
	st := oldSchema1State(t)
	st.edit(func(d memData) { d[string(bucketResources)]["image.broken"] = []byte("\xff\xff") })
	s, err := openMem(st, Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	if n, err := s.HistoryLen(); err != nil || n != 2 {
		t.Errorf("history entries = %d, %v; want 2", n, err)
	}
	if _, err := s.Resource(a("image.broken")); !errors.Is(err, ErrCorrupt) {
		t.Errorf("damaged record reads as %v, want it reported", err)
	}
}
