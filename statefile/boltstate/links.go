package boltstate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// The state file and the files genform keeps beside it (the lock holder's
// info, the backup made before a schema upgrade) are opened only as what
// they are, never through a symbolic link: a link committed to a
// repository, or planted by another user, would otherwise make genform
// read, lock, overwrite or truncate a file anywhere it can write. Each is
// checked with Lstat, for a clear message, and then opened with O_NOFOLLOW
// where the system has it, so that a link swapped in after the check makes
// the open fail instead of being followed. The directory holding them is
// the caller's to check (the cli refuses one that leads outside the
// working directory).

// refuseLink returns an error when path is a symbolic link; what names the
// file in the message.
func refuseLink(path, what string) error {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return nil // a missing file is the caller's to handle
	}
	return linkError(path, what)
}

// linkError says that path, which is what, is a symbolic link and what to
// do about it.
func linkError(path, what string) error {
	to := "somewhere else"
	if target, err := os.Readlink(path); err == nil {
		to = target
	}
	return fmt.Errorf("%s %s is a symbolic link (to %s); genform does not follow links there, so that no link can lead it to read or write a file elsewhere: replace the link with the file itself", what, path, to)
}

// isLinkRefused reports whether err is an open with O_NOFOLLOW refused
// because the last element of the path is a symbolic link.
func isLinkRefused(err error) bool {
	return errors.Is(err, errLoop)
}
