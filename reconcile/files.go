package reconcile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
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
