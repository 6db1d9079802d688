package pgstate

import (
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5"

	"github.com/genform/genform/statefile"
)

// Schemas lists the schemas of the database of cfg whose names begin with
// prefix, sorted: the states kept beside the one of cfg.Schema (a
// configuration's workspaces). A role that may read the database lists
// them.
func Schemas(cfg Config, prefix string) ([]string, error) {
	b, err := connect(cfg, true)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	ctx, cancel := b.roundTrip()
	defer cancel()
	rows, err := b.conn.Query(ctx, `SELECT schema_name FROM information_schema.schemata
WHERE starts_with(schema_name, $1) ORDER BY schema_name`, prefix)
	if err != nil {
		return nil, b.fail("listing the states beside it", "listing the schemas", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, b.fail("listing the states beside it", "listing the schemas", err)
	}
	return names, nil
}

// Drop removes the state kept in cfg.Schema, its tables and the schema,
// under the state's lock (waiting up to opts.LockTimeout for a writer
// that holds it). check, when not nil, is called first with the state
// open under that lock: an error from it stops the drop and is returned.
// A schema that holds no state is an error matching fs.ErrNotExist. A
// writer that was waiting for the lock finds no state when it gets it.
func Drop(cfg Config, opts statefile.Options, check func(*statefile.Store) error) error {
	b, err := connect(cfg, false)
	if err != nil {
		return err
	}
	opts.ReadOnly, opts.Create, opts.WritesNothing = false, false, false
	if err := b.lock(opts); err != nil {
		b.Close()
		return err
	}
	b.locked = true
	if err := b.prepare(opts); err != nil {
		b.Close()
		return err
	}
	if !b.tables {
		b.Close()
		return fmt.Errorf("%s holds no state: %w", b.name, fs.ErrNotExist)
	}
	st, err := statefile.OpenBackend(b, opts)
	if err != nil {
		return err
	}
	defer st.Close()
	if check != nil {
		if err := check(st); err != nil {
			return err
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	ctx, cancel := b.roundTrip()
	defer cancel()
	if _, err := b.conn.Exec(ctx, `DROP SCHEMA `+pgx.Identifier{b.schema}.Sanitize()+` CASCADE`); err != nil {
		return b.fail("removing the state", "dropping its schema", err)
	}
	// The tables are gone: nothing is left to clean up at Close.
	b.tables = false
	return nil
}
