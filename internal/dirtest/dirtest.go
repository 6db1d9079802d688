package dirtest

import (
	"os"
	"path/filepath"
	"testing"
)

// Write writes files, each a slash-separated path below dir and its
// text, into dir, making dir and the directories on the way. Whatever
// stands at a path is removed first, so that a link left there is
// replaced rather than written through. The first error fails t.
func Write(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		os.Remove(p)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// New is a new directory holding files (see Write), removed when t
// ends.
func New(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	Write(t, dir, files)
	return dir
}
