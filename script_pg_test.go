package main

import (
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/genform/genform/statefile/pgstate/pgtest"
)

type pgKey struct{}

// pgHolder owns the PostgreSQL server a script started for itself
// (pg-start -own), which pg-stop and pg-restart act on: the shared
// server's other scripts must not see it stop.
type pgHolder struct {
	mu  sync.Mutex
	own *pgtest.Server
	// release ends the session pg-lock holds its table lock in.
	release func()
	// reader is the state file read-lock holds a shared lock on.
	reader *os.File
}

func (h *pgHolder) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.release != nil {
		h.release()
		h.release = nil
	}
	if h.reader != nil {
		h.reader.Close()
		h.reader = nil
	}
	if h.own != nil {
		h.own.Close()
		h.own = nil
	}
}

func pgServer(ts *testscript.TestScript) *pgHolder { return ts.Value(pgKey{}).(*pgHolder) }

// pg-start sets PG_CONN_STR to a new, empty database on the test binary's
// PostgreSQL server (started at the first use), for a configuration whose
// backend "pg" block takes its connection string from there. With -own,
// the database is on a server of the script's own, which pg-stop and
// pg-restart stop and start. With -password, the connection string
// carries that password (the test server trusts every connection, so it
// is accepted and ignored): for checking that genform never writes it
// anywhere. With -env, it sets libpq's PGHOST, PGPORT, PGUSER,
// PGDATABASE and PGSSLMODE to the database instead, for a conn_str that
// leaves them out.
func cmdPGStart(ts *testscript.TestScript, neg bool, args []string) {
	const usage = "usage: pg-start [-own] [-password=SECRET] [-env]"
	if neg {
		ts.Fatalf(usage)
	}
	own, password, env := false, "", false
	for _, a := range args {
		switch {
		case a == "-own":
			own = true
		case a == "-env":
			env = true
		case strings.HasPrefix(a, "-password=") && len(a) > len("-password="):
			password = strings.TrimPrefix(a, "-password=")
		default:
			ts.Fatalf(usage)
		}
	}
	var conn string
	var err error
	if own {
		h := pgServer(ts)
		h.mu.Lock()
		if h.own == nil {
			h.own, err = pgtest.NewServer()
		}
		s := h.own
		h.mu.Unlock()
		ts.Check(err)
		conn, err = s.NewDatabase()
	} else {
		conn, err = pgtest.NewDatabase()
	}
	ts.Check(err)
	if password != "" {
		u, err := url.Parse(conn)
		ts.Check(err)
		u.User = url.UserPassword(u.User.Username(), password)
		conn = u.String()
	}
	if !env {
		ts.Setenv("PG_CONN_STR", conn)
		return
	}
	u, err := url.Parse(conn)
	ts.Check(err)
	ts.Setenv("PGHOST", u.Hostname())
	ts.Setenv("PGPORT", u.Port())
	ts.Setenv("PGUSER", u.User.Username())
	ts.Setenv("PGDATABASE", strings.TrimPrefix(u.Path, "/"))
	ts.Setenv("PGSSLMODE", u.Query().Get("sslmode"))
}

// pg-stop shuts the script's own server down (pg-start -own) as an
// administrator would: its connections end, and new ones are refused.
func cmdPGStop(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: pg-stop")
	}
	h := pgServer(ts)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.own == nil {
		ts.Fatalf("pg-stop: no server of the script's own; start one with pg-start -own")
	}
	h.own.Stop()
}

// pg-restart starts the script's own server again after pg-stop, on the
// same port with the same data.
func cmdPGRestart(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: pg-restart")
	}
	h := pgServer(ts)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.own == nil {
		ts.Fatalf("pg-restart: no server of the script's own; start one with pg-start -own")
	}
	ts.Check(h.own.Start())
}

// pg-lock takes an ACCESS EXCLUSIVE lock on the state's tables (those of
// schema genform, or the tables named, schema-qualified) in PG_CONN_STR's
// database, from a session of its own, and holds it until pg-unlock or the
// end of the script: what VACUUM FULL, ALTER TABLE or LOCK TABLE do.
func cmdPGLock(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("usage: pg-lock [SCHEMA.TABLE...]")
	}
	if len(args) == 0 {
		args = []string{"genform.buckets", "genform.records", "genform.lock_holder"}
	}
	h := pgServer(ts)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.release != nil {
		ts.Fatalf("pg-lock: a lock is held already; pg-unlock first")
	}
	release, err := pgtest.HoldLock(ts.Getenv("PG_CONN_STR"), args...)
	ts.Check(err)
	h.release = release
}

// pg-unlock ends the session of pg-lock, releasing its lock.
func cmdPGUnlock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: pg-unlock")
	}
	h := pgServer(ts)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.release == nil {
		ts.Fatalf("pg-unlock: no lock held; pg-lock first")
	}
	h.release()
	h.release = nil
}

// pg-freeze stops every process of the script's own server (pg-start
// -own) with SIGSTOP: it keeps its connections and takes new ones, and
// answers nothing, as a server that hangs. pg-thaw lets it go on; the end
// of the script does too.
func cmdPGFreeze(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: pg-freeze")
	}
	ts.Check(ownServer(ts, "pg-freeze").Freeze())
}

// pg-thaw continues the server pg-freeze stopped.
func cmdPGThaw(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: pg-thaw")
	}
	ts.Check(ownServer(ts, "pg-thaw").Thaw())
}

// ownServer is the script's own server, which cmd acts on.
func ownServer(ts *testscript.TestScript, cmd string) *pgtest.Server {
	h := pgServer(ts)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.own == nil {
		ts.Fatalf("%s: no server of the script's own; start one with pg-start -own", cmd)
	}
	return h.own
}

// read-lock PATH takes a shared lock on the state file at PATH, as a
// command that reads the state (show, state list, ...) holds while it
// reads, and holds it until read-lock -release or the end of the script:
// what a writer finds beside the record of a writer killed before it.
// (It sits here, with the other holders of a script's locks.)
func cmdReadLock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: read-lock PATH | read-lock -release")
	}
	h := pgServer(ts)
	h.mu.Lock()
	defer h.mu.Unlock()
	if args[0] == "-release" {
		if h.reader == nil {
			ts.Fatalf("read-lock -release: no lock held")
		}
		h.reader.Close()
		h.reader = nil
		return
	}
	if h.reader != nil {
		ts.Fatalf("read-lock: a lock is held already")
	}
	f, err := os.Open(ts.MkAbs(args[0]))
	ts.Check(err)
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		f.Close()
		ts.Fatalf("read-lock: %v", err)
	}
	h.reader = f
}
