package statefile

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

	"github.com/genform/genform/internal/addrs"
)

// goodFile returns the bytes of a real state file holding n resources.
func goodFile(t *testing.T, n int) []byte {
	t.Helper()
	s := openNew(t)
	fill(t, s, n)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return readFile(t, s.Path())
}

// rawBolt writes a bbolt file with fn, bypassing the store.
func rawBolt(t *testing.T, path string, fn func(tx *bolt.Tx) error) {
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
			rawBolt(t, path, func(tx *bolt.Tx) error {
				b, err := tx.CreateBucket([]byte("containerd"))
				if err != nil {
					return err
				}
				return b.Put([]byte("k"), []byte("v"))
			})
		}, "not a genform state file"},
		{"genform's bucket without its meta", func(t *testing.T, path string) {
			rawBolt(t, path, func(tx *bolt.Tx) error {
				_, err := tx.CreateBucket(bucketRoot)
				return err
			})
		}, "bucket genform/meta is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			tt.contents(t, path)
			before := readFile(t, path)
			for _, create := range []bool{false, true} {
				s, err := Open(path, Options{Create: create})
				if err == nil {
					s.Close()
					t.Fatalf("Open(Create: %v) succeeded", create)
				}
				if !errors.Is(err, ErrCorrupt) {
					t.Errorf("error %q does not match ErrCorrupt", err)
				}
				for _, want := range []string{path, tt.want, "restore"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not contain %q", err, want)
					}
				}
			}
			if !bytes.Equal(before, readFile(t, path)) {
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

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	s := openNew(t)
	path := s.Path()
	s.Close()
	rawBolt(t, path, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketRoot).Bucket(bucketMeta).Put(keySchemaVersion, []byte("7"))
	})
	before := readFile(t, path)
	_, err := Open(path, Options{Create: true})
	if err == nil {
		t.Fatal("Open of a newer schema succeeded")
	}
	for _, want := range []string{path, "written by a newer genform (schema 7", "upgrade genform"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if !bytes.Equal(before, readFile(t, path)) {
		t.Error("file of a newer schema was modified")
	}
}

func TestOpenRefusesBadMeta(t *testing.T) {
	tests := []struct {
		name string
		key  []byte
		val  []byte // nil deletes the key
		want string
	}{
		{"schema version not a number", keySchemaVersion, []byte("one"), `meta record "schema_version" is corrupt`},
		{"schema version zero", keySchemaVersion, []byte("0"), `meta record "schema_version" is corrupt`},
		{"serial missing", keySerial, nil, `meta record "serial" is corrupt: missing`},
		{"lineage empty", keyLineage, []byte{}, `meta record "lineage" is corrupt`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openNew(t)
			path := s.Path()
			s.Close()
			rawBolt(t, path, func(tx *bolt.Tx) error {
				m := tx.Bucket(bucketRoot).Bucket(bucketMeta)
				if tt.val == nil {
					return m.Delete(tt.key)
				}
				return m.Put(tt.key, tt.val)
			})
			_, err := Open(path, Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, ErrCorrupt) {
				t.Errorf("Open error = %v, want a CorruptError containing %q", err, tt.want)
			}
		})
	}
}

