package statefile

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"unicode/utf8"
)

var (
	// ErrNotFound is wrapped by errors about an address that has no record
	// where one is required (the source of Tx.Move).
	ErrNotFound = errors.New("not in the state")
	// ErrExists is wrapped by Tx.Move when the destination address
	// already has a record or an intent.
	ErrExists = errors.New("already in the state")
	// ErrCorrupt is matched (errors.Is) by every *CorruptError.
	ErrCorrupt = errors.New("the state is corrupt")
	// ErrUnavailable is matched by a backend's errors that mean its
	// storage cannot be read or written now, whatever is asked of it: a
	// database that stopped answering, a connection that ended, a table
	// lock another session holds past the wait allowed. The next read or
	// write would most likely fail alike.
	ErrUnavailable = errors.New("the state's storage is unavailable")
)

// CorruptError reports a state, or one record in it, that genform cannot
// read. Its message says what to do about it.
type CorruptError struct {
	// Path is the backend's Name: the state file's path, or the database
	// and schema.
	Path string
	// Database is set when the state is kept in a database, not a file:
	// the message then speaks of the state, and of the database's backup.
	Database bool
	// Record is what could not be read: "resource", "intent", "protection",
	// "history", "meta", or "" when the file as a whole is unreadable.
	Record string
	// Addr is the record's address (or meta key); "" for the whole file.
	Addr string
	Err  error
	// Backup is the copy of the file genform made before it last upgraded
	// the file's schema (a bbolt file's, see package boltstate), when
	// there is one: an older state, but one to restore from.
	Backup string
}

func (e *CorruptError) Error() string {
	backup := ""
	if e.Backup != "" {
		backup = fmt.Sprintf(" (genform copied the file to %s before it last upgraded its schema; that copy lacks what was recorded since)", e.Backup)
	}
	what, from, aside := "state file", "from version control or a backup", "move it aside"
	if e.Database {
		// Nothing in a database is under version control, and a state
		// cannot be moved aside: a schema of its own starts anew.
		what, from, aside = "state", "from a backup of the database", "set another schema_name"
	}
	restore := "restore the " + what + " " + from + backup
	record := e.Record + " record for"
	switch e.Record {
	case "":
		return fmt.Sprintf("%s %s is not readable: %v; restore it %s%s, or %s to start from an empty state (the next apply then generates everything again)", what, e.Path, e.Err, from, backup, aside)
	case "meta":
		return fmt.Sprintf("%s %s: meta record %q is corrupt: %v; %s", what, e.Path, e.Addr, e.Err, restore)
	case "intent":
		record = "pending-submission record for"
	case "resource":
		record = "resource record"
	case "history":
		// Addr is historyName's.
		return fmt.Sprintf("%s %s: the history's entry for %s is corrupt: %v; %s", what, e.Path, e.Addr, e.Err, restore)
	}
	msg := fmt.Sprintf("%s %s: %s %s is corrupt: %v; %s", what, e.Path, record, displayAddr(e.Addr), e.Err, restore)
	// The remedy names the address, so it is offered only for a key that
	// is one, written as genform writes it (Forget finds it by that key).
	if a, ok := canonicalAddr(e.Addr); ok {
		msg += ", or forget the resource with: genform state rm " + a.Shell()
	}
	return msg
}

func (e *CorruptError) Unwrap() error { return e.Err }

// Is makes every CorruptError match ErrCorrupt.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// displayAddr shows an address as written in configuration, quoting it only
// when the bytes could not have come from one (a damaged key).
func displayAddr(addr string) string {
	if !utf8.ValidString(addr) || strings.ContainsFunc(addr, func(r rune) bool { return r < ' ' || r == 0x7f }) || addr == "" {
		return strconv.Quote(addr)
	}
	return addr
}

// NoStateError reports a state that exists but holds none yet: a state
// file an earlier genform was stopped while creating, or a storage without
// genform's layout opened without Options.Create. It matches
// fs.ErrNotExist, because for a reader it is the same as no state.
type NoStateError struct {
	Path string
	// Database is set when the storage is a database, not a file.
	Database bool
}

func (e *NoStateError) Error() string {
	if e.Database {
		return fmt.Sprintf("%s holds no genform state yet", e.Path)
	}
	return fmt.Sprintf("state file %s holds no state yet", e.Path)
}

func (e *NoStateError) Is(target error) bool { return target == fs.ErrNotExist }
