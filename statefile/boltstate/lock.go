package boltstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/genform/genform/internal/atomicfile"
	"github.com/genform/genform/statefile"
)

// The lock itself is bbolt's exclusive flock on the state file: the
// operating system drops it when the process dies, so it cannot go stale.
// flock says nothing about who holds it, so the holder writes a small JSON
// file beside the state file once it has the lock, and removes it before
// letting go. A holder killed with -9 leaves its info file behind; the next
// holder overwrites it.

// infoSuffix is appended to the state file's path to name the holder info
// file.
const infoSuffix = ".lock.info"

// writeHolder records this process as the lock holder. It writes a
// temporary file and renames it, so a process reading the info while it is
// written sees the old file or the new one, never half of one.
func writeHolder(path string, h statefile.Holder) error {
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	info := path + infoSuffix
	if err := refuseLink(info, "the lock holder file"); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(info, append(b, '\n'), 0o600, atomicfile.RegularOnly()); err != nil {
		if errors.Is(err, atomicfile.ErrNotRegular) {
			return fmt.Errorf("the lock holder file %s is not a regular file; genform writes only a regular file there: remove it", info)
		}
		return fmt.Errorf("recording the lock holder: %w", err)
	}
	return nil
}

// readHolder reads the holder info; nil when it is missing, unreadable, a
// link, or left by a process of this host that is gone, since it only
// decorates the error message. (A process that reads the state holds a
// shared lock and writes no info: a writer it keeps waiting may find the
// info of a writer killed before it.)
func readHolder(path string) *statefile.Holder {
	f, err := os.OpenFile(path+infoSuffix, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return nil
	}
	var h statefile.Holder
	if err := json.Unmarshal(b, &h); err != nil || h.PID == 0 {
		return nil
	}
	if host, _ := os.Hostname(); h.Host == host && !processExists(h.PID) {
		return nil
	}
	return &h
}

// removeHolder removes the holder info. It must run while the lock is still
// held, or it could remove the info of the next holder.
func removeHolder(path string) error {
	err := os.Remove(path + infoSuffix)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing the lock holder record: %w", err)
	}
	return nil
}
