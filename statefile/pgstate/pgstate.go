package pgstate

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"os"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/genform/genform/statefile"
)

// DefaultSchema is the schema the state is kept in when the configuration
// names none.
const DefaultSchema = "genform"

// pollInterval is how often a command waiting for the lock tries again.
const pollInterval = 100 * time.Millisecond

// Config says where the state is.
type Config struct {
	// ConnString is a PostgreSQL connection URL or key=value string. Its
	// parts left out come from libpq's environment variables (PGHOST,
	// PGPORT, PGUSER, PGPASSWORD, PGDATABASE, ...), so "" uses them alone.
	ConnString string
	// Schema is the schema holding the tables; "" is DefaultSchema.
	Schema string
}

// schemaName is what a schema name may be: an unquoted PostgreSQL
// identifier, lower case, at most 63 bytes.
var schemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// ValidSchema reports whether name can be a schema_name.
func ValidSchema(name string) bool { return schemaName.MatchString(name) }

// Open connects to the database, takes the state's lock for a writer
// (exclusive, or shared for a reader with opts.KeepWritersOut), waiting up
// to opts.LockTimeout, and opens the state kept in cfg.Schema, creating
// the schema and its tables with opts.Create. Past the timeout it returns
// a *statefile.LockedError naming the holder. Any other reader takes no
// lock: it reads the last state committed, in one transaction (see View).
// A state that does not exist yet, without opts.Create, is an error
// matching fs.ErrNotExist, as for a missing file.
func Open(cfg Config, opts statefile.Options) (*statefile.Store, error) {
	b, err := connect(cfg, opts.ReadOnly)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			ctx, cancel := b.roundTrip()
			defer cancel()
			b.conn.Close(ctx)
		}
	}()
	if !opts.ReadOnly || opts.KeepWritersOut {
		if err := b.lock(opts); err != nil {
			return nil, err
		}
		b.locked = true
	}
	if err := b.prepare(opts); err != nil {
		return nil, err
	}
	ok = true
	return statefile.OpenBackend(b, opts)
}

// connect connects to the database of cfg, for the state in cfg.Schema
// (a reader's when readOnly), with the session's bounds set; nothing is
// locked or read yet.
func connect(cfg Config, readOnly bool) (*backend, error) {
	if cfg.Schema == "" {
		cfg.Schema = DefaultSchema
	}
	if !ValidSchema(cfg.Schema) {
		return nil, fmt.Errorf("opening the PostgreSQL state: schema_name %q is not a lower-case identifier (letters, digits and _, at most 63)", cfg.Schema)
	}
	pcfg, err := parse(cfg.ConnString)
	if err != nil {
		return nil, fmt.Errorf("opening the PostgreSQL state: %w", err)
	}
	if pcfg.ConnectTimeout == 0 {
		pcfg.ConnectTimeout = defaultConnectTimeout
	}
	b := &backend{
		name:     Location{Host: pcfg.Host, Port: pcfg.Port, Database: pcfg.Database, Schema: cfg.Schema}.String(),
		addr:     net.JoinHostPort(pcfg.Host, strconv.Itoa(int(pcfg.Port))),
		schema:   cfg.Schema,
		readOnly: readOnly,
		key:      lockKey(cfg.Schema),
	}
	// ConnectTimeout bounds each address tried; the whole connection gets
	// a little more, for the fallbacks of a host with several, and for
	// setting the session's bounds.
	ctx, cancel := context.WithTimeout(context.Background(), 2*pcfg.ConnectTimeout)
	defer cancel()
	b.conn, err = pgx.ConnectConfig(ctx, pcfg)
	if err == nil {
		b.bounds, err = setBounds(ctx, b.conn, pcfg.RuntimeParams)
		if err != nil {
			b.conn.Close(ctx)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("connecting to the PostgreSQL state at %s:%d: %w; check that the server runs and is reachable, and the connection string (the backend \"pg\" block's conn_str, PG_CONN_STR or the PG* variables)", pcfg.Host, pcfg.Port, err)
	}
	return b, nil
}

// lockKey is the advisory lock's key for a schema: every genform using the
// schema takes the same one, and other applications are unlikely to.
func lockKey(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("genform state " + schema))
	return int64(h.Sum64())
}

