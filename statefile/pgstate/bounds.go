package pgstate

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/genform/genform/statefile"
)

// Every wait for the database is bounded, so that no command hangs on it:
//
//   - connecting, by connect_timeout (the connection string's, or
//     PGCONNECT_TIMEOUT), defaultConnectTimeout when neither sets it;
//   - a table lock another session holds (VACUUM FULL, ALTER TABLE and
//     LOCK TABLE take one that keeps out even readers), by the server's
//     lock_timeout, defaultLockTimeout;
//   - a statement, by the server's statement_timeout,
//     defaultStatementTimeout;
//   - each answer, on the client: statement_timeout and a margin, so that
//     a server that stopped answering (hung, stopped, or behind a network
//     that drops packets), which cannot end a statement itself, fails the
//     command too.
//
// genform sets lock_timeout and statement_timeout on its session unless
// the connection string (or PGOPTIONS) sets its own, as
// options='-c lock_timeout=10s' or a parameter of its own name: the
// user's setting wins. It sets them with set_config once connected
// rather than as startup parameters, which a pooler such as PgBouncer may
// refuse.
const (
	defaultConnectTimeout   = 5 * time.Second
	defaultLockTimeout      = 5 * time.Second
	defaultStatementTimeout = 30 * time.Second
	// maxAnswerMargin is the most the client waits past statement_timeout
	// for an answer: the server's own error, which says why, comes first.
	maxAnswerMargin = 5 * time.Second
)

// bounds are a connection's waits, as the server has them.
type bounds struct {
	// lock and statement are lock_timeout and statement_timeout; 0 is
	// none.
	lock, statement time.Duration
	// answer is how long the client waits for the answer to one round
	// trip.
	answer time.Duration
}

// answerWait is the client's wait for an answer, given the server's
// bounds: statement_timeout and a margin, or the default's when the
// server has none.
func answerWait(lock, statement time.Duration) time.Duration {
	base := statement
	if base == 0 {
		base = max(defaultStatementTimeout, lock)
	}
	return base + min(base, maxAnswerMargin)
}

// userSets reports whether the connection string sets the run-time
// parameter name: as a parameter of its own, or in options, whose
// switches are "-c name=value" or "--name=value" (with - for _ allowed).
func userSets(params map[string]string, name string) bool {
	if _, ok := params[name]; ok {
		return true
	}
	return strings.Contains(strings.ReplaceAll(params["options"], "-", "_"), name)
}

// setBounds sets on conn the bounds params (the connection string's
// run-time parameters) leave to genform, and reads them all back.
func setBounds(ctx context.Context, conn *pgx.Conn, params map[string]string) (bounds, error) {
	var set [2]string
	for i, p := range []struct {
		name string
		def  time.Duration
	}{{"lock_timeout", defaultLockTimeout}, {"statement_timeout", defaultStatementTimeout}} {
		if !userSets(params, p.name) {
			set[i] = strconv.FormatInt(p.def.Milliseconds(), 10) + "ms"
		}
	}
	var got [2]string
	err := conn.QueryRow(ctx, `SELECT
	CASE WHEN $1 = '' THEN current_setting('lock_timeout') ELSE set_config('lock_timeout', $1, false) END,
	CASE WHEN $2 = '' THEN current_setting('statement_timeout') ELSE set_config('statement_timeout', $2, false) END`,
		set[0], set[1]).Scan(&got[0], &got[1])
	if err != nil {
		return bounds{}, err
	}
	var b bounds
	if b.lock, err = pgDuration(got[0]); err != nil {
		return bounds{}, fmt.Errorf("lock_timeout: %w", err)
	}
	if b.statement, err = pgDuration(got[1]); err != nil {
		return bounds{}, fmt.Errorf("statement_timeout: %w", err)
	}
	b.answer = answerWait(b.lock, b.statement)
	return b, nil
}

