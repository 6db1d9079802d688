package statefile

import (
	"errors"
	"runtime"
	"strings"
	"testing"
)

// TestPathsOutsideTheWorkingDirectory checks that a resource whose
// directory or output path leads outside the working directory is neither
// written nor read: acting on such a record would delete, move or publish a
// file genform does not own.
func TestPathsOutsideTheWorkingDirectory(t *testing.T) {
	tests := []struct {
		name string
		dir  string
		path string
		want string // "" when the record is fine
	}{
		{"the usual paths", "generated/image/hero", "generated/image/hero/0.png", ""},
		{"no files yet", "", "", ""},
		{"a name starting with two dots", "..generated", "..generated/0.png", ""},
		{"dots that stay inside", "generated/../out", "out/./0.png", ""},
		{"parent directory", "generated", "../0.png", `output 0: path "../0.png" leads outside the working directory`},
		{"parent directory after cleaning", "generated", "a/b/../../../0.png", "leads outside the working directory"},
		{"directory is the parent", "..", "generated/0.png", `directory ".." leads outside the working directory`},
		{"backslash parent", "generated", `..\0.png`, "leads outside the working directory"},
		{"absolute path", "generated", "/etc/passwd", "is absolute"},
		{"absolute directory", "/tmp", "generated/0.png", "is absolute"},
		{"backslash root", "generated", `\Windows\0.png`, "is absolute"},
		{"NUL", "generated", "generated/0.png\x00.txt", "NUL"},
	}
	if runtime.GOOS == "windows" {
		tests = append(tests, struct{ name, dir, path, want string }{"volume", "generated", `C:0.png`, "is absolute"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := sampleResource("image.hero", 1)
			rec.Dir = tt.dir
			rec.Outputs[0].Path = tt.path

			// Written through the store.
			s := openNew(t)
			err := s.Update(func(tx *Tx) error { return tx.Record(rec) })
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Record refused a path inside the working directory: %v", err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "image.hero") {
				t.Errorf("Record error = %v, want one naming image.hero and saying %q", err, tt.want)
			}

			// Written past the store, as a hand-edited or hostile file would.
			st := memOf(s)
			s.Close()
			st.edit(func(d memData) { d[string(bucketResources)][string(key(rec.Addr))] = encodeResource(rec) })
			s, err = openMem(st, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			_, snapErr := s.Snapshot()
			_, resErr := s.Resource(rec.Addr)
			checkErr := s.Check()
			if tt.want == "" {
				if snapErr != nil || resErr != nil || checkErr != nil {
					t.Errorf("reading a record inside the working directory: %v, %v, %v", snapErr, resErr, checkErr)
				}
				return
			}
			for what, err := range map[string]error{"Snapshot": snapErr, "Resource": resErr, "Check": checkErr} {
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "genform state rm image.hero") {
					t.Errorf("%s error = %v, want a CorruptError saying %q and how to forget the resource", what, err, tt.want)
				}
			}
		})
	}
}
