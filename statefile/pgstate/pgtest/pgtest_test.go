package pgtest

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(Run(m)) }

// TestDatabasesAreSeparate checks that the server starts and that each
// caller gets an empty database of its own.
func TestDatabasesAreSeparate(t *testing.T) {
	ctx := context.Background()
	a, b := ConnString(t), ConnString(t)
	if a == b {
		t.Fatalf("two callers got the same database %s", a)
	}
	ca, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close(ctx)
	if _, err := ca.Exec(ctx, "CREATE TABLE x (v int)"); err != nil {
		t.Fatal(err)
	}
	cb, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close(ctx)
	var n int
	if err := cb.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 'x'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("the second database sees %d tables x (%v)", n, err)
	}
}

// TestServerRestarts checks that a server of one's own stops, refusing
// connections, and starts again on the same port with its data.
func TestServerRestarts(t *testing.T) {
	ctx := context.Background()
	s, err := NewServer()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	conn, err := s.NewDatabase()
	if err != nil {
		t.Fatal(err)
	}
	c, err := pgx.Connect(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "CREATE TABLE kept (v int); INSERT INTO kept VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	if _, err := c.Exec(ctx, "SELECT 1"); err == nil {
		t.Fatal("a connection still works after Stop")
	}
	if c2, err := pgx.Connect(ctx, conn); err == nil {
		c2.Close(ctx)
		t.Fatal("a new connection is accepted after Stop")
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	c, err = pgx.Connect(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var v int
	if err := c.QueryRow(ctx, "SELECT v FROM kept").Scan(&v); err != nil || v != 7 {
		t.Fatalf("after Start: %d, %v", v, err)
	}
}
