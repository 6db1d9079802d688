package apply

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/workdir"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// mvDir is a working directory with a state recording image.a, whose two
// files are on disk in generated/image/a, protected by prevent_destroy.
func mvDir(t *testing.T) (string, *statefile.Store) {
	t.Helper()
	dir := t.TempDir()
	st := openState(t, dir, ".genform/state.db")
	rec := &statefile.Resource{Addr: a("image.a"), Endpoint: addrs.Text2Image, Status: plans.StatusSucceed, CreationID: "c1", Dir: "generated/image/a"}
	for i, name := range []string{"0.png", "1.png"} {
		rel := "generated/image/a/" + name
		abs := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		data := []byte("image bytes " + name)
		if err := os.WriteFile(abs, data, 0o644); err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(abs)
		sum := sha256.Sum256(data)
		rec.Outputs = append(rec.Outputs, statefile.Output{Index: i, Path: rel, Size: fi.Size(), ModTime: fi.ModTime(), SHA256: hex.EncodeToString(sum[:])})
	}
	if err := st.Update(func(tx *statefile.Tx) error {
		if err := tx.Record(rec); err != nil {
			return err
		}
		return tx.Protect(a("image.a"), true)
	}); err != nil {
		t.Fatal(err)
	}
	return dir, st
}

func mvExists(dir, rel string) bool {
	_, err := os.Stat(filepath.Join(dir, rel))
	return err == nil
}

// TestMoveRecord checks state mv: the record, its protection and its files
// follow the new address, and the state names files that are there.
func TestMoveRecord(t *testing.T) {
	tests := []struct {
		name      string
		dst, dir  string
		crashed   bool // the files were moved by a run that died before committing
		wantPaths []string
		gone      string // a directory that must no longer exist
	}{
		{name: "into the declared dir", dst: "image.b", dir: "generated/image/b",
			wantPaths: []string{"generated/image/b/0.png", "generated/image/b/1.png"}, gone: "generated/image/a"},
		{name: "files stay", dst: "image.b", dir: "",
			wantPaths: []string{"generated/image/a/0.png", "generated/image/a/1.png"}},
		{name: "to an instance key", dst: `image.b["x"]`, dir: "generated/image/b/x",
			wantPaths: []string{"generated/image/b/x/0.png", "generated/image/b/x/1.png"}, gone: "generated/image/a"},
		{name: "rerun after a crash", dst: "image.b", dir: "generated/image/b", crashed: true,
			wantPaths: []string{"generated/image/b/0.png", "generated/image/b/1.png"}, gone: "generated/image/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, st := mvDir(t)
			if tt.crashed {
				os.MkdirAll(filepath.Join(dir, tt.dir), 0o755)
				for _, n := range []string{"0.png", "1.png"} {
					if err := os.Rename(filepath.Join(dir, "generated/image/a", n), filepath.Join(dir, tt.dir, n)); err != nil {
						t.Fatal(err)
					}
				}
			}
			rec, err := MoveRecord(MoveInput{Store: st, Src: a("image.a"), Dst: a(tt.dst), Dir: tt.dir, WorkDir: dir, OutputDir: "generated"})
			if err != nil {
				t.Fatal(err)
			}
			snap, err := st.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			if snap.Resources[a("image.a")] != nil || snap.Resources[a(tt.dst)] == nil {
				t.Fatalf("state holds %v after the move", addrs.SortedKeys(snap.Resources))
			}
			if !snap.Protections[a(tt.dst)] || snap.Protections[a("image.a")] {
				t.Errorf("protection did not follow: %v", snap.Protections)
			}
			for i, want := range tt.wantPaths {
				o := rec.Outputs[i]
				if o.Path != want {
					t.Errorf("output %d recorded at %s, want %s", i, o.Path, want)
				}
				if workdir.CheckFile(dir, o) != workdir.FileOK {
					t.Errorf("output %d: the file at %s does not match its record", i, o.Path)
				}
			}
			if tt.gone != "" && mvExists(dir, tt.gone) {
				t.Errorf("%s is left behind", tt.gone)
			}
		})
	}
}

