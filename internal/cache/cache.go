package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/genform/genform/internal/atomicfile"
)

// ErrMissing is returned by Restore when the cache does not hold the
// bytes asked for (never kept, or pruned).
var ErrMissing = errors.New("not in the cache")

// ErrDamaged is matched by Restore's error when the cached bytes are no
// longer those of their hash (an output file that shared them through a
// hard link was edited in place); the entry is removed.
var ErrDamaged = errors.New("the cached bytes do not match their sha256")

// Cache is a cache directory. Its methods may be called from many
// goroutines, as long as one process at a time uses the directory (genform
// holds the state's lock while it does).
type Cache struct {
	dir string
	// now is the clock entries are stamped with; tests replace it.
	now func() time.Time
}

// New returns the cache in dir (an absolute path; created when first
// needed, mode 0700).
func New(dir string) *Cache {
	return &Cache{dir: dir, now: time.Now}
}

// Dir is the cache's directory.
func (c *Cache) Dir() string { return c.dir }

// entryPath is where the bytes of sha live.
func (c *Cache) entryPath(sha string) string {
	return filepath.Join(c.dir, "sha256", sha[:2], sha)
}

// validSHA reports whether sha is a sha256 as genform writes it: 64
// lower-case hex digits. Anything else never names an entry, so no hash
// read from a state can name a path outside the cache.
func validSHA(sha string) bool {
	if len(sha) != sha256.Size*2 {
		return false
	}
	for i := 0; i < len(sha); i++ {
		if c := sha[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Path is the file holding the bytes of sha, and whether the cache holds
// them. Reading it does not count as a use for pruning.
func (c *Cache) Path(sha string) (string, bool) {
	if !c.Has(sha) {
		return "", false
	}
	return c.entryPath(sha), true
}

// Has reports whether the cache holds the bytes of sha.
func (c *Cache) Has(sha string) bool {
	if !validSHA(sha) {
		return false
	}
	fi, err := os.Lstat(c.entryPath(sha))
	return err == nil && fi.Mode().IsRegular()
}

// Keep puts the file at path in the cache under sha, the hash its record
// gives it. A file whose size and modification time are still the
// recorded ones is taken as recorded, as plan does; any other is hashed,
// and kept only if its bytes are still sha's (a file the user changed is
// not what the record describes). It reports whether the cache holds sha
// afterwards; a missing file keeps nothing and is no error.
func (c *Cache) Keep(path, sha string, size int64, mtime time.Time) (bool, error) {
	if !validSHA(sha) {
		return false, nil
	}
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c.Has(sha), nil
	}
	if err != nil {
		return false, err
	}
	if !fi.Mode().IsRegular() {
		return c.Has(sha), nil
	}
	dst := c.entryPath(sha)
	if c.Has(sha) {
		return true, c.touch(dst)
	}
	if fi.Size() != size || !fi.ModTime().Equal(mtime) {
		got, err := HashFile(path)
		if err != nil {
			return false, err
		}
		if got != sha {
			return false, nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return false, fmt.Errorf("creating the cache directory: %w", err)
	}
	// A hard link costs no space while the file lives on; a file on
	// another file system is copied, checking its bytes on the way.
	if err := os.Link(path, dst); err == nil {
		return true, c.touch(dst)
	} else if errors.Is(err, fs.ErrExist) {
		return true, c.touch(dst)
	}
	if err := c.copyIn(path, dst, sha); err != nil {
		return false, err
	}
	return true, nil
}

// Adopt moves the file at path, whose bytes are sha's (hashed as it was
// written), into the cache: a file downloaded into Dir for it, under a
// name that begins with "tmp-" (which Prune clears when it is left
// behind). An entry already there is kept and the file removed.
func (c *Cache) Adopt(path, sha string) error {
	if !validSHA(sha) {
		os.Remove(path)
		return fmt.Errorf("%q is not a sha256", sha)
	}
	dst := c.entryPath(sha)
	if c.Has(sha) {
		os.Remove(path)
		return c.touch(dst)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		os.Remove(path)
		return fmt.Errorf("creating the cache directory: %w", err)
	}
	if err := os.Rename(path, dst); err != nil {
		os.Remove(path)
		return fmt.Errorf("writing to the cache: %w", err)
	}
	return c.touch(dst)
}

// copyIn copies src to the entry dst through a temporary file, checking
// that the bytes are sha's.
func (c *Cache) copyIn(src, dst, sha string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(c.dir, "tmp-*")
	if err != nil {
		return fmt.Errorf("writing to the cache: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(tmp, h), in); err != nil {
		return fmt.Errorf("copying %s to the cache: %w", src, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sha {
		// Changed while it was read: nothing to keep.
		return nil
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("writing to the cache: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing to the cache: %w", err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return fmt.Errorf("writing to the cache: %w", err)
	}
	ok = true
	return nil
}

// touch stamps an entry as used now.
func (c *Cache) touch(path string) error {
	now := c.now()
	return os.Chtimes(path, now, now)
}

// Restore puts the bytes of sha at dst, a path in a directory that
// exists: a hard link (or a copy) under a temporary name beside dst,
// checked against sha, then renamed over dst, so dst is never a partial
// or wrong file. It returns an error matching ErrMissing when the cache
// does not hold sha, and one matching ErrDamaged when what it holds is
// not sha's bytes (the entry is then removed).
func (c *Cache) Restore(sha, dst string) error {
	if !c.Has(sha) {
		return ErrMissing
	}
	src := c.entryPath(sha)
	// Stamped before it is linked: the output file that shares the inode
	// must keep the time genform records for it.
	if err := c.touch(src); err != nil {
		return err
	}
	dir := filepath.Dir(dst)
	tmp := filepath.Join(dir, "."+filepath.Base(dst)+".restore")
	os.Remove(tmp)
	if err := os.Link(src, tmp); err != nil {
		if err := copyOut(src, tmp); err != nil {
			os.Remove(tmp)
			return err
		}
	}
	got, err := HashFile(tmp)
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if got != sha {
		os.Remove(tmp)
		os.Remove(src)
		return fmt.Errorf("%w (%s holds %s)", ErrDamaged, sha, got)
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return err
	}
	return atomicfile.SyncDir(dir)
}

// copyOut copies an entry to a new file at dst.
func copyOut(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Pruned says what Prune removed and what the cache holds afterwards.
type Pruned struct {
	Removed int
	Freed   int64
	// Held is the size of the entries left that hold bytes of their own
	// (no output file shares them).
	Held int64
}

// Prune removes the entries used least recently until those that hold
// bytes of their own take at most max bytes. Entries an output file
// shares through a hard link cost no space and stay. Temporary files left
// by a process that died are removed too.
func (c *Cache) Prune(max int64) (Pruned, error) {
	var p Pruned
	type entry struct {
		path string
		size int64
		used time.Time
	}
	var own []entry
	err := filepath.WalkDir(c.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path == c.dir {
				return filepath.SkipDir
			}
			return err
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		if strings.HasPrefix(d.Name(), "tmp-") && filepath.Dir(path) == c.dir {
			if c.now().Sub(fi.ModTime()) > time.Hour {
				os.Remove(path)
			}
			return nil
		}
		if !validSHA(d.Name()) || links(fi) > 1 {
			return nil
		}
		own = append(own, entry{path, fi.Size(), fi.ModTime()})
		p.Held += fi.Size()
		return nil
	})
	if err != nil {
		return p, fmt.Errorf("reading the cache %s: %w", c.dir, err)
	}
	// Oldest use first.
	slices.SortFunc(own, func(a, b entry) int { return a.used.Compare(b.used) })
	for _, e := range own {
		if p.Held <= max {
			break
		}
		if err := os.Remove(e.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return p, fmt.Errorf("pruning the cache: %w", err)
		}
		p.Removed++
		p.Freed += e.size
		p.Held -= e.size
	}
	return p, nil
}

// HashFile is the hex sha256 of the file at path, as the state records
// outputs.
func HashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
