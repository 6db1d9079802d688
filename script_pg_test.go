package main

import (
	"net/url"
	"strings"
	"sync"

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
}

func (h *pgHolder) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
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
// anywhere.
func cmdPGStart(ts *testscript.TestScript, neg bool, args []string) {
	const usage = "usage: pg-start [-own] [-password=SECRET]"
	if neg {
		ts.Fatalf(usage)
	}
	own, password := false, ""
	for _, a := range args {
		switch {
		case a == "-own":
			own = true
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
	ts.Setenv("PG_CONN_STR", conn)
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
