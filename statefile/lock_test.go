package statefile

import (
	"testing"
	"time"
)

// TestLockedErrorMessage checks what a command refused the lock reads: a
// state in a database is "state", not "state file"; the holder is named,
// or said to be gone when its backend knows it is; a reader is never told
// that a reader keeps it out, nor a writer of a database that its
// readers may (they take no lock there).
func TestLockedErrorMessage(t *testing.T) {
	started := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	apply := &Holder{PID: 4242, Host: "ci-7", Command: "apply", Started: started}
	gone := &Holder{PID: 4242, Host: "ci-7", Command: "apply", Started: started, Gone: true}
	const pg = "postgres://db.example.com:5432/media (schema genform)"
	for _, c := range []struct {
		name string
		err  LockedError
		want string
	}{
		{"file", LockedError{Path: ".genform/state.db", Holder: apply},
			`state file .genform/state.db is locked by "genform apply" (pid 4242 on host ci-7, since 2025-03-01T12:00:00Z); wait for it to finish or pass -lock-timeout=DURATION`},
		{"database", LockedError{Path: pg, Database: true, Holder: apply, Waited: 5 * time.Second},
			`state ` + pg + ` is still locked by "genform apply" (pid 4242 on host ci-7, since 2025-03-01T12:00:00Z) after waiting 5s; wait for it to finish or pass a longer -lock-timeout=DURATION`},
		{"no holder", LockedError{Path: pg, Database: true},
			`state ` + pg + ` is locked by another genform process, or by genform init copying it to another storage; wait for it to finish or pass -lock-timeout=DURATION`},
		{"gone", LockedError{Path: pg, Database: true, Holder: gone},
			`state ` + pg + ` is locked by genform init copying it to another storage, or by a writer that has just taken it: the writer recorded as its holder, "genform apply" (pid 4242 on host ci-7, since 2025-03-01T12:00:00Z), is gone; wait for it to finish or pass -lock-timeout=DURATION`},
		{"file, no holder", LockedError{Path: ".genform/state.db"},
			`state file .genform/state.db is locked by another genform process, or by commands reading it (show, state list, state show, state pull, output, history, gallery, pull); wait for it to finish or pass -lock-timeout=DURATION`},
		{"file, gone", LockedError{Path: ".genform/state.db", Holder: gone},
			`state file .genform/state.db is locked by commands reading it (show, state list, state show, state pull, output, history, gallery, pull), or by a writer that has just taken it: the writer recorded as its holder, "genform apply" (pid 4242 on host ci-7, since 2025-03-01T12:00:00Z), is gone; wait for it to finish or pass -lock-timeout=DURATION`},
		{"reader, no holder", LockedError{Path: ".genform/state.db", Shared: true},
			`state file .genform/state.db is locked by another genform process writing it; wait for it to finish or pass -lock-timeout=DURATION`},
		{"reader, gone", LockedError{Path: ".genform/state.db", Shared: true, Holder: gone},
			`state file .genform/state.db is locked by a genform process writing it that has just taken the lock (the writer recorded before it, "genform apply" (pid 4242 on host ci-7, since 2025-03-01T12:00:00Z), is gone); wait for it to finish or pass -lock-timeout=DURATION`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.err.Error(); got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}
