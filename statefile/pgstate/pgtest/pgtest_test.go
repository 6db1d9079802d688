package pgtest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(Run(m)) }

// connect opens a connection to conn, closed when the test ends.
func connect(t *testing.T, conn string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), conn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// ownServer starts a server of the test's own, stopped when the test
// ends, and makes a database on it.
func ownServer(t *testing.T) (*Server, string) {
	t.Helper()
	s, err := NewServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	conn, err := s.NewDatabase()
	if err != nil {
		t.Fatal(err)
	}
	return s, conn
}

// TestDatabasesAreSeparate checks that the server starts and that each
// caller gets an empty database of its own.
func TestDatabasesAreSeparate(t *testing.T) {
	ctx := context.Background()
	a, b := ConnString(t), ConnString(t)
	if a == b {
		t.Fatalf("two callers got the same database %s", a)
	}
	ca := connect(t, a)
	if _, err := ca.Exec(ctx, "CREATE TABLE x (v int)"); err != nil {
		t.Fatal(err)
	}
	cb := connect(t, b)
	var n int
	if err := cb.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 'x'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("the second database sees %d tables x (%v)", n, err)
	}
}

// TestServerRestarts checks that a server of one's own stops, refusing
// connections, and starts again on the same port with its data.
func TestServerRestarts(t *testing.T) {
	ctx := context.Background()
	s, conn := ownServer(t)
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

// TestServerFreezes checks that a frozen server keeps its connections and
// answers nothing, not even a new connection, and goes on where it was
// once thawed.
func TestServerFreezes(t *testing.T) {
	s, conn := ownServer(t)
	c := connect(t, conn)
	if err := s.Freeze(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	_, err := c.Exec(ctx, "SELECT 1")
	cancel()
	if err == nil {
		t.Fatal("a frozen server answered")
	}
	ctx, cancel = context.WithTimeout(context.Background(), 500*time.Millisecond)
	c2, err := pgx.Connect(ctx, conn)
	cancel()
	if err == nil {
		c2.Close(context.Background())
		t.Fatal("a frozen server took a new connection")
	}
	if err := s.Thaw(); err != nil {
		t.Fatal(err)
	}
	c3, err := pgx.Connect(context.Background(), conn)
	if err != nil {
		t.Fatalf("after Thaw: %v", err)
	}
	c3.Close(context.Background())
}

// TestHoldLock checks that the lock HoldLock takes keeps out even a
// reader until it is released.
func TestHoldLock(t *testing.T) {
	conn := ConnString(t)
	ctx := context.Background()
	c := connect(t, conn)
	if _, err := c.Exec(ctx, "CREATE TABLE t (v int)"); err != nil {
		t.Fatal(err)
	}
	release, err := HoldLock(conn, "public.t")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "SET lock_timeout = '200ms'"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "SELECT * FROM t"); err == nil {
		t.Error("read a table HoldLock holds")
	}
	release()
	if _, err := c.Exec(ctx, "SELECT * FROM t"); err != nil {
		t.Errorf("after release: %v", err)
	}
}
