package boltstate

import (
	"bytes"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/genform/genform/statefile"
	"github.com/genform/genform/statefile/filetest"
)

// goodFile returns the bytes of a real state file holding n resources.
func goodFile(t *testing.T, n int) []byte {
	t.Helper()
	return filetest.ReadFile(t, filledFile(t, n))
}

func TestOpenRefusesUnreadableFiles(t *testing.T) {
	good := goodFile(t, 300)
	garbage := make([]byte, 64<<10)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range garbage {
		garbage[i] = byte(rng.Uint32())
	}
	// A file with bbolt's magic number but a damaged meta page.
	badSum := bytes.Clone(good)
	badSum[pageHeaderSize+20] ^= 0xff
	pageSize := 4096
	badSum[pageSize+pageHeaderSize+20] ^= 0xff

	tests := []struct {
		name     string
		contents func(t *testing.T, path string)
		want     string
	}{
		{"random bytes", func(t *testing.T, path string) { write(t, path, garbage) }, "not a bbolt database"},
		{"a text file", func(t *testing.T, path string) {
			write(t, path, []byte(strings.Repeat("terraform state is not this\n", 1000)))
		}, "not a bbolt database"},
		{"a few bytes", func(t *testing.T, path string) { write(t, path, []byte("bolt")) }, "too short"},
		{"truncated to half", func(t *testing.T, path string) { write(t, path, good[:len(good)/2]) }, "truncated"},
		{"truncated to its header pages", func(t *testing.T, path string) { write(t, path, good[:3*pageSize]) }, "truncated"},
		{"truncated one page short of its data", func(t *testing.T, path string) { write(t, path, good[:highWater(t, good)-pageSize]) }, "truncated"},
		{"both meta pages damaged", func(t *testing.T, path string) { write(t, path, badSum) }, "checksum"},
		{"a bbolt database of another program", func(t *testing.T, path string) {
			filetest.UpdateBolt(t, path, func(tx *bolt.Tx) error {
				b, err := tx.CreateBucket([]byte("containerd"))
				if err != nil {
					return err
				}
				return b.Put([]byte("k"), []byte("v"))
			})
		}, "not a genform state file"},
		{"genform's bucket without its meta", func(t *testing.T, path string) {
			filetest.UpdateBolt(t, path, func(tx *bolt.Tx) error {
				_, err := tx.CreateBucket(bucketRoot)
				return err
			})
		}, "bucket genform/meta is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			tt.contents(t, path)
			before := filetest.ReadFile(t, path)
			for _, create := range []bool{false, true} {
				s, err := Open(path, statefile.Options{Create: create})
				if err == nil {
					s.Close()
					t.Fatalf("Open(Create: %v) succeeded", create)
				}
				if !errors.Is(err, statefile.ErrCorrupt) {
					t.Errorf("error %q does not match ErrCorrupt", err)
				}
				for _, want := range []string{path, tt.want, "restore"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not contain %q", err, want)
					}
				}
			}
			if !bytes.Equal(before, filetest.ReadFile(t, path)) {
				t.Error("refused file was modified")
			}
			if _, err := os.Stat(path + infoSuffix); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("refused Open left %s behind", infoSuffix)
			}
		})
	}
}

// highWater is the end of a bbolt file's data according to its meta page;
// bbolt allocates the file ahead of it, so bytes past it may be cut off
// without loss.
func highWater(t *testing.T, file []byte) int {
	t.Helper()
	var best boltMeta
	for _, off := range []int{0, 4096} {
		m, err := parseMeta(file[off:])
		if err != nil {
			t.Fatal(err)
		}
		if m.txid >= best.txid {
			best = m
		}
	}
	return int(best.pgid) * int(best.pageSize)
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	s := openNew(t)
	path := s.Path()
	s.Close()
	filetest.UpdateBolt(t, path, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketRoot).Bucket(bucketMeta).Put(keySchemaVersion, []byte("7"))
	})
	before := filetest.ReadFile(t, path)
	_, err := Open(path, statefile.Options{Create: true})
	if err == nil {
		t.Fatal("Open of a newer schema succeeded")
	}
	for _, want := range []string{path, "written by a newer genform (schema 7", "upgrade genform"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if !bytes.Equal(before, filetest.ReadFile(t, path)) {
		t.Error("file of a newer schema was modified")
	}
}
