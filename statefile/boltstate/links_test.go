package boltstate

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genform/genform/statefile"
	"github.com/genform/genform/statefile/filetest"
)

// symlink makes a link at path to target, or skips the test where there
// are none.
func symlink(t *testing.T, target, path string) {
	t.Helper()
	if err := os.Symlink(target, path); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
}

// A state file that is a link to a file elsewhere is refused by every kind
// of Open, and the file it leads to is neither changed nor locked (no
// holder info appears beside either).
func TestStateFileLinkRefused(t *testing.T) {
	target, _ := currentFile(t)
	contents := filetest.ReadFile(t, target)
	dir := t.TempDir()
	path := filepath.Join(dir, "state.db")
	symlink(t, target, path)
	for _, opts := range []statefile.Options{{}, {Create: true}, {ReadOnly: true}} {
		_, err := Open(path, opts)
		if err == nil || !strings.Contains(err.Error(), "state file "+path+" is a symbolic link (to "+target+")") {
			t.Errorf("Open(%+v) = %v, want the link refused", opts, err)
		}
	}
	if !bytes.Equal(filetest.ReadFile(t, target), contents) {
		t.Error("the file the link leads to was changed")
	}
	for _, p := range []string{path, target} {
		if _, err := os.Lstat(p + infoSuffix); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s was written", p+infoSuffix)
		}
	}
	// A dangling link is not a missing file to create either.
	dangling := filepath.Join(dir, "new.db")
	symlink(t, filepath.Join(dir, "elsewhere.db"), dangling)
	if _, err := Open(dangling, statefile.Options{Create: true}); err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
		t.Errorf("Open(Create) through a dangling link = %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "elsewhere.db")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("a file was created through the dangling link")
	}
}

// The holder info a writer keeps beside the state is never written
// through a link: the writer refuses it. A reader writes no info, so the
// link does not stop it.
func TestLockInfoLinkRefused(t *testing.T) {
	path, _ := currentFile(t)
	victim := filepath.Join(t.TempDir(), "victim.txt")
	write(t, victim, []byte("a file of the user's\n"))
	symlink(t, victim, path+infoSuffix)
	_, err := Open(path, statefile.Options{Command: "apply"})
	if err == nil || !strings.Contains(err.Error(), "the lock holder file "+path+infoSuffix+" is a symbolic link") {
		t.Fatalf("Open = %v, want the link refused", err)
	}
	if got := filetest.ReadFile(t, victim); string(got) != "a file of the user's\n" {
		t.Errorf("the file the link leads to holds %q", got)
	}
	r, err := Open(path, statefile.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("a reader: %v", err)
	}
	r.Close()
	// Nor is the info read through a link for a locked file's message.
	if h := readHolder(path); h != nil {
		t.Errorf("readHolder followed the link: %+v", h)
	}
}

// The copy made before a schema upgrade is never written through a link:
// the upgrade is refused, and the file stays as it was.
func TestBackupLinkRefused(t *testing.T) {
	path := oldSchema1File(t)
	contents := filetest.ReadFile(t, path)
	victim := filepath.Join(t.TempDir(), "victim.txt")
	write(t, victim, []byte("a file of the user's\n"))
	symlink(t, victim, backupPath(path, 1))
	_, err := Open(path, statefile.Options{})
	if err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
		t.Fatalf("Open = %v, want the link refused", err)
	}
	if got := filetest.ReadFile(t, victim); string(got) != "a file of the user's\n" {
		t.Errorf("the file the link leads to holds %q", got)
	}
	if !bytes.Equal(filetest.ReadFile(t, path), contents) {
		t.Error("the state file was changed")
	}
	if fi, err := os.Lstat(backupPath(path, 1)); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link was removed or replaced: %v", err)
	}
}
