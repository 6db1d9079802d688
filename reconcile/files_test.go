package reconcile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// linkedWorkDir makes a working directory whose out/a is a symbolic link
// to a directory outside holding 0.png, and whose in/b is a link to a
// directory inside: what a user may do to a directory after apply.
func linkedWorkDir(t *testing.T) (work, outside string) {
	t.Helper()
	parent := t.TempDir()
	work, outside = filepath.Join(parent, "work"), filepath.Join(parent, "outside")
	for _, d := range []string{filepath.Join(work, "out"), filepath.Join(work, "in"), filepath.Join(work, "real"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(outside, "0.png"), filepath.Join(work, "real", "0.png")} {
		if err := os.WriteFile(f, []byte("png"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(work, "out", "a")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	if err := os.Symlink(filepath.Join("..", "real"), filepath.Join(work, "in", "b")); err != nil {
		t.Fatal(err)
	}
	return work, outside
}

// TestFileOperationsStayInside: removing, moving and pruning through a
// link that leads outside the working directory changes nothing there and
// says which link; through a link that stays inside, they work.
func TestFileOperationsStayInside(t *testing.T) {
	work, outside := linkedWorkDir(t)
	outsideFile := filepath.Join(outside, "0.png")

	err := removeFile(work, "out/a/0.png")
	if err == nil || !strings.Contains(err.Error(), "through the symbolic link out/a") {
		t.Errorf("removeFile through the outside link: %v", err)
	}
	err = renameFile(work, "out/a/0.png", "real/1.png")
	if err == nil || !strings.Contains(err.Error(), "through the symbolic link out/a") {
		t.Errorf("renameFile from the outside link: %v", err)
	}
	err = renameFile(work, "real/0.png", "out/a/9.png")
	if err == nil || !strings.Contains(err.Error(), "through the symbolic link out/a") {
		t.Errorf("renameFile into the outside link: %v", err)
	}
	if err := makeDir(work, "out/a/sub"); err == nil {
		t.Error("makeDir through the outside link succeeded")
	}
	pruneDirs(work, "out/a", ".")
	if _, err := os.Stat(outsideFile); err != nil {
		t.Fatalf("the file outside is gone: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(work, "out", "a")); err != nil {
		t.Errorf("pruneDirs removed the link: %v", err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("outside holds %d entries, want the one file", len(entries))
	}

	// A link that stays inside is followed.
	if err := renameFile(work, "in/b/0.png", "in/b/1.png"); err != nil {
		t.Errorf("renameFile inside: %v", err)
	}
	if err := removeFile(work, "in/b/1.png"); err != nil {
		t.Errorf("removeFile inside: %v", err)
	}
	if err := removeFile(work, "in/b/missing.png"); err != nil {
		t.Errorf("removeFile of a missing file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(work, "real", "1.png")); !os.IsNotExist(err) {
		t.Errorf("real/1.png: %v, want removed", err)
	}
	if err := makeDir(work, "new/dir"); err != nil {
		t.Errorf("makeDir: %v", err)
	}
	pruneDirs(work, "new/dir", ".")
	if _, err := os.Stat(filepath.Join(work, "new")); !os.IsNotExist(err) {
		t.Errorf("pruneDirs left new: %v", err)
	}
}
