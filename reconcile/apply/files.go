package apply

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/genform/genform/internal/workdir"
)

// The operations below change the disk, and each resolves its path at
// the moment it acts, through os.Root: one component at a time below the
// working directory, with openat, following a symbolic link only while it
// stays inside. A path checked when apply recorded it may have changed
// since: a directory replaced by a link to somewhere else must not make a
// replace delete files there, or a change of dir move them in. Paths are
// relative to the working directory root, with forward slashes as the
// state records them. (Reads, such as workdir.CheckFile's, go through the
// plain path: a plan checks thousands of files and changes none.)

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
		if cerr := workdir.CheckInside(root, path.Dir(filepath.ToSlash(p))); cerr != nil {
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
