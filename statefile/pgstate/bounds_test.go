package pgstate

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/genform/genform/statefile/pgstate/pgtest"
)

// TestSessionBounds checks the bounds a connection gets: genform's
// lock_timeout (5s) and statement_timeout (30s) when the connection
// string sets none, the user's when it does (in options, as a parameter
// of its own, or in PGOPTIONS), and the client's wait for an answer past
// statement_timeout.
func TestSessionBounds(t *testing.T) {
	base := pgtest.ConnString(t)
	// A URL's space is %20: libpq and pgx take + as it is.
	with := func(k, v string) string {
		return base + "&" + k + "=" + strings.ReplaceAll(url.QueryEscape(v), "+", "%20")
	}
	for _, c := range []struct {
		name, conn, pgoptions string
		want                  bounds
	}{
		{"defaults", base, "", bounds{lock: 5 * time.Second, statement: 30 * time.Second, answer: 35 * time.Second}},
		{"options", with("options", "-c lock_timeout=1s"), "", bounds{lock: time.Second, statement: 30 * time.Second, answer: 35 * time.Second}},
		{"options, dashes", with("options", "--statement-timeout=1500"), "", bounds{lock: 5 * time.Second, statement: 1500 * time.Millisecond, answer: 3 * time.Second}},
		{"a parameter", with("statement_timeout", "2min"), "", bounds{lock: 5 * time.Second, statement: 2 * time.Minute, answer: 2*time.Minute + 5*time.Second}},
		{"PGOPTIONS", base, "-c lock_timeout=250ms -c statement_timeout=0", bounds{lock: 250 * time.Millisecond, statement: 0, answer: 35 * time.Second}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("PGOPTIONS", c.pgoptions)
			pcfg, err := parse(c.conn)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			conn, err := pgx.ConnectConfig(ctx, pcfg)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			got, err := setBounds(ctx, conn, pcfg.RuntimeParams)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("bounds = %+v, want %+v", got, c.want)
			}
			// The server has them, for every statement of the session.
			var lock, stmt string
			if err := conn.QueryRow(ctx, "SELECT current_setting('lock_timeout'), current_setting('statement_timeout')").Scan(&lock, &stmt); err != nil {
				t.Fatal(err)
			}
			if l, _ := pgDuration(lock); l != c.want.lock {
				t.Errorf("the session's lock_timeout is %s, want %v", lock, c.want.lock)
			}
			if s, _ := pgDuration(stmt); s != c.want.statement {
				t.Errorf("the session's statement_timeout is %s, want %v", stmt, c.want.statement)
			}
		})
	}
}

func TestPGDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"0": 0, "250ms": 250 * time.Millisecond, "1500": 1500 * time.Millisecond, "5s": 5 * time.Second,
		"2min": 2 * time.Minute, "1h": time.Hour, "1d": 24 * time.Hour,
	} {
		if got, err := pgDuration(in); err != nil || got != want {
			t.Errorf("pgDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "5 fortnights", "s", "-1"} {
		if _, err := pgDuration(in); err == nil {
			t.Errorf("pgDuration(%q) succeeded", in)
		}
	}
}

func TestFmtWait(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Second: "1s", 1500 * time.Millisecond: "1.5s", 90 * time.Second: "1m30s", 2 * time.Minute: "2m",
		time.Hour: "1h", 0: "without limit",
	} {
		if got := fmtWait(d); got != want {
			t.Errorf("fmtWait(%v) = %q, want %q", d, got, want)
		}
	}
}