// backend is a statefile.Backend on one connection.
type backend struct {
	name     string
	addr     string // host:port, for the error of a lost connection
	schema   string
	readOnly bool
	// locked is whether the connection holds the state's advisory lock:
	// a writer's, or a reader's that keeps writers out.
	locked bool
	key    int64
	bounds bounds

	// mu runs the transactions one at a time: they share conn.
	mu   sync.Mutex
	conn *pgx.Conn
	// tables is whether the schema's tables exist.
	tables bool
	// lost is why the connection was given up (see explain): every call
	// after fails with it.
	lost error
	// snap is a reader's transaction, begun by its first View and ended
	// by Close (see View).
	snap pgx.Tx
}

// roundTrip is the context of one statement: it bounds the wait for the
// server's answer.
func (b *backend) roundTrip() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), b.bounds.answer)
}

func (b *backend) table(name string) string { return pgx.Identifier{b.schema, name}.Sanitize() }

func (b *backend) Name() string { return b.name }

func (b *backend) Database() bool { return true }

// lock takes the advisory lock, polling until opts.LockTimeout.
func (b *backend) lock(opts statefile.Options) error {
	try := "SELECT pg_try_advisory_lock($1)"
	if opts.ReadOnly {
		try = "SELECT pg_try_advisory_lock_shared($1)"
	}
	deadline := time.Now().Add(opts.LockTimeout)
	for {
		var got bool
		ctx, cancel := b.roundTrip()
		err := b.conn.QueryRow(ctx, try, b.key).Scan(&got)
		cancel()
		if err != nil {
			return b.fail("locking the state", "taking the state's lock", err)
		}
		if got {
			return nil
		}
		if !time.Now().Before(deadline) {
			le := &statefile.LockedError{Path: b.name, Database: true, Shared: opts.ReadOnly, Holder: b.holder()}
			if opts.LockTimeout > 0 {
				le.Waited = opts.LockTimeout
			}
			return le
		}
		time.Sleep(min(pollInterval, time.Until(deadline)+time.Millisecond))
	}
}

// insufficientPrivilege is PostgreSQL's SQLSTATE for a statement the
// role may not run.
const insufficientPrivilege = "42501"

// holder reads who holds the lock; nil when nobody recorded it. A writer
// that recorded it and whose connection has ended is marked Gone: a
// reader keeping writers out, which records nothing, holds the lock then,
// or a writer that has not recorded itself yet.
func (b *backend) holder() *statefile.Holder {
	ctx, cancel := b.roundTrip()
	defer cancel()
	var h statefile.Holder
	var alive bool
	err := b.conn.QueryRow(ctx, `SELECT pid, host, command, started, EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = backend_pid) FROM `+
		b.table("lock_holder")+` WHERE id = 1`).Scan(&h.PID, &h.Host, &h.Command, &h.Started, &alive)
	if err != nil {
		// No row, or no table yet: the holder is unknown.
		return nil
	}
	h.Gone = !alive
	return &h
}

