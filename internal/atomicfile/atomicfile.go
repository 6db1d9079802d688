package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// maxLinks bounds a chain of symbolic links, as Linux's ELOOP limit does.
const maxLinks = 40

// An Option changes how Write and WriteFile write a file.
type Option func(*options)

type options struct {
	keepPerm bool
	pattern  string
	noFollow bool
	group    *Group
}

// ErrNotRegular is wrapped by the error of a write with RegularOnly to a
// path that holds something else than a regular file.
var ErrNotRegular = errors.New("not a regular file")

// RegularOnly makes Write replace only a regular file, or create one: a
// symbolic link, a device, a FIFO at path is an error (wrapping
// ErrNotRegular) instead of being followed or written to. The state
// package writes the files beside the state file this way, so that a link
// planted there cannot lead a write elsewhere. The rename that puts the
// new file in place replaces whatever is at path by then and never
// follows a link, so a link swapped in after the check is replaced, not
// written through.
func RegularOnly() Option {
	return func(o *options) { o.noFollow = true }
}

// KeepPermissions makes a replaced file keep its permission bits instead of
// taking perm, as a file edited in place would; perm still applies to a new
// file. genform fmt uses it: formatting a file must not change who may read
// it.
func KeepPermissions() Option {
	return func(o *options) { o.keepPerm = true }
}

// TempPattern names the temporary file as os.CreateTemp's pattern does: the
// last "*" becomes a random string. The default is "."+name+".*.tmp", name
// being the target's base name. A caller that removes the leftovers of a
// killed process picks a pattern it can recognise them by.
func TempPattern(pattern string) Option {
	return func(o *options) { o.pattern = pattern }
}

// WriteFile writes data to path atomically (see Write).
func WriteFile(path string, data []byte, perm os.FileMode, opts ...Option) error {
	return Write(path, perm, func(w io.Writer) error {
		if _, err := w.Write(data); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		return nil
	}, opts...)
}

// Write replaces path with what write writes to w: a temporary file beside
// it, synced, then renamed over it, and the directory synced (with
// InGroup, a sync of the file system shared with other writers stands for
// each of the two). The file gets
// permission bits perm exactly, not narrowed by the umask (they are set with
// a chmod), unless KeepPermissions keeps those of the file it replaces.
// The temporary file is made 0600, so bytes meant for the owner alone (a
// saved plan holds variable values) are never readable by others. Until
// Write returns, readers of path see the old bytes.
//
// w is not buffered. An error write returns is returned unchanged, since
// write knows best what it was doing; every other error names path and the
// step that failed. If the returned error is about syncing the directory,
// the new file is in place and only the rename's durability across a power
// cut is in doubt. On every other error path is untouched and no temporary
// file is left behind.
//
// A device or a FIFO at path is written to directly, a symbolic link is
// followed, and a directory is an error; see the package documentation.
func Write(path string, perm os.FileMode, write func(w io.Writer) error, opts ...Option) error {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	stat := os.Stat
	if o.noFollow {
		stat = os.Lstat
	}
	fi, err := stat(path)
	switch {
	case err == nil && o.noFollow && fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("writing %s: it is a symbolic link: %w", path, ErrNotRegular)
	case err == nil && o.noFollow && !fi.Mode().IsRegular():
		return fmt.Errorf("writing %s: %w", path, ErrNotRegular)
	case err == nil && fi.IsDir():
		return fmt.Errorf("writing %s: is a directory", path)
	case err == nil && !fi.Mode().IsRegular():
		return writeDirect(path, write)
	case err == nil && o.keepPerm:
		perm = fi.Mode().Perm()
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("writing %s: %w", path, err)
	}
	target, err := resolve(path)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	dir, name := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	pattern := o.pattern
	if pattern == "" {
		pattern = "." + name + ".*.tmp"
	}
	fail := func(step string, err error) error {
		return fmt.Errorf("writing %s: %s: %w", path, step, err)
	}

	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return fail("creating a temporary file", err)
	}
	renamed := false
	defer func() {
		if !renamed {
			f.Close() // an error here means it was closed already
			os.Remove(f.Name())
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Chmod(perm); err != nil {
		return fail("setting permissions", err)
	}
	grouped := false
	var dev uint64
	if o.group != nil {
		dev, grouped = deviceOf(f)
	}
	if grouped {
		if err := o.group.sync(dev, dir); err != nil {
			return fail("syncing", err)
		}
	}
	// After a group's sync the file is clean and this costs little; it
	// still reports an error in writing back this file's bytes, which the
	// file-system sync may not (before Linux 5.8 it reports none).
	if err := f.Sync(); err != nil {
		return fail("syncing", err)
	}
	if err := f.Close(); err != nil {
		return fail("closing", err)
	}
	if err := os.Rename(f.Name(), target); err != nil {
		return fail("renaming into place", err)
	}
	renamed = true
	syncRename := func() error { return SyncDir(dir) }
	if grouped {
		syncRename = func() error {
			return o.group.sync(dev, dir)
		}
	}
	if err := syncRename(); err != nil {
		return fail("syncing its directory", err)
	}
	return nil
}

// writeDirect writes to a target that is not a regular file, such as
// /dev/null or a FIFO. It does not truncate: that means nothing to them.
func writeDirect(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: closing: %w", path, err)
	}
	return nil
}

// resolve follows the chain of symbolic links at path to the path it ends
// at, which may not exist yet.
func resolve(path string) (string, error) {
	for range maxLinks {
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) || err == nil && fi.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		if err != nil {
			return "", err
		}
		link, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			// Not filepath.Join: it would clean "dir/../x" to "x", while
			// the system resolves ".." from where dir's links lead.
			dir, _ := filepath.Split(path)
			link = dir + link
		}
		path = link
	}
	return "", fmt.Errorf("more than %d levels of symbolic links", maxLinks)
}

// SyncDir makes a rename (or a creation, or a removal) in dir durable.
// Windows cannot sync a directory and does not need to.
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