// TestMoveRecordRefuses checks that a move onto a recorded address, or of
// an address not recorded, changes nothing.
func TestMoveRecordRefuses(t *testing.T) {
	dir, st := mvDir(t)
	if err := st.Update(func(tx *statefile.Tx) error {
		return tx.Record(&statefile.Resource{Addr: a("image.b"), Endpoint: addrs.Text2Image, Status: plans.StatusSucceed, Dir: "generated/image/b"})
	}); err != nil {
		t.Fatal(err)
	}
	_, err := MoveRecord(MoveInput{Store: st, Src: a("image.a"), Dst: a("image.b"), Dir: "generated/image/b", WorkDir: dir, OutputDir: "generated"})
	if !errors.Is(err, statefile.ErrExists) {
		t.Errorf("move onto image.b: %v, want ErrExists", err)
	}
	if !mvExists(dir, "generated/image/a/0.png") || mvExists(dir, "generated/image/b/0.png") {
		t.Error("the files moved although the move was refused")
	}
	_, err = MoveRecord(MoveInput{Store: st, Src: a("image.zz"), Dst: a("image.c"), WorkDir: dir, OutputDir: "generated"})
	if !errors.Is(err, statefile.ErrNotFound) {
		t.Errorf("move of image.zz: %v, want ErrNotFound", err)
	}
}

// TestMoveRecordMovesBack checks that a move that cannot be finished
// leaves the files where the state says they are: a state that refuses
// the new address (an unfinished submission holds it) has the moved files
// put back and the new folder removed, and a file that cannot be moved
// has those already moved put back; the record stays at the old address.
func TestMoveRecordMovesBack(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string, st *statefile.Store)
		is    error
		words string
		left  []string // what stays in the new folder
	}{
		{name: "the state refuses the new address", is: statefile.ErrExists, words: "an unfinished submission of image.b",
			setup: func(t *testing.T, dir string, st *statefile.Store) {
				if err := st.Update(func(tx *statefile.Tx) error {
					return tx.RecordIntent(&statefile.Intent{Addr: a("image.b"), Endpoint: addrs.Text2Image, Fingerprint: "fp-b",
						Request: []byte(`{"prompt":"b"}`), GenerationID: "job-b"})
				}); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "a file cannot be moved", words: "moving generated/image/a/1.png to generated/image/b/1.png",
			left: []string{"generated/image/b/1.png/in-the-way"},
			setup: func(t *testing.T, dir string, st *statefile.Store) {
				// A folder, not empty, where 1.png would go.
				blocker := filepath.Join(dir, "generated/image/b/1.png")
				if err := os.MkdirAll(blocker, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(blocker, "in-the-way"), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, st := mvDir(t)
			before, err := st.Resource(a("image.a"))
			if err != nil {
				t.Fatal(err)
			}
			tt.setup(t, dir, st)
			_, err = MoveRecord(MoveInput{Store: st, Src: a("image.a"), Dst: a("image.b"), Dir: "generated/image/b", WorkDir: dir, OutputDir: "generated"})
			if err == nil || !strings.Contains(err.Error(), tt.words) || (tt.is != nil && !errors.Is(err, tt.is)) {
				t.Fatalf("move: %v; want an error saying %q", err, tt.words)
			}
			snap, err := st.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			rec := snap.Resources[a("image.a")]
			if rec == nil || snap.Resources[a("image.b")] != nil || !snap.Protections[a("image.a")] {
				t.Fatalf("state holds %v after a failed move", addrs.SortedKeys(snap.Resources))
			}
			for i, o := range rec.Outputs {
				if o.Path != before.Outputs[i].Path || workdir.CheckFile(dir, o) != workdir.FileOK {
					t.Errorf("output %d: recorded at %s, its file there is not the recorded one", i, o.Path)
				}
			}
			var got []string
			filepath.WalkDir(filepath.Join(dir, "generated/image/b"), func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					r, _ := filepath.Rel(dir, p)
					got = append(got, filepath.ToSlash(r))
				}
				return nil
			})
			if strings.Join(got, " ") != strings.Join(tt.left, " ") {
				t.Errorf("the new folder holds %v, want %v", got, tt.left)
			}
			if len(tt.left) == 0 && mvExists(dir, "generated/image/b") {
				t.Error("the emptied new folder is left behind")
			}
		})
	}
}
