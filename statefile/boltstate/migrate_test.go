package boltstate

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/statefile"
	"github.com/genform/genform/statefile/filetest"
)

// oldSchema1File makes a state file as a genform from before the history
// and the service key left it: schema 1, the three meta keys and no
// history bucket, and a resource whose record keeps a failed generation
// beside it. The record is written by this genform, whose records a
// schema 1 reader reads the same.
func oldSchema1File(t *testing.T) string {
	t.Helper()
	s := openNew(t)
	rec := sampleResource("image.hero", 1)
	rec.Failure = &statefile.Failure{Endpoint: rec.Endpoint, Fingerprint: "sha256:failed", Request: json.RawMessage(`{"prompt":"a [fail]"}`),
		GenerationID: "gen-failed", Error: "the service reported the generation failed", At: t0.Add(time.Hour)}
	if err := s.Update(func(tx *statefile.Tx) error { return tx.Record(rec) }); err != nil {
		t.Fatal(err)
	}
	path := s.Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	filetest.UpdateBolt(t, path, func(tx *bolt.Tx) error {
		root := tx.Bucket(bucketRoot)
		if err := root.DeleteBucket(bucketHistory); err != nil {
			return err
		}
		if err := root.DeleteBucket(bucketMeta); err != nil {
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
		return nil
	})
	return path
}

// TestMigrationFromSchema1 opens a schema 1 file. A reader reads it as it
// is and leaves it so, with no copy beside it. The first writer upgrades
// it, after copying it to <path>.schema-1.backup: a private file in the
// schema 1 layout, for a genform that reads only that, and one this
// genform still reads.
func TestMigrationFromSchema1(t *testing.T) {
	path := oldSchema1File(t)
	contents := filetest.ReadFile(t, path)
	backup := backupPath(path, 1)

	r, err := Open(path, statefile.Options{ReadOnly: true, Command: "show"})
	if err != nil {
		t.Fatalf("Open(ReadOnly) of a schema 1 file: %v", err)
	}
	if snap, err := r.Snapshot(); err != nil || len(snap.Resources) != 1 || snap.Meta.SchemaVersion != 1 {
		t.Errorf("snapshot = %+v, %v", snap, err)
	}
	if h, err := r.History(addrs.Instance{}); err != nil || len(h) != 0 {
		t.Errorf("history = %v, %v; want it empty", h, err)
	}
	r.Close()
	if !bytes.Equal(filetest.ReadFile(t, path), contents) {
		t.Error("the reader changed the file")
	}
	if _, err := os.Lstat(backup); !errors.Is(err, fs.ErrNotExist) {
		t.Error("the reader made a backup")
	}

	s, err := Open(path, statefile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := s.Meta(); m.SchemaVersion != 2 || m.Serial != 4 {
		t.Errorf("meta = %+v, want schema 2 and serial 4", m)
	}
	if n, err := s.HistoryLen(); err != nil || n != 2 {
		t.Errorf("history holds %d entries (%v), want the record's generation and its failure", n, err)
	}
	if err := s.Check(); err != nil {
		t.Errorf("Check: %v", err)
	}
	s.Close()

	if st, err := os.Stat(backup); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("backup: %v, %v", st, err)
	}
	filetest.UpdateBolt(t, backup, func(tx *bolt.Tx) error {
		root := tx.Bucket(bucketRoot)
		if v := string(root.Bucket(bucketMeta).Get(keySchemaVersion)); v != "1" || root.Bucket(bucketHistory) != nil {
			t.Errorf("backup: schema %q, history bucket %v; want schema 1 without one", v, root.Bucket(bucketHistory) != nil)
		}
		if root.Bucket(bucketResources).Get([]byte("image.hero")) == nil {
			t.Error("backup lost the record")
		}
		return nil
	})
	b, err := Open(backup, statefile.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("opening the backup: %v", err)
	}
	defer b.Close()
	want := statefile.Meta{SchemaVersion: 1, Lineage: "0913f291-636d-4878-8613-c1fd719794eb", Serial: 4}
	if m, err := b.Meta(); err != nil || m != want {
		t.Errorf("backup meta = %+v, %v; want %+v", m, err, want)
	}
}

// A migration that fails rolls back: the file keeps its bytes, fn's error
// comes back as it is, and the copy taken before is removed, since it is
// a copy of an unchanged file and would only mislead.
func TestFailingMigrationLeavesFileUntouched(t *testing.T) {
	path, before := currentFile(t)
	contents := filetest.ReadFile(t, path)
	be, _, err := open(path, statefile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fire := errors.New("disk on fire")
	err = be.Migrate(statefile.SchemaVersion, func(tx statefile.RawTx) error {
		resources, err := tx.Bucket(bucketResources)
		if err != nil {
			return err
		}
		if err := resources.Delete([]byte("image.hero")); err != nil {
			return err
		}
		return fire
	})
	if err != fire {
		t.Errorf("Migrate = %v, want the migration's error as it is", err)
	}
	if err := be.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(contents, filetest.ReadFile(t, path)) {
		t.Error("failed migration modified the file")
	}
	if _, err := os.Stat(backupPath(path, statefile.SchemaVersion)); !errors.Is(err, fs.ErrNotExist) {
		t.Error("failed migration left a backup behind")
	}
	s, err := Open(path, statefile.Options{})
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

// A migration that succeeds commits with its copy beside the file: the
// file as it was, which this genform reads with the meta it had.
func TestMigrationKeepsTheFileAsItWas(t *testing.T) {
	path, before := currentFile(t)
	be, _, err := open(path, statefile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = be.Migrate(statefile.SchemaVersion, func(tx statefile.RawTx) error {
		_, err := tx.CreateBucket([]byte("notes"))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := be.Close(); err != nil {
		t.Fatal(err)
	}
	filetest.UpdateBolt(t, path, func(tx *bolt.Tx) error {
		if tx.Bucket(bucketRoot).Bucket([]byte("notes")) == nil {
			t.Error("the migration's bucket was not committed")
		}
		return nil
	})
	backup := backupPath(path, statefile.SchemaVersion)
	if st, err := os.Stat(backup); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("backup: %v, %v", st, err)
	}
	filetest.UpdateBolt(t, backup, func(tx *bolt.Tx) error {
		if tx.Bucket(bucketRoot).Bucket([]byte("notes")) != nil {
			t.Error("the backup holds what the migration wrote")
		}
		return nil
	})
	b, err := Open(backup, statefile.Options{})
	if err != nil {
		t.Fatalf("opening the backup as schema %d: %v", statefile.SchemaVersion, err)
	}
	defer b.Close()
	if m, _ := b.Meta(); m != before {
		t.Errorf("backup meta = %+v, want %+v", m, before)
	}
}
