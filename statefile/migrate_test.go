package statefile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
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
// the given migrations, as a future genform would.
func withSchema(t *testing.T, v int, ms ...migration) {
	t.Helper()
	oldV, oldMs := currentSchema, migrations
	currentSchema, migrations = v, ms
	t.Cleanup(func() { currentSchema, migrations = oldV, oldMs })
}

// schema1File makes a state file as schema 1 writes it, with a resource.
func schema1File(t *testing.T) (path string, meta Meta) {
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
	return s.Path(), m
}

func TestMigrationUpgradesOldFile(t *testing.T) {
	path, before := schema1File(t)
	var ran []string
	// Schema 2 moves the resource's kind into a bucket of its own; schema 3
	// adds a bucket. Both read the layout their predecessor wrote.
	withSchema(t, 3,
		migration{2, "index kinds", func(tx *bolt.Tx) error {
			ran = append(ran, "index kinds")
			root := tx.Bucket(bucketRoot)
			kinds, err := root.CreateBucket([]byte("kinds"))
			if err != nil {
				return err
			}
			return root.Bucket(bucketResources).ForEach(func(k, v []byte) error {
				r, err := decodeResource(k, v)
				if err != nil {
					return err
				}
				return kinds.Put(k, []byte(r.Addr.Resource.Kind.String()))
			})
		}},
		migration{3, "add notes", func(tx *bolt.Tx) error {
			ran = append(ran, "add notes")
			if tx.Bucket(bucketRoot).Bucket([]byte("kinds")) == nil {
				return errors.New("schema 2 layout missing")
			}
			_, err := tx.Bucket(bucketRoot).CreateBucket([]byte("notes"))
			return err
		}},
	)
	s, err := Open(path, Options{})
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
	if after.SchemaVersion != 3 || after.Lineage != before.Lineage || after.Serial != before.Serial {
		t.Errorf("meta after migration = %+v, want schema 3 and lineage/serial of %+v", after, before)
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		if got := tx.Bucket(bucketRoot).Bucket([]byte("kinds")).Get([]byte("image.hero")); string(got) != "image" {
			t.Errorf("migrated kinds[image.hero] = %q", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := s.Resource(a("image.hero")); err != nil || r == nil || len(r.Outputs) != 2 {
		t.Errorf("resource after migration = %v, %v", r, err)
	}

	// The backup is the file as it was, still readable by a schema 1 genform.
	currentSchema, migrations = SchemaVersion, nil
	backup := path + ".schema-1.backup"
	b, err := Open(backup, Options{})
	if err != nil {
		t.Fatalf("opening the backup as schema 1: %v", err)
	}
	defer b.Close()
	if m, _ := b.Meta(); m != before {
		t.Errorf("backup meta = %+v, want %+v", m, before)
	}
	if st, err := os.Stat(backup); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("backup mode: %v, %v", st.Mode(), err)
	}

	// Opening again migrates nothing.
	currentSchema, migrations = 3, nil
	ran = nil
	s.Close()
	s2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s2.Close()
	if len(ran) != 0 {
		t.Errorf("second Open ran migrations again: %v", ran)
	}
}

func TestFailingMigrationLeavesFileUntouched(t *testing.T) {
	path, before := schema1File(t)
	contents := readFile(t, path)
	withSchema(t, 2, migration{2, "break things", func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketRoot).DeleteBucket(bucketResources); err != nil {
			return err
		}
		return errors.New("disk on fire")
	}})
	_, err := Open(path, Options{})
	if err == nil {
		t.Fatal("Open succeeded")
	}
	for _, want := range []string{path, "schema 2 (break things)", "disk on fire"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if !bytes.Equal(contents, readFile(t, path)) {
		t.Error("failed migration modified the file")
	}
	if _, err := os.Stat(path + ".schema-1.backup"); !errors.Is(err, fs.ErrNotExist) {
		t.Error("failed migration left a backup behind")
	}
	currentSchema, migrations = SchemaVersion, nil
	s, err := Open(path, Options{})
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
