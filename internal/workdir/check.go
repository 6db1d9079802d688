package workdir

import (
	"path/filepath"

	"github.com/genform/genform/internal/cache"
	"github.com/genform/genform/statefile"
)

// FileState is what CheckFile found of an output file.
type FileState int

// The states of an output file on disk.
const (
	FileOK       FileState = iota // the file holds the recorded bytes
	FileMissing                   // no regular file at the recorded path, or the record has no hash
	FileModified                  // the file's bytes are not the recorded ones
)

// CheckFile compares an output file on disk with its record: size and
// modification time first, and the sha256 only when one of them differs,
// so a no-op plan reads no file contents. dir is the working directory the
// record's path is relative to.
func CheckFile(dir string, o statefile.Output) FileState {
	if o.Path == "" || o.SHA256 == "" {
		return FileMissing
	}
	size, modTime, regular, err := statFile(filepath.Join(dir, filepath.FromSlash(o.Path)))
	if err != nil || !regular {
		return FileMissing
	}
	if size == o.Size && modTime.Equal(o.ModTime) {
		return FileOK
	}
	if size != o.Size {
		return FileModified
	}
	sum, err := cache.HashFile(filepath.Join(dir, filepath.FromSlash(o.Path)))
	if err != nil || sum != o.SHA256 {
		return FileModified
	}
	return FileOK
}