// prepare finds the tables, creates them for opts.Create, and records a
// writer as the lock's holder.
func (b *backend) prepare(opts statefile.Options) error {
	ctx, cancel := b.roundTrip()
	defer cancel()
	var reg *string
	if err := b.conn.QueryRow(ctx, "SELECT to_regclass($1)::text", b.table("records")).Scan(&reg); err != nil {
		return b.fail("opening the state", "opening the state", err)
	}
	b.tables = reg != nil
	if !b.tables && opts.Create {
		ctx, cancel := b.roundTrip()
		defer cancel()
		_, err := b.conn.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{b.schema}.Sanitize()+`;
CREATE TABLE IF NOT EXISTS `+b.table("buckets")+` (name bytea PRIMARY KEY);
CREATE TABLE IF NOT EXISTS `+b.table("records")+` (
	bucket bytea NOT NULL,
	key bytea NOT NULL,
	value bytea NOT NULL,
	PRIMARY KEY (bucket, key)
);
CREATE TABLE IF NOT EXISTS `+b.table("lock_holder")+` (
	id int PRIMARY KEY CHECK (id = 1),
	pid int NOT NULL,
	host text NOT NULL,
	command text NOT NULL,
	started timestamptz NOT NULL,
	backend_pid int NOT NULL
)`)
		if err != nil {
			return b.fail("creating the state", "creating the state's tables", err)
		}
		b.tables = true
	}
	if b.tables && !opts.ReadOnly {
		host, _ := os.Hostname()
		ctx, cancel := b.roundTrip()
		defer cancel()
		_, err := b.conn.Exec(ctx, `INSERT INTO `+b.table("lock_holder")+` (id, pid, host, command, started, backend_pid)
VALUES (1, $1, $2, $3, $4, pg_backend_pid())
ON CONFLICT (id) DO UPDATE SET pid = excluded.pid, host = excluded.host, command = excluded.command,
	started = excluded.started, backend_pid = excluded.backend_pid`,
			os.Getpid(), host, opts.Command, time.Now().UTC().Truncate(time.Second))
		if pe, ok := errors.AsType[*pgconn.PgError](err); ok && pe.Code == insufficientPrivilege {
			// A command that writes nothing (plan, whose lock only keeps
			// writers out) works with a role that may only read the state
			// (a pull request's CI job), the lock unrecorded. Every other
			// writer needs a role that can write, and is told so before
			// it does anything.
			if opts.WritesNothing {
				return nil
			}
			return fmt.Errorf("the database role of this connection may only read the state (%s): genform %s writes it, so connect with a role that can; a read-only role is enough for plan and the commands that read", pe.Message, opts.Command)
		}
		if err != nil {
			return b.fail("recording the lock holder of the state", "recording the lock's holder", err)
		}
	}
	return nil
}

