package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// output writes an output file and returns its path, hash, size and mtime.
func output(t *testing.T, dir, name string, data []byte) (string, string, int64, time.Time) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return p, sum(data), fi.Size(), fi.ModTime()
}

func newCache(t *testing.T) (*Cache, string) {
	t.Helper()
	root := t.TempDir()
	out := filepath.Join(root, "generated")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	return New(filepath.Join(root, ".genform", "cache")), out
}

// TestKeepThenRestore: a file kept before it is removed comes back with
// the same bytes at another path, and the cache still holds it.
func TestKeepThenRestore(t *testing.T) {
	c, out := newCache(t)
	data := []byte("the bytes a generation made")
	p, sha, size, mtime := output(t, out, "0.png", data)
	kept, err := c.Keep(p, sha, size, mtime)
	if err != nil || !kept {
		t.Fatalf("Keep = %v, %v", kept, err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(out, "1.png")
	if err := c.Restore(sha, dst); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(dst); !bytes.Equal(got, data) {
		t.Errorf("restored %q", got)
	}
	if !c.Has(sha) {
		t.Error("the cache lost the entry by restoring it")
	}
	if left, _ := filepath.Glob(filepath.Join(out, ".*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestKeepRefusesChangedFile: a file whose bytes are no longer the
// recorded ones is not kept under the recorded hash.
func TestKeepRefusesChangedFile(t *testing.T) {
	c, out := newCache(t)
	p, sha, _, _ := output(t, out, "0.png", []byte("original"))
	if err := os.WriteFile(p, []byte("edited by hand"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	// The recorded size and mtime differ from the file's: it is hashed.
	kept, err := c.Keep(p, sha, 8, fi.ModTime().Add(-time.Hour))
	if err != nil || kept || c.Has(sha) {
		t.Errorf("Keep of an edited file = %v, %v (has %v)", kept, err, c.Has(sha))
	}
	// A missing file keeps nothing and is no error.
	if kept, err := c.Keep(filepath.Join(out, "gone.png"), sha, 8, time.Time{}); kept || err != nil {
		t.Errorf("Keep of a missing file = %v, %v", kept, err)
	}
	// A hash that is not one never names a path.
	if kept, err := c.Keep(p, "../../etc/passwd", 1, time.Time{}); kept || err != nil {
		t.Errorf("Keep under a bad hash = %v, %v", kept, err)
	}
}

// TestRestoreDamaged: an entry whose bytes were changed through a hard
// link is refused, removed, and dst is left as it was.
func TestRestoreDamaged(t *testing.T) {
	c, out := newCache(t)
	p, sha, size, mtime := output(t, out, "0.png", []byte("original bytes"))
	if _, err := c.Keep(p, sha, size, mtime); err != nil {
		t.Fatal(err)
	}
	// The output shares the entry's inode: editing it in place edits the
	// entry.
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("EDITED"), 0)
	f.Close()
	dst := filepath.Join(out, "dst.png")
	os.WriteFile(dst, []byte("what was there"), 0o644)
	err = c.Restore(sha, dst)
	if !errors.Is(err, ErrDamaged) {
		t.Fatalf("Restore = %v, want ErrDamaged", err)
	}
	if got, _ := os.ReadFile(dst); string(got) != "what was there" {
		t.Errorf("dst = %q after a refused restore", got)
	}
	if c.Has(sha) {
		t.Error("the damaged entry is still there")
	}
	if err := c.Restore(sha, dst); !errors.Is(err, ErrMissing) {
		t.Errorf("Restore after removal = %v, want ErrMissing", err)
	}
}

// TestPrune: entries of their own are removed oldest use first down to
// the budget; an entry that an output file shares costs nothing and
// stays.
func TestPrune(t *testing.T) {
	c, out := newCache(t)
	clock := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	c.now = func() time.Time { return clock }
	var shas []string
	for i, name := range []string{"a", "b", "c"} {
		p, sha, size, mtime := output(t, out, name, bytes.Repeat([]byte{byte('a' + i)}, 1000))
		clock = clock.Add(time.Hour)
		if _, err := c.Keep(p, sha, size, mtime); err != nil {
			t.Fatal(err)
		}
		os.Remove(p)
		shas = append(shas, sha)
	}
	// "a" is used again: it becomes the newest.
	clock = clock.Add(time.Hour)
	shared := filepath.Join(out, "shared")
	if err := c.Restore(shas[0], shared); err != nil {
		t.Fatal(err)
	}
	os.Remove(shared)
	// d is kept while its output file lives on (a hard link).
	p, sha, size, mtime := output(t, out, "d", bytes.Repeat([]byte{'d'}, 5000))
	if _, err := c.Keep(p, sha, size, mtime); err != nil {
		t.Fatal(err)
	}
	got, err := c.Prune(1500, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Removed != 2 || got.Freed != 2000 || got.Held != 1000 {
		t.Errorf("Prune = %+v, want b and c removed, a held", got)
	}
	if !c.Has(shas[0]) || c.Has(shas[1]) || c.Has(shas[2]) || !c.Has(sha) {
		t.Errorf("after prune: a %v b %v c %v d %v", c.Has(shas[0]), c.Has(shas[1]), c.Has(shas[2]), c.Has(sha))
	}
	// A cache never made prunes to nothing, without error.
	if p, err := New(filepath.Join(t.TempDir(), "none")).Prune(0, nil); err != nil || p != (Pruned{}) {
		t.Errorf("Prune of no cache = %+v, %v", p, err)
	}
}

// TestKeepCopiesAcrossFileSystems: where a hard link cannot be made, the
// file is copied, and the copy checked.
func TestKeepCopiesAcrossFileSystems(t *testing.T) {
	c, out := newCache(t)
	p, sha, size, mtime := output(t, out, "0.png", []byte("copied bytes"))
	if err := os.MkdirAll(filepath.Dir(c.entryPath(sha)), 0o700); err != nil {
		t.Fatal(err)
	}
	r, err := c.open(false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := c.copyIn(r, p, entryRel(sha), sha); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(c.entryPath(sha))
	if err != nil || links(fi) != 1 {
		t.Fatalf("copied entry: %v links, %v", links(fi), err)
	}
	// Kept already: Keep only stamps it.
	if kept, err := c.Keep(p, sha, size, mtime); !kept || err != nil {
		t.Errorf("Keep = %v, %v", kept, err)
	}
	if fi, _ := os.Stat(c.entryPath(sha)); links(fi) != 1 {
		t.Error("Keep linked an entry the cache already held")
	}
}

// TestAdopt: a file downloaded into the cache directory becomes the entry
// of its hash, and a second copy of the same bytes is dropped.
func TestAdopt(t *testing.T) {
	c, _ := newCache(t)
	if err := os.MkdirAll(c.Dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	data := []byte("downloaded for the history")
	for range 2 {
		p := filepath.Join(c.Dir(), "tmp-keep-0.png")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := c.Adopt(p, sum(data)); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Error("the downloaded file is still there")
		}
	}
	if got, _ := os.ReadFile(c.entryPath(sum(data))); !bytes.Equal(got, data) {
		t.Errorf("entry holds %q", got)
	}
	if err := c.Adopt(filepath.Join(c.Dir(), "tmp-x"), "nope"); err == nil {
		t.Error("Adopt took a hash that is none")
	}
}

// TestLinksLeadingOutAreRefused: a folder of the cache swapped for a
// symbolic link to another folder is not followed: keeping a file does
// not link it out there, restoring does not read or remove what is
// there, pruning removes nothing there; each says which link.
func TestLinksLeadingOutAreRefused(t *testing.T) {
	c, out := newCache(t)
	data := []byte("kept bytes")
	p, sha, size, mtime := output(t, out, "0.png", data)
	if kept, err := c.Keep(p, sha, size, mtime); !kept || err != nil {
		t.Fatalf("Keep = %v, %v", kept, err)
	}
	// The entry's folder is swapped for a link to a folder outside,
	// holding a file of the entry's name with other bytes.
	elsewhere := t.TempDir()
	victim := filepath.Join(elsewhere, sha)
	if err := os.WriteFile(victim, []byte("someone else's file"), 0o644); err != nil {
		t.Fatal(err)
	}
	folder := filepath.Dir(c.entryPath(sha))
	if err := os.RemoveAll(folder); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, folder); err != nil {
		t.Fatal(err)
	}
	if c.Has(sha) {
		t.Error("Has follows a link out of the cache")
	}
	err := c.Restore(sha, filepath.Join(out, "1.png"))
	if !errors.Is(err, ErrOutside) || !strings.Contains(err.Error(), folder) {
		t.Errorf("Restore = %v, want ErrOutside naming %s", err, folder)
	}
	// A file kept under the linked folder's name is refused.
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	if _, err := c.Keep(p, sha, fi.Size(), fi.ModTime()); !errors.Is(err, ErrOutside) {
		t.Errorf("Keep through the link = %v, want ErrOutside", err)
	}
	if _, err := c.Prune(0, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(victim); err != nil || string(got) != "someone else's file" {
		t.Errorf("the file outside the cache is %q, %v", got, err)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 1 {
		t.Errorf("the folder outside holds %d entries, want 1", len(entries))
	}
}

// TestPutThenRestore: bytes no file holds (an inline answer) are kept
// whole under their sha256, a second Put of them keeps the one entry,
// and they come back at any path.
func TestPutThenRestore(t *testing.T) {
	c, out := newCache(t)
	data := []byte("an image answered inline")
	sha, err := c.Put(data)
	if err != nil {
		t.Fatal(err)
	}
	if sha != sum(data) || !c.Has(sha) {
		t.Fatalf("Put = %s (has %v), want %s", sha, c.Has(sha), sum(data))
	}
	if again, err := c.Put(data); err != nil || again != sha {
		t.Fatalf("Put again = %s, %v", again, err)
	}
	if left, _ := filepath.Glob(filepath.Join(c.Dir(), "tmp-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	dst := filepath.Join(out, "0.png")
	if err := c.Restore(sha, dst); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(dst); !bytes.Equal(got, data) {
		t.Errorf("restored %q", got)
	}
}

// TestPrunePinned: an entry the state still needs is never pruned, over
// any budget, while the others are.
func TestPrunePinned(t *testing.T) {
	c, _ := newCache(t)
	need, err := c.Put(bytes.Repeat([]byte{'n'}, 1000))
	if err != nil {
		t.Fatal(err)
	}
	spare, err := c.Put(bytes.Repeat([]byte{'s'}, 1000))
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Prune(0, func(sha string) bool { return sha == need })
	if err != nil {
		t.Fatal(err)
	}
	if !c.Has(need) || c.Has(spare) || got.Removed != 1 {
		t.Errorf("Prune = %+v: pinned kept %v, spare kept %v", got, c.Has(need), c.Has(spare))
	}
}
