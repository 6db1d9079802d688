package reconcile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

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
	sum, err := hashFile(filepath.Join(dir, filepath.FromSlash(o.Path)))
	if err != nil || sum != o.SHA256 {
		return fileModified
	}
	return fileOK
}

func hashFile(path string) (string, error) {
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

// removeFile removes path, treating an already missing file as removed.
func removeFile(path string) error {
	err := os.Remove(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// pruneDirs removes dir and its parents up to (not including) stop while
// they are empty, so deleting a resource leaves no empty folders behind.
func pruneDirs(dir, stop string) {
	stop = filepath.Clean(stop)
	for d := filepath.Clean(dir); d != stop && d != "." && d != string(filepath.Separator); d = filepath.Dir(d) {
		if os.Remove(d) != nil {
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
	rootReal, err := filepath.EvalSymlinks(rootAbs)
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
