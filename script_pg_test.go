package main

import (
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/genform/genform/statefile/pgstate/pgtest"
)

// pg-start sets PG_CONN_STR to a new, empty database on the test binary's
// PostgreSQL server (started at the first use), for a configuration whose
// backend "pg" block takes its connection string from there.
func cmdPGStart(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: pg-start")
	}
	conn, err := pgtest.NewDatabase()
	ts.Check(err)
	ts.Setenv("PG_CONN_STR", conn)
}
