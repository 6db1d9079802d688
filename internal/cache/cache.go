package cache

import (
	"crypto/rand"
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
//
// Every path inside it is resolved as the working directory's are:
// through os.Root, one component at a time, following a symbolic link
// only while it stays inside. A link that leads out of the cache (a
// folder of it swapped for a link to somewhere else) is refused, naming
// it: nothing is removed, linked or written through it.
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

// entryRel is where the bytes of sha live, relative to the cache.
func entryRel(sha string) string {
	return filepath.Join("sha256", sha[:2], sha)
}

// entryPath is where the bytes of sha live.
func (c *Cache) entryPath(sha string) string {
	return filepath.Join(c.dir, entryRel(sha))
}

// open opens the cache's directory as a root, creating it when create is
// set; a missing cache is (nil, nil) otherwise.
func (c *Cache) open(create bool) (*os.Root, error) {
	if create {
		if err := os.MkdirAll(c.dir, 0o700); err != nil {
			return nil, fmt.Errorf("creating the cache directory: %w", err)
		}
	}
	r, err := os.OpenRoot(c.dir)
	if errors.Is(err, fs.ErrNotExist) && !create {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("opening the cache %s: %w", c.dir, err)
	}
	return r, nil
}

// confined explains err, from an operation on rel inside the cache, when
// a component of rel is a symbolic link leading out of it, and returns
// err as it is otherwise.
func (c *Cache) confined(err error, rel string) error {
	if err == nil {
		return nil
	}
	p := c.dir
	for _, part := range strings.Split(filepath.Clean(rel), string(filepath.Separator)) {
		p = filepath.Join(p, part)
		fi, lerr := os.Lstat(p)
		if lerr != nil {
			break
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		target, terr := filepath.EvalSymlinks(p)
		if terr != nil || !within(target, c.dir) {
			return fmt.Errorf("%w: %s is a symbolic link leading out of the cache %s (to %s); genform does not follow it: remove the link", ErrOutside, p, c.dir, target)
		}
	}
	return err
}

// ErrOutside is matched by the error of an operation refused because a
// path of the cache leads out of it through a symbolic link.
var ErrOutside = errors.New("a path of the cache leads out of it")

// within reports whether the absolute path p is dir or inside it, once
// the links of dir are resolved too.
func within(p, dir string) bool {
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
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

// Has reports whether the cache holds the bytes of sha, inside it.
func (c *Cache) Has(sha string) bool {
	if !validSHA(sha) {
		return false
	}
	r, err := c.open(false)
	if err != nil || r == nil {
		return false
	}
	defer r.Close()
	return c.has(r, sha)
}

func (c *Cache) has(r *os.Root, sha string) bool {
	fi, err := r.Lstat(entryRel(sha))
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
	r, err := c.open(true)
	if err != nil {
		return false, err
	}
	defer r.Close()
	rel := entryRel(sha)
	if c.has(r, sha) {
		return true, c.touch(r, rel)
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
	if err := r.MkdirAll(filepath.Dir(rel), 0o700); err != nil {
		return false, fmt.Errorf("creating the cache directory: %w", c.confined(err, rel))
	}
	// A hard link costs no space while the file lives on; a file on
	// another file system is copied, checking its bytes on the way.
	if err := linkIn(r, path, rel); err == nil || errors.Is(err, fs.ErrExist) {
		return true, c.touch(r, rel)
	} else if errors.Is(err, ErrOutside) {
		return false, err
	}
	if err := c.copyIn(r, path, rel, sha); err != nil {
		return false, err
	}
	return true, nil
}

// Put keeps data, bytes no file holds yet (an output a provider answered
// with inline), and returns their sha256: written under a temporary name,
// synced and renamed into place, so the entry is whole once Put returns.
// An entry already there is kept as it is.
func (c *Cache) Put(data []byte) (string, error) {
	sum := sha256.Sum256(data)
	sha := hex.EncodeToString(sum[:])
	r, err := c.open(true)
	if err != nil {
		return "", err
	}
	defer r.Close()
	rel := entryRel(sha)
	if c.has(r, sha) {
		return sha, c.touch(r, rel)
	}
	if err := r.MkdirAll(filepath.Dir(rel), 0o700); err != nil {
		return "", fmt.Errorf("creating the cache directory: %w", c.confined(err, rel))
	}
	tmpName, tmp, err := createTemp(r)
	if err != nil {
		return "", fmt.Errorf("writing to the cache: %w", err)
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = c.confined(r.Rename(tmpName, rel), rel)
	}
	if err != nil {
		r.Remove(tmpName)
		return "", fmt.Errorf("writing to the cache: %w", err)
	}
	if err := atomicfile.SyncDir(filepath.Join(c.dir, filepath.Dir(rel))); err != nil {
		return "", fmt.Errorf("writing to the cache: %w", err)
	}
	return sha, nil
}

// Adopt moves the file at path, whose bytes are sha's (hashed as it was
// written), into the cache: a file downloaded into Dir for it, under a
// name that begins with "tmp-" (which Prune clears when it is left
// behind). An entry already there is kept and the file removed.
func (c *Cache) Adopt(path, sha string) error {
	r, err := c.open(true)
	if err != nil {
		os.Remove(path)
		return err
	}
	defer r.Close()
	from, rerr := filepath.Rel(c.dir, path)
	if rerr != nil || strings.Contains(from, string(filepath.Separator)) {
		os.Remove(path)
		return fmt.Errorf("adopting %s: not a file of the cache %s", path, c.dir)
	}
	if !validSHA(sha) {
		r.Remove(from)
		return fmt.Errorf("%q is not a sha256", sha)
	}
	rel := entryRel(sha)
	if c.has(r, sha) {
		r.Remove(from)
		return c.touch(r, rel)
	}
	if err := r.MkdirAll(filepath.Dir(rel), 0o700); err != nil {
		r.Remove(from)
		return fmt.Errorf("creating the cache directory: %w", c.confined(err, rel))
	}
	if err := r.Rename(from, rel); err != nil {
		r.Remove(from)
		return fmt.Errorf("writing to the cache: %w", c.confined(err, rel))
	}
	return c.touch(r, rel)
}

// copyIn copies src to the entry rel through a temporary file, checking
// that the bytes are sha's.
func (c *Cache) copyIn(r *os.Root, src, rel, sha string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmpName, tmp, err := createTemp(r)
	if err != nil {
		return fmt.Errorf("writing to the cache: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			r.Remove(tmpName)
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
	if err := r.Rename(tmpName, rel); err != nil {
		return fmt.Errorf("writing to the cache: %w", c.confined(err, rel))
	}
	ok = true
	return nil
}

// createTemp creates a new file named tmp-* at the cache's top, for
// writing.
func createTemp(r *os.Root) (string, *os.File, error) {
	for range 100 {
		var b [8]byte
		rand.Read(b[:])
		name := "tmp-" + hex.EncodeToString(b[:])
		f, err := r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return name, f, err
	}
	return "", nil, errors.New("no free temporary name")
}

// touch stamps an entry as used now.
func (c *Cache) touch(r *os.Root, rel string) error {
	now := c.now()
	return c.confined(r.Chtimes(rel, now, now), rel)
}

// Restore puts the bytes of sha at dst, a path in a directory that
// exists: a hard link (or a copy) under a temporary name beside dst,
// checked against sha, then renamed over dst, so dst is never a partial
// or wrong file. It returns an error matching ErrMissing when the cache
// does not hold sha, one matching ErrDamaged when what it holds is not
// sha's bytes (the entry is then removed), and one matching ErrOutside
// when the entry's path leads out of the cache.
func (c *Cache) Restore(sha, dst string) error {
	if !validSHA(sha) {
		return ErrMissing
	}
	r, err := c.open(false)
	if err != nil {
		return err
	}
	if r == nil {
		return ErrMissing
	}
	defer r.Close()
	rel := entryRel(sha)
	if _, err := r.Lstat(rel); err != nil {
		if cerr := c.confined(err, rel); errors.Is(cerr, ErrOutside) {
			return cerr
		}
		return ErrMissing
	}
	if !c.has(r, sha) {
		return ErrMissing
	}
	// Stamped before it is linked: the output file that shares the inode
	// must keep the time genform records for it.
	if err := c.touch(r, rel); err != nil {
		return err
	}
	dir := filepath.Dir(dst)
	tmp := filepath.Join(dir, "."+filepath.Base(dst)+".restore")
	os.Remove(tmp)
	if err := linkOut(r, rel, tmp); err != nil {
		if err := copyOut(r, rel, tmp); err != nil {
			os.Remove(tmp)
			return c.confined(err, rel)
		}
	}
	got, err := HashFile(tmp)
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if got != sha {
		os.Remove(tmp)
		r.Remove(rel)
		return fmt.Errorf("%w (%s holds %s)", ErrDamaged, sha, got)
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return err
	}
	return atomicfile.SyncDir(dir)
}

// copyOut copies an entry to a new file at dst.
func copyOut(r *os.Root, rel, dst string) error {
	in, err := r.Open(rel)
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
// by a process that died are removed too. It walks the cache without
// following a symbolic link, so nothing outside it is removed. An entry
// whose sha256 pinned reports (bytes the state still needs and no file
// holds, such as an answer's whose file could not be written) is never
// removed; pinned may be nil.
func (c *Cache) Prune(max int64, pinned func(sha string) bool) (Pruned, error) {
	var p Pruned
	r, err := c.open(false)
	if err != nil || r == nil {
		return p, err
	}
	defer r.Close()
	type entry struct {
		path string
		size int64
		used time.Time
	}
	var own []entry
	err = fs.WalkDir(r.FS(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		if strings.HasPrefix(d.Name(), "tmp-") && !strings.Contains(path, "/") {
			if c.now().Sub(fi.ModTime()) > time.Hour {
				r.Remove(path)
			}
			return nil
		}
		if !validSHA(d.Name()) || links(fi) > 1 || pinned != nil && pinned(d.Name()) {
			return nil
		}
		own = append(own, entry{filepath.FromSlash(path), fi.Size(), fi.ModTime()})
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
		if err := r.Remove(e.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return p, fmt.Errorf("pruning the cache: %w", c.confined(err, e.path))
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
