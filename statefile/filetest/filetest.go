package filetest

import (
	"os"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// ReadFile returns the bytes of the file at path; an error fails t.
func ReadFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// UpdateBolt changes the bbolt file at path with fn in one transaction,
// bypassing the store, and closes it; an error fails t.
func UpdateBolt(t testing.TB, path string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}
