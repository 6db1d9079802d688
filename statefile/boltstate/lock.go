package boltstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

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

// holderRecord is what the holder info file holds: statefile's Holder, and
// whether the writer makes copies for readers (readcopy.go). A genform
// from before copies wrote no read_copies, and ignores it.
type holderRecord struct {
	statefile.Holder
	ReadCopies bool `json:"read_copies,omitempty"`
}

// writeHolder records this process as the lock holder, which makes copies
// for readers. It writes a temporary file and renames it, so a process
// reading the info while it is written sees the old file or the new one,
// never half of one.
func writeHolder(path string, h statefile.Holder) error {
	b, err := json.Marshal(holderRecord{Holder: h, ReadCopies: true})
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

// readHolder reads the holder info; nil when it is missing, unreadable or
// a link, since it only decorates the error message. Info left by a
// writer of this host that no longer runs (killed with -9, or its pid
// since taken by a process started later) is returned marked Gone: the
// lock is then held by a process that reads the state, which holds a
// shared lock and writes no info, or by a writer that has not written its
// own yet.
func readHolder(path string) *statefile.Holder {
	h, _ := readHolderRecord(path)
	return h
}

// readHolderRecord is readHolder, and says whether the holder makes copies
// for readers.
func readHolderRecord(path string) (*statefile.Holder, bool) {
	f, err := os.OpenFile(path+infoSuffix, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return nil, false
	}
	var r holderRecord
	if err := json.Unmarshal(b, &r); err != nil || r.PID == 0 {
		return nil, false
	}
	h := r.Holder
	if host, _ := os.Hostname(); h.Host == host && !processRuns(h.PID, h.Started) {
		h.Gone = true
	}
	return &h, r.ReadCopies
}

// processRuns reports whether the process pid of this host runs and is
// the one that wrote a holder record at started: one started later only
// reuses its pid.
func processRuns(pid int, started time.Time) bool {
	if !processExists(pid) {
		return false
	}
	// The record's time is truncated to the second, and taken after the
	// process started.
	if at, ok := processStart(pid); ok && at.After(started.Add(2*time.Second)) {
		return false
	}
	return true
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
