package statefile

import (
	"fmt"
	"time"
)

// Every backend takes a lock on the state when it opens it, exclusive for
// a command that writes and shared for one opened ReadOnly, and keeps it
// until Close: the bbolt file its flock (package boltstate), PostgreSQL an
// advisory lock (package pgstate). A writer records who it is beside the
// lock, so that a command refused or kept waiting can name it.

// Holder describes the process holding a state file's lock.
type Holder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Command string    `json:"command"` // the genform command, e.g. "apply"
	Started time.Time `json:"started"` // when it took the lock
}

// LockedError is returned by a backend's Open when another process holds
// the state's lock past Options.LockTimeout.
type LockedError struct {
	Path string
	// Holder is nil when the holder's info could not be read (it may have
	// taken the lock a moment ago and not written it yet).
	Holder *Holder
	// Waited is how long Open waited for the lock (Options.LockTimeout).
	Waited time.Duration
}

func (e *LockedError) Error() string {
	// Readers hold a shared lock and write no holder info.
	who := "another genform process, or by commands reading it (show, state list, state show, output, gallery)"
	if h := e.Holder; h != nil {
		cmd := "genform"
		if h.Command != "" {
			cmd += " " + h.Command
		}
		who = fmt.Sprintf("%q (pid %d on host %s, since %s)", cmd, h.PID, h.Host, h.Started.UTC().Format(time.RFC3339))
	}
	if e.Waited > 0 {
		return fmt.Sprintf("state file %s is still locked by %s after waiting %s; wait for it to finish or pass a longer -lock-timeout=DURATION", e.Path, who, e.Waited)
	}
	return fmt.Sprintf("state file %s is locked by %s; wait for it to finish or pass -lock-timeout=DURATION", e.Path, who)
}