// TestCorruptRecord damages one record and checks that every way of
// reading it names it and says what to do, and that the remedy offered
// (genform state rm) works.
func TestCorruptRecord(t *testing.T) {
	tests := []struct {
		name   string
		bucket []byte
		addr   string
		value  []byte
		want   string
	}{
		{"garbage resource", bucketResources, `image.hero["red"]`, []byte{0xff, 0xff, 0xff}, `resource record image.hero["red"] is corrupt`},
		{"truncated resource", bucketResources, "image.hero", encodeResource(sampleResource("image.hero", 4))[:300], "resource record image.hero is corrupt: field 10 at byte"},
		{"resource filed under another address", bucketResources, "image.hero", encodeResource(sampleResource("image.other", 1)), "record says it is image.other"},
		{"resource from a newer genform", bucketResources, "image.hero", []byte{0x08, 0x09}, "record format 9 is newer"},
		{"resource of the wrong kind", bucketResources, "image.hero", tamper(encodeResource(sampleResource("image.hero", 1)), resKind, "video"), `kind "video" does not match the address`},
		{"resource of an unknown endpoint", bucketResources, `image.hero[3]`, tamper(encodeResource(sampleResource("image.hero[3]", 1)), resEndpoint, "/v1/jobs/nope"), `endpoint "/v1/jobs/nope" is not one a image is generated by`},
		{"garbage intent", bucketIntents, "image.hero", []byte("{\"json\":1}"), "pending-submission record for image.hero is corrupt"},
		{"intent of the other kind's endpoint", bucketIntents, "video.clip", tamper(encodeIntent(intent("video.clip", "g")), intEndpoint, addrs.Text2Image.Path()), `endpoint "/v1/jobs/text2image" is not one a video is generated by`},
		{"garbage protection", bucketProtections, "image.hero", []byte{0x08}, "protection record for image.hero is corrupt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openNew(t)
			fill(t, s, 3)
			path := s.Path()
			s.Close()
			rawBolt(t, path, func(tx *bolt.Tx) error {
				return tx.Bucket(bucketRoot).Bucket(tt.bucket).Put([]byte(tt.addr), tt.value)
			})
			s, err := Open(path, Options{})
			if err != nil {
				t.Fatalf("Open must succeed so the user can repair the state: %v", err)
			}
			defer s.Close()
			addr := a(tt.addr)
			check := func(what string, err error) {
				t.Helper()
				if err == nil {
					t.Errorf("%s: no error", what)
					return
				}
				var ce *CorruptError
				if !errors.As(err, &ce) || ce.Addr != tt.addr {
					t.Errorf("%s: error %v is not a CorruptError for %s", what, err, tt.addr)
				}
				for _, want := range []string{path, tt.want, "restore the state file", "genform state rm " + addr.Shell()} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("%s: error %q does not contain %q", what, err, want)
					}
				}
			}
			_, err = s.Snapshot()
			check("Snapshot", err)
			check("Check", s.Check())
			err = s.Update(func(tx *Tx) error {
				switch string(tt.bucket) {
				case string(bucketResources):
					_, err := tx.Resource(addr)
					return err
				case string(bucketIntents):
					_, err := tx.Intent(addr)
					return err
				default:
					_, err := tx.Protected(addr)
					return err
				}
			})
			check("Tx read", err)

			// The remedy the message offers, genform state rm: Forget.
			err = s.Update(func(tx *Tx) error {
				_, err := tx.Forget(addr)
				return err
			})
			if err != nil {
				t.Fatalf("forgetting %s: %v", tt.addr, err)
			}
			if _, err := s.Snapshot(); err != nil {
				t.Errorf("Snapshot after forgetting the record: %v", err)
			}
			if err := s.Check(); err != nil {
				t.Errorf("Check after forgetting the record: %v", err)
			}
		})
	}
}

func TestCheckReportsEveryProblem(t *testing.T) {
	s := openNew(t)
	fill(t, s, 3)
	path := s.Path()
	s.Close()
	rawBolt(t, path, func(tx *bolt.Tx) error {
		root := tx.Bucket(bucketRoot)
		if err := root.Bucket(bucketResources).Put([]byte("image.hero[0]"), []byte{0xff}); err != nil {
			return err
		}
		return root.Bucket(bucketIntents).Put([]byte("image.x"), []byte{0x10})
	})
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.Check()
	if err == nil {
		t.Fatal("Check found nothing")
	}
	for _, want := range []string{"2 problem(s)", "resource record image.hero[0]", "record for image.x"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Check error %q does not contain %q", err, want)
		}
	}
}

// TestCorruptRecordUnderAKeyThatIsNoAddress: genform state rm takes an
// address, so a damaged record filed under a key that is none is reported
// without offering it.
func TestCorruptRecordUnderAKeyThatIsNoAddress(t *testing.T) {
	for _, k := range []string{"hero", "model.hero", "image.", "image.hero[-1]", "\xff\x00"} {
		t.Run(k, func(t *testing.T) {
			s := openNew(t)
			fill(t, s, 1)
			rawPut(t, s, bucketResources, k, encodeResource(sampleResource("image.hero[0]", 1)))
			for what, err := range map[string]error{"Snapshot": snapshotErr(s), "Check": s.Check()} {
				var ce *CorruptError
				if !errors.As(err, &ce) || ce.Addr != k {
					t.Fatalf("%s: error %v is not a CorruptError for %q", what, err, k)
				}
				for _, want := range []string{"resource record " + displayAddr(k) + " is corrupt", "restore the state file"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("%s: error %q does not contain %q", what, err, want)
					}
				}
				if strings.Contains(err.Error(), "state rm") {
					t.Errorf("%s: error %q offers genform state rm for a key that is no address", what, err)
				}
			}
		})
	}
}

func snapshotErr(s *Store) error {
	_, err := s.Snapshot()
	return err
}
