package pgstate_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/statefile"
	"github.com/genform/genform/statefile/pgstate"
	"github.com/genform/genform/statefile/pgstate/pgtest"
)

// query returns the one integer query answers, on a session of its own.
func query(t *testing.T, conn, q string) int {
	t.Helper()
	c, err := pgx.Connect(context.Background(), conn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	var n int
	if err := c.QueryRow(context.Background(), q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// advisoryLocks counts the advisory locks held on the database of conn.
const advisoryLocks = `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`

// A reader takes no advisory lock, shared or not: the writer's is the only
// one while both are open, and a writer opening beside the reader, its
// transaction still open, gets the lock at once and writes without
// waiting. A reader keeping writers out (init copying the state) takes the
// shared lock as before.
func TestReaderTakesNoLock(t *testing.T) {
	conn := pgtest.ConnString(t)
	cfg := pgstate.Config{ConnString: conn}
	w := open(t, cfg, statefile.Options{Create: true, Command: "apply"})
	if err := w.Update(func(tx *statefile.Tx) error { return tx.SetService("simulator") }); err != nil {
		t.Fatal(err)
	}
	r := open(t, cfg, statefile.Options{ReadOnly: true, Command: "show"})
	if m, err := r.Meta(); err != nil || m.Service != "simulator" {
		t.Fatalf("the reader reads %+v, %v", m, err)
	}
	if n := query(t, conn, advisoryLocks); n != 1 {
		t.Errorf("%d advisory locks held beside a writer and a reader, want the writer's alone", n)
	}
	w.Close()
	start := time.Now()
	w2 := open(t, cfg, statefile.Options{Command: "apply"})
	if err := w2.Update(func(tx *statefile.Tx) error { return tx.SetService("https://gen.example.com") }); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the writer beside a reader took %v", d)
	}
	if m, err := r.Meta(); err != nil || m.Service != "simulator" {
		t.Errorf("the reader, after a writer committed: %+v, %v; want the state it began reading", m, err)
	}
	r.Close()
	w2.Close()
	k := open(t, cfg, statefile.Options{ReadOnly: true, KeepWritersOut: true, Command: "init"})
	if n := query(t, conn, advisoryLocks); n != 1 {
		t.Errorf("a reader keeping writers out holds %d advisory locks, want its shared one", n)
	}
	k.Close()
}

// A reader opening while a writer migrates the state (in one transaction,
// which also creates the backup table) reads the old schema whole, without
// waiting for the migration; once it is committed, a new reader reads the
// new one, while the first still reads the old one to its end.
func TestReaderDuringMigration(t *testing.T) {
	conn, cfg := schema1State(t)

	// Another session holds the row of the schema version, which the
	// migration writes last: the migration stops there, its history and
	// backup table written, uncommitted.
	ctx := context.Background()
	holder, err := pgx.Connect(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(ctx)
	hold, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hold.Exec(ctx, `SELECT 1 FROM genform.records WHERE bucket = 'meta' AND key = 'schema_version' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	migrated := make(chan error, 1)
	go func() {
		w, err := pgstate.Open(cfg, statefile.Options{Command: "apply"})
		if err == nil {
			defer w.Close()
			var m statefile.Meta
			if m, err = w.Meta(); err == nil && m.SchemaVersion != statefile.SchemaVersion {
				t.Errorf("the writer's schema after migrating: %d", m.SchemaVersion)
			}
		}
		migrated <- err
	}()
	deadline := time.Now().Add(4 * time.Second)
	for query(t, conn, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`) == 0 {
		if time.Now().After(deadline) {
			hold.Rollback(ctx)
			t.Fatalf("the migration never waited on the row: %v", <-migrated)
		}
		time.Sleep(20 * time.Millisecond)
	}

	start := time.Now()
	old := open(t, cfg, statefile.Options{ReadOnly: true, Command: "show"})
	m, err := old.Meta()
	if err != nil || m.SchemaVersion != 1 {
		t.Errorf("a reader during the migration reads schema %d (%v), want 1", m.SchemaVersion, err)
	}
	h, err := old.History(addrs.Instance{})
	if err != nil || len(h) != 0 {
		t.Errorf("a reader during the migration reads a history of %d (%v), want none yet", len(h), err)
	}
	if got, err := old.Resource(mustAddr("image.hero")); err != nil || got == nil {
		t.Errorf("a reader during the migration: %v, %v", got, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the reader took %v beside the migration", d)
	}

	if err := hold.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-migrated; err != nil {
		t.Fatalf("the migration: %v", err)
	}
	if m, err := old.Meta(); err != nil || m.SchemaVersion != 1 {
		t.Errorf("the first reader, after the migration committed: schema %d (%v), want still 1", m.SchemaVersion, err)
	}
	if h, err := old.History(addrs.Instance{}); err != nil || len(h) != 0 {
		t.Errorf("the first reader, after the migration committed: a history of %d (%v)", len(h), err)
	}
	now := open(t, cfg, statefile.Options{ReadOnly: true, Command: "show"})
	if m, err := now.Meta(); err != nil || m.SchemaVersion != statefile.SchemaVersion {
		t.Errorf("a reader after the migration: schema %d (%v)", m.SchemaVersion, err)
	}
	if g, err := now.Generation("sha256:aa", "g1"); err != nil || g == nil {
		t.Errorf("a reader after the migration: generation %v, %v", g, err)
	}
}
