package statefile

import (
	"fmt"
	"time"
)

// Every backend takes a lock on the state when it opens it for a command
// that writes, exclusive, and keeps it until Close: the bbolt file its
// flock (package boltstate), PostgreSQL an advisory lock (package
// pgstate). A writer records who it is beside the lock, so that a command
// refused or kept waiting can name it. A command opening the state
// ReadOnly never waits for a writer: it reads the last state committed,
// however each backend gets it (see Options.ReadOnly).

// Holder describes the process holding a state's lock.
type Holder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Command string    `json:"command"` // the genform command, e.g. "apply"
	Started time.Time `json:"started"` // when it took the lock
	// Gone is set by the backend that read the record when it knows the
	// writer is gone (a process of this host that no longer runs, a
	// database connection that has ended): someone else holds the lock
	// now. It is never stored.
	Gone bool `json:"-"`
}

func (h *Holder) String() string {
	cmd := "genform"
	if h.Command != "" {
		cmd += " " + h.Command
	}
	return fmt.Sprintf("%q (pid %d on host %s, since %s)", cmd, h.PID, h.Host, h.Started.UTC().Format(time.RFC3339))
}

// LockedError is returned by a backend's Open when another process holds
// the state's lock past Options.LockTimeout.
type LockedError struct {
	// Path is the backend's Name: the state file's path, or the database
	// and schema.
	Path string
	// Database is set when the state is kept in a database, not a file.
	Database bool
	// Shared is set when the lock was asked for shared (by a command that
	// only reads): then only a writer can be keeping it.
	Shared bool
	// Holder is nil when the holder's info could not be read (it may have
	// taken the lock a moment ago and not written it yet).
	Holder *Holder
	// Waited is how long Open waited for the lock (Options.LockTimeout).
	Waited time.Duration
}

func (e *LockedError) Error() string {
	what := "state file"
	// Who may hold the lock without recording it: the readers of a file,
	// which share its lock while no writer holds it; of a database only
	// genform init copying the state elsewhere (Options.KeepWritersOut),
	// since its other readers take no lock.
	readers := "commands reading it (show, state list, state show, state pull, output, history, gallery, pull)"
	if e.Database {
		what = "state"
		readers = "genform init copying it to another storage"
	}
	who := "another genform process, or by " + readers
	if e.Shared {
		who = "another genform process writing it"
	}
	if h := e.Holder; h != nil {
		switch {
		case !h.Gone:
			who = h.String()
		case e.Shared:
			// Only a writer keeps a reader out, and the one recorded is
			// gone: another has taken the lock and not recorded itself yet.
			who = fmt.Sprintf("a genform process writing it that has just taken the lock (the writer recorded before it, %s, is gone)", h)
		default:
			who = fmt.Sprintf("%s, or by a writer that has just taken it: the writer recorded as its holder, %s, is gone", readers, h)
		}
	}
	if e.Waited > 0 {
		return fmt.Sprintf("%s %s is still locked by %s after waiting %s; wait for it to finish or pass a longer -lock-timeout=DURATION", what, e.Path, who, e.Waited)
	}
	return fmt.Sprintf("%s %s is locked by %s; wait for it to finish or pass -lock-timeout=DURATION", what, e.Path, who)
}
