package pgstate_test

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/statefile"
	"github.com/genform/genform/statefile/pgstate"
	"github.com/genform/genform/statefile/pgstate/pgtest"
)

// withOption is conn (a URL) with a run-time parameter set in options.
func withOption(conn, option string) string {
	return conn + "&options=" + strings.ReplaceAll(url.QueryEscape(option), "+", "%20")
}

// serverOf is the host:port of a connection URL.
func serverOf(t *testing.T, conn string) string {
	u, err := url.Parse(conn)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// TestTableLockIsBounded checks that a table lock another session holds
// on the state's tables (VACUUM FULL, ALTER TABLE, LOCK TABLE) fails a
// read once lock_timeout passes, genform's 5s or the connection string's,
// with an error naming the state, its server and the lock, instead of
// hanging the command.
func TestTableLockIsBounded(t *testing.T) {
	t.Parallel() // it waits out the default lock_timeout
	conn := pgtest.ConnString(t)
	s := open(t, pgstate.Config{ConnString: conn}, statefile.Options{Create: true, Command: "apply"})
	if err := s.Update(func(tx *statefile.Tx) error { return tx.SetService("simulator") }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	release, err := pgtest.HoldLock(conn, "genform.records")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	for _, c := range []struct {
		conn string
		wait string
	}{
		{withOption(conn, "-c lock_timeout=300ms"), "300ms"},
		{conn, "5s"},
	} {
		start := time.Now()
		err := readState(pgstate.Config{ConnString: c.conn})
		took := time.Since(start)
		if err == nil {
			t.Fatal("read the state while another session held an ACCESS EXCLUSIVE lock on it")
		}
		if !errors.Is(err, statefile.ErrUnavailable) {
			t.Errorf("the error does not match ErrUnavailable: %v", err)
		}
		for _, want := range []string{serverOf(t, conn), "waited " + c.wait + " (lock_timeout) for a lock on the state's tables that another session holds, while reading the state", "VACUUM FULL"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the error does not say %q: %v", want, err)
			}
		}
		if took > 10*time.Second {
			t.Errorf("it took %v to give up on a lock of lock_timeout %s", took, c.wait)
		}
	}
	release()
	if err := readState(pgstate.Config{ConnString: conn}); err != nil {
		t.Errorf("after the lock was released: %v", err)
	}
}

// readState opens the state as plan does and reads it.
func readState(cfg pgstate.Config) error {
	s, err := pgstate.Open(cfg, statefile.Options{Command: "plan"})
	if err != nil {
		return err
	}
	defer s.Close()
	_, err = s.Snapshot()
	return err
}

// TestFrozenServerIsBounded checks that a server that stops answering
// mid-command (its processes stopped: a hung host, a network that drops
// packets), which cannot end a statement itself, fails the next read
// once the client's wait passes (statement_timeout and a margin), naming
// the server; that later calls fail at once with the same error, Close
// does not wait again, and the lock is free again once the server
// answers.
func TestFrozenServerIsBounded(t *testing.T) {
	t.Parallel()
	srv, err := pgtest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	conn, err := srv.NewDatabase()
	if err != nil {
		t.Fatal(err)
	}
	cfg := pgstate.Config{ConnString: withOption(conn, "-c statement_timeout=500ms")}
	s, err := pgstate.Open(cfg, statefile.Options{Create: true, Command: "apply"})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Freeze(); err != nil {
		t.Fatal(err)
	}
	defer srv.Thaw()
	start := time.Now()
	_, err = s.Snapshot()
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("it took %v to give up on a server that stopped answering", took)
	}
	if err == nil {
		t.Fatal("read the state of a frozen server")
	}
	want := regexp.MustCompile(`^PostgreSQL state postgres://` + regexp.QuoteMeta(serverOf(t, conn)) + `/\w+ \(schema genform\) did not answer within 1s while reading the state: the server stopped answering`)
	if !want.MatchString(err.Error()) || !errors.Is(err, statefile.ErrUnavailable) {
		t.Errorf("error = %v, want it to match %s and ErrUnavailable", err, want)
	}
	start = time.Now()
	err2 := s.Update(func(tx *statefile.Tx) error { return tx.SetService("simulator") })
	if err2 == nil || err2.Error() != err.Error() {
		t.Errorf("a write after: %v, want the same error", err2)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("a write and Close after the connection was given up took %v", took)
	}
	if err := srv.Thaw(); err != nil {
		t.Fatal(err)
	}
	s, err = pgstate.Open(cfg, statefile.Options{Command: "apply", LockTimeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("once the server answers again: %v", err)
	}
	s.Close()
}

// TestGoneWriterIsNamedAsGone checks the message of a writer refused
// while a reader keeping writers out (genform init copying the state)
// holds the lock and the holder record is that of a writer whose
// connection has ended: the recorded writer is said to be gone, and that
// reader to hold the lock (the other readers take none); and a state in a
// database is called a state, not a state file.
func TestGoneWriterIsNamedAsGone(t *testing.T) {
	conn := pgtest.ConnString(t)
	cfg := pgstate.Config{ConnString: conn}
	first := open(t, cfg, statefile.Options{Create: true, Command: "apply"})
	sql(t, conn, "SELECT pg_terminate_backend(backend_pid) FROM genform.lock_holder")
	reader := open(t, cfg, statefile.Options{ReadOnly: true, KeepWritersOut: true, Command: "init", LockTimeout: 5 * time.Second})
	_, err := pgstate.Open(cfg, statefile.Options{Command: "apply"})
	var le *statefile.LockedError
	if !errors.As(err, &le) || le.Holder == nil || !le.Holder.Gone {
		t.Fatalf("a writer beside a reader after a writer whose connection ended: %v", err)
	}
	want := fmt.Sprintf(`state postgres://%s/`, serverOf(t, conn))
	if msg := err.Error(); !strings.HasPrefix(msg, want) || !strings.Contains(msg, `is locked by genform init copying it to another storage, or by a writer that has just taken it: the writer recorded as its holder, "genform apply" (pid `) || !strings.Contains(msg, "), is gone;") {
		t.Errorf("error = %q", msg)
	}
	reader.Close()
	first.Close()
}
