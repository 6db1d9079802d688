package pgstate_test

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/statefile"
	"github.com/genform/genform/statefile/pgstate"
	"github.com/genform/genform/statefile/pgstate/pgtest"
)

// serverOf is the host:port of a connection URL.
func serverOf(t *testing.T, conn string) string {
	u, err := url.Parse(conn)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// TestGoneWriterIsNamedAsGone checks the message of a writer refused
// while a reader holds the lock and the holder record is that of a writer
// whose connection has ended: the recorded writer is said to be gone, and
// the readers to hold the lock; and a state in a database is called a
// state, not a state file.
func TestGoneWriterIsNamedAsGone(t *testing.T) {
	conn := pgtest.ConnString(t)
	cfg := pgstate.Config{ConnString: conn}
	first := open(t, cfg, statefile.Options{Create: true, Command: "apply"})
	sql(t, conn, "SELECT pg_terminate_backend(backend_pid) FROM genform.lock_holder")
	reader := open(t, cfg, statefile.Options{ReadOnly: true, Command: "show", LockTimeout: 5 * time.Second})
	_, err := pgstate.Open(cfg, statefile.Options{Command: "apply"})
	var le *statefile.LockedError
	if !errors.As(err, &le) || le.Holder == nil || !le.Holder.Gone {
		t.Fatalf("a writer beside a reader after a writer whose connection ended: %v", err)
	}
	want := fmt.Sprintf(`state postgres://%s/`, serverOf(t, conn))
	if msg := err.Error(); !strings.HasPrefix(msg, want) || !strings.Contains(msg, `is locked by commands reading it (show, state list, state show, output, gallery), or by a writer that has just taken it: the writer recorded as its holder, "genform apply" (pid `) || !strings.Contains(msg, "), is gone;") {
		t.Errorf("error = %q", msg)
	}
	reader.Close()
	first.Close()
}
