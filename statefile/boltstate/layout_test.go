package boltstate

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/statefile"
	"github.com/genform/genform/statefile/filetest"
)

// TestLayout compares the bucket tree of a file that holds one of
// everything with the drawing in package statefile's documentation, so
// that a key added without being drawn (or drawn and never written) fails
// here, and checks the schema: the service key was added to schema 1
// without a schema change (see statefile's doc.go for why); the history
// made it 2.
func TestLayout(t *testing.T) {
	s := openNew(t)
	err := s.Update(func(tx *statefile.Tx) error {
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
	path := s.Path()
	s.Close()
	filetest.UpdateBolt(t, path, func(tx *bolt.Tx) error {
		var walk func(prefix string, b *bolt.Bucket) error
		walk = func(prefix string, b *bolt.Bucket) error {
			return b.ForEach(func(k, v []byte) error {
				name := string(k)
				if _, ok := addrs.ParseCanonical(name); ok {
					name = "<address>"
				}
				if i := bytes.IndexByte(k, 0); i > 0 && i < len(k)-1 {
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
	slices.Sort(got)
	want := drawnLayout(t)
	if !slices.Equal(got, want) {
		t.Errorf("the file's layout:\n  %s\ndoc.go draws:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	s, err = Open(path, statefile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if m, _ := s.Meta(); m.SchemaVersion != 2 || statefile.SchemaVersion != 2 {
		t.Errorf("schema %d (SchemaVersion %d), want 2", m.SchemaVersion, statefile.SchemaVersion)
	}
}

// drawnLayout reads the bucket drawing of statefile's doc.go as sorted
// paths ("genform/meta/serial", "genform/resources/").
func drawnLayout(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "doc.go"))
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
		t.Fatal("no layout drawing found in statefile's doc.go")
	}
	slices.Sort(paths)
	return paths
}