// pgDuration reads a time setting as the server shows it: a whole number
// and a unit among ms, s, min, h and d ("5s", "1min", "0"), milliseconds
// without one.
func pgDuration(s string) (time.Duration, error) {
	i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if i < 0 {
		i = len(s)
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	unit, ok := map[string]time.Duration{"": time.Millisecond, "ms": time.Millisecond, "s": time.Second,
		"min": time.Minute, "h": time.Hour, "d": 24 * time.Hour}[strings.TrimSpace(s[i:])]
	if err != nil || !ok {
		return 0, fmt.Errorf("the server shows %q, which is not a duration genform reads", s)
	}
	return time.Duration(n) * unit, nil
}

// unavailableError is a failure of the database as a whole, which
// matches statefile.ErrUnavailable. Its message is complete: the driver's
// error (a context's deadline, say) is left out, so that nothing above
// takes it for another one.
type unavailableError struct{ msg string }

func (e *unavailableError) Error() string { return e.msg }

func (e *unavailableError) Is(target error) bool { return target == statefile.ErrUnavailable }

// Codes of the server's errors (PostgreSQL's SQLSTATE).
const (
	lockNotAvailable = "55P03" // lock_timeout passed
	queryCanceled    = "57014" // statement_timeout passed, or a cancel request
)

// explain turns err, which ended what the backend was doing ("reading the
// state"), into an error that names the state, its server and database,
// and what waited too long, when a bound passed or the connection ended;
// the connection is then given up, and every later call fails with the
// same error. Other errors come back as they are.
func (b *backend) explain(doing string, err error) error {
	if err == nil {
		return nil
	}
	if b.lost != nil {
		return b.lost
	}
	// A reader that keeps no writer out holds no lock to lose.
	lock, andLock := "its connection", ""
	if b.locked {
		lock, andLock = "its connection, and the state's lock with it", ", and the state's lock with it"
	}
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && pe.Code == lockNotAvailable:
		return &unavailableError{fmt.Sprintf("PostgreSQL state %s: waited %s (lock_timeout) for a lock on the state's tables that another session holds, while %s. "+
			"VACUUM FULL, ALTER TABLE and LOCK TABLE take such a lock, which keeps out even readers: let that session finish (pg_stat_activity and pg_locks show it), "+
			"then run the command again, or wait longer with lock_timeout in the connection string's options (options='-c lock_timeout=30s')",
			b.name, fmtWait(b.bounds.lock), doing)}
	case errors.As(err, &pe) && pe.Code == queryCanceled && strings.Contains(pe.Message, "statement timeout"):
		return &unavailableError{fmt.Sprintf("PostgreSQL state %s: %s took longer than %s (statement_timeout), and the server ended it. "+
			"The server may be overloaded, or the statement waited for another session: run the command again, or allow longer with statement_timeout "+
			"in the connection string's options (options='-c statement_timeout=2min')",
			b.name, doing, fmtWait(b.bounds.statement))}
	case errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err):
		b.giveUp()
		b.lost = &unavailableError{fmt.Sprintf("PostgreSQL state %s did not answer within %s while %s: the server stopped answering "+
			"(it hangs or was stopped, is overloaded, or the network to it drops packets). genform gave up %s; "+
			"check the server at %s, then run the command again",
			b.name, fmtWait(b.bounds.answer), doing, lock, b.addr)}
		return b.lost
	case b.conn.IsClosed():
		b.lost = &unavailableError{fmt.Sprintf("the connection to the PostgreSQL server at %s was lost while %s%s (PostgreSQL state %s); "+
			"check that the server runs, then run the command again (%v)", b.addr, doing, andLock, b.name, err)}
		return b.lost
	}
	return err
}

// fail is err explained (explain), or else wrapped as what failed: "what
// b.name: err".
func (b *backend) fail(what, doing string, err error) error {
	e := b.explain(doing, err)
	if errors.Is(e, statefile.ErrUnavailable) {
		return e
	}
	return fmt.Errorf("%s %s: %w", what, b.name, e)
}

// giveUp ends a connection whose server stopped answering, without
// waiting for it: pgx closes one whose answer came too late, and this
// makes sure.
func (b *backend) giveUp() {
	if !b.conn.IsClosed() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // closes the socket at once
		_ = b.conn.Close(ctx)
	}
}

// fmtWait prints a bound as a user writes one: 5s, 1m30s, 2m.
func fmtWait(d time.Duration) string {
	if d == 0 {
		return "without limit"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
