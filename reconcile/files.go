package reconcile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/genform/genform/internal/cache"
	"github.com/genform/genform/statefile"
)

type fileState int

const (
	fileOK fileState = iota
	fileMissing
	fileModified
)

// checkFile compares an output file on disk with its record: size and
// modification time first, and the sha256 only when one of them differs,
// so a no-op plan reads no file contents.
func checkFile(dir string, o statefile.Output) fileState {
	if o.Path == "" || o.SHA256 == "" {
		return fileMissing
	}
	fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(o.Path)))
	if err != nil || !fi.Mode().IsRegular() {
		return fileMissing
	}
	if fi.Size() == o.Size && fi.ModTime().Equal(o.ModTime) {
		return fileOK
	}
	if fi.Size() != o.Size {
		return fileModified
	}
	sum, err := cache.HashFile(filepath.Join(dir, filepath.FromSlash(o.Path)))
	if err != nil || sum != o.SHA256 {
		return fileModified
	}
	return fileOK
}

// The operations below change the disk, and each resolves its path at
// the moment it acts, through os.Root: one component at a time below the
// working directory, with openat, following a symbolic link only while it
// stays inside. A path checked when apply recorded it may have changed
// since: a directory replaced by a link to somewhere else must not make a
// replace delete files there, or a change of dir move them in. Paths are
// relative to the working directory root, with forward slashes as the
// state records them. (Reads, such as checkFile's, go through the plain
// path: a plan checks thousands of files and changes none.)

// openWorkDir opens the working directory for confined operations.
func openWorkDir(root string) (*os.Root, error) {
	if root == "" {
		root = "."
	}
	return os.OpenRoot(root)
}

// removeFile removes rel, treating an already missing file as removed.
// It removes nothing outside root: a path that leads out through a
// symbolic link is an error saying which link.
func removeFile(root, rel string) error {
	r, err := openWorkDir(root)
	if err != nil {
		return err
	}
	defer r.Close()
	err = r.Remove(filepath.FromSlash(rel))
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return outsideError(root, err, rel)
}

// renameFile moves from to to, both inside root, and fails, moving
// nothing, when either leads out of it.
func renameFile(root, from, to string) error {
	r, err := openWorkDir(root)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.Rename(filepath.FromSlash(from), filepath.FromSlash(to)); err != nil {
		return outsideError(root, err, from, to)
	}
	return nil
}

// makeDir creates the directory rel and its parents inside root.
func makeDir(root, rel string) error {
	r, err := openWorkDir(root)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.MkdirAll(filepath.FromSlash(rel), 0o755); err != nil {
		return outsideError(root, err, path.Join(rel, "x"))
	}
	return nil
}

// outsideError explains err when one of the paths leads outside root
// through a symbolic link, and returns it as it is otherwise.
func outsideError(root string, err error, paths ...string) error {
	for _, p := range paths {
		if cerr := CheckInside(root, path.Dir(filepath.ToSlash(p))); cerr != nil {
			return fmt.Errorf("%w; nothing outside the working directory was changed", cerr)
		}
	}
	return err
}

// pruneDirs removes dir and its parents up to (not including) stop while
// they are empty directories, so deleting a resource leaves no empty
// folders behind. A symbolic link is not a directory here: it stays, and
// so does what it points to.
func pruneDirs(root, dir, stop string) {
	r, err := openWorkDir(root)
	if err != nil {
		return
	}
	defer r.Close()
	stop = filepath.Clean(filepath.FromSlash(stop))
	for d := filepath.Clean(filepath.FromSlash(dir)); d != stop && d != "." && d != string(filepath.Separator); d = filepath.Dir(d) {
		if fi, err := r.Lstat(d); err != nil || !fi.IsDir() {
			return
		}
		if r.Remove(d) != nil {
			return
		}
	}
}

func nowUTC() time.Time { return time.Now().UTC() }

// CheckInside refuses a path (relative to root) that leads outside root
// through a symbolic link on disk. Configured paths are checked as text
// when they are loaded; this check is the one that sees the disk, made
// before genform writes or removes anything there. Parts that do not
// exist yet are fine: genform creates them as plain directories.
func CheckInside(root, rel string) error {
	if root == "" {
		root = "."
	}
	rootAbs, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	clean := filepath.Clean(filepath.FromSlash(rel))
	if clean == "." {
		return nil
	}
	parts := strings.Split(clean, string(filepath.Separator))
	cur := rootAbs
	for i, part := range parts {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if err != nil {
			return nil
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			continue
		}
		// Where root itself leads is needed only now: resolving it for
		// every check was most of the system calls of one, and an apply
		// makes one for every file it downloads.
		rootReal, err := filepath.EvalSymlinks(rootAbs)
		if err != nil {
			return err
		}
		link := filepath.ToSlash(filepath.Join(parts[:i+1]...))
		real, err := filepath.EvalSymlinks(cur)
		if err != nil {
			return fmt.Errorf("%s: the symbolic link %s cannot be followed (%v); replace it with a directory inside the working directory", filepath.ToSlash(clean), link, err)
		}
		if r, err := filepath.Rel(rootReal, real); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return fmt.Errorf("%s leads outside the working directory through the symbolic link %s (to %s); genform only writes inside the working directory: replace the link with a directory", filepath.ToSlash(clean), link, real)
		}
	}
	return nil
}