// View runs fn in a repeatable-read, read-only transaction: it sees the
// state as last committed when its first statement ran, whatever commits
// meanwhile. A writer's Views each have one, beside its own writes, which
// no one else's can change. A reader, which takes no lock, runs every View
// in one such transaction, begun by its first and ended by Close: it reads
// one committed state from its Open to its Close, as the file's reader
// reads one copy, never one part from before a writer's commit and another
// from after it. A schema migration committed meanwhile is all of that
// state or none of it (a migration is one transaction, its table changes
// included), so a reader sees the old schema or the new one throughout,
// and it never waits for a writer: it takes only the lock a read takes on
// the tables, which no write of genform's waits for.
func (b *backend) View(fn func(statefile.RawTx) error) error {
	if b.readOnly {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.lost != nil {
			return b.lost
		}
		return b.explain("reading the state", b.viewSnapshot(fn))
	}
	return b.run("reading the state", pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
}

// viewSnapshot runs fn in the reader's transaction, begun on first use.
func (b *backend) viewSnapshot(fn func(statefile.RawTx) error) error {
	if !b.tables {
		return fn(&rawTx{b: b})
	}
	if b.snap == nil {
		ctx, cancel := b.roundTrip()
		tx, err := b.conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
		cancel()
		if err != nil {
			return fmt.Errorf("opening a transaction on the state %s: %w", b.name, err)
		}
		b.snap = tx
	}
	err := fn(&rawTx{b: b, tx: b.snap})
	if err != nil && !b.conn.IsClosed() && b.conn.PgConn().TxStatus() == 'E' {
		// A statement failed, and the transaction runs no other: the
		// next View begins another. The command fails with err anyway.
		ctx, cancel := b.roundTrip()
		_ = b.snap.Rollback(ctx)
		cancel()
		b.snap = nil
	}
	return err
}

func (b *backend) Update(fn func(statefile.RawTx) error) error {
	if b.readOnly {
		return fmt.Errorf("writing the state %s: opened read-only", b.name)
	}
	return b.run("writing the state", pgx.TxOptions{IsoLevel: pgx.ReadCommitted, AccessMode: pgx.ReadWrite}, fn)
}

// Batch is Update: the transactions share one connection, so there is
// nothing to gain from coalescing them, and a commit on PostgreSQL costs
// one WAL flush.
func (b *backend) Batch(fn func(statefile.RawTx) error) error { return b.Update(fn) }

// Migrate copies the records table to records_schema_<from>_backup and
// runs fn, in one transaction.
func (b *backend) Migrate(from int, fn func(statefile.RawTx) error) error {
	return b.Update(func(tx statefile.RawTx) error {
		t := tx.(*rawTx)
		backup := b.table(fmt.Sprintf("records_schema_%d_backup", from))
		ctx, cancel := b.roundTrip()
		defer cancel()
		if _, err := t.tx.Exec(ctx, "DROP TABLE IF EXISTS "+backup+"; CREATE TABLE "+backup+" AS TABLE "+b.table("records")); err != nil {
			return fmt.Errorf("backing up the state %s before migrating it: %w", b.name, err)
		}
		return fn(tx)
	})
}

// BeforeWrite has nothing to check: PostgreSQL checks its own pages.
func (b *backend) BeforeWrite() error { return nil }

// CheckStorage has nothing to check beneath the records.
func (b *backend) CheckStorage() ([]error, error) { return nil, nil }

// Close ends a reader's transaction, removes the holder row of a writer
// while the lock is still held, releases the lock and ends the
// connection. A connection given up (see explain) is only closed.
func (b *backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	var err error
	if b.snap != nil && b.lost == nil && !b.conn.IsClosed() {
		// It only read: ending it either way changes nothing.
		ctx, cancel := b.roundTrip()
		if e := b.snap.Rollback(ctx); e != nil {
			err = b.fail("ending the reading of the state", "ending its transaction", e)
		}
		cancel()
	}
	if b.lost == nil && !b.readOnly && b.tables && !b.conn.IsClosed() {
		ctx, cancel := b.roundTrip()
		_, e := b.conn.Exec(ctx, `DELETE FROM `+b.table("lock_holder")+` WHERE backend_pid = pg_backend_pid()`)
		cancel()
		if e != nil {
			err = b.fail("removing the lock holder record of the state", "removing the lock's holder record", e)
		}
	}
	// The server releases the lock when the connection ends, but only
	// once its backend process has noticed: releasing it first makes it
	// free when Close returns, for the next command.
	if b.locked && b.lost == nil && !b.conn.IsClosed() {
		unlock := "SELECT pg_advisory_unlock($1)"
		if b.readOnly {
			unlock = "SELECT pg_advisory_unlock_shared($1)"
		}
		ctx, cancel := b.roundTrip()
		_, e := b.conn.Exec(ctx, unlock, b.key)
		cancel()
		if e != nil {
			err = errors.Join(err, b.fail("releasing the lock of the state", "releasing the state's lock", e))
		}
	}
	ctx, cancel := b.roundTrip()
	defer cancel()
	if e := b.conn.Close(ctx); e != nil && b.lost == nil {
		err = errors.Join(err, e)
	}
	return err
}

// run runs fn in one transaction, doing what it says ("reading the
// state"). A bound that passed, or a connection lost meanwhile (the server
// stopped or restarted, the network went away), is reported naming the
// state and its server (see explain).
func (b *backend) run(doing string, opts pgx.TxOptions, fn func(statefile.RawTx) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lost != nil {
		return b.lost
	}
	return b.explain(doing, b.runLocked(opts, fn))
}

func (b *backend) runLocked(opts pgx.TxOptions, fn func(statefile.RawTx) error) error {
	if !b.tables {
		// No state here yet (it is opened without Create): nothing to
		// read, and nothing may be written.
		return fn(&rawTx{b: b})
	}
	ctx, cancel := b.roundTrip()
	tx, err := b.conn.BeginTx(ctx, opts)
	cancel()
	if err != nil {
		return fmt.Errorf("opening a transaction on the state %s: %w", b.name, err)
	}
	committed := false
	defer func() {
		if !committed && !b.conn.IsClosed() {
			ctx, cancel := b.roundTrip()
			_ = tx.Rollback(ctx)
			cancel()
		}
	}()
	t := &rawTx{b: b, tx: tx}
	if err := fn(t); err != nil {
		return err
	}
	committed = true // Commit ends the transaction, even when it fails
	ctx, cancel = b.roundTrip()
	defer cancel()
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("committing to the state %s: %w", b.name, err)
	}
	return nil
}
