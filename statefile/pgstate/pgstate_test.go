package pgstate_test

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/statefile"
	"github.com/genform/genform/statefile/boltstate"
	"github.com/genform/genform/statefile/pgstate"
	"github.com/genform/genform/statefile/pgstate/pgtest"
	"github.com/genform/genform/statefile/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

var schemaSeq atomic.Int64

// TestConformance runs the backends' conformance suite on PostgreSQL, each
// test in a schema of its own of one database.
func TestConformance(t *testing.T) {
	conn := pgtest.ConnString(t)
	storetest.Run(t, func(t *testing.T) storetest.Opener {
		cfg := pgstate.Config{ConnString: conn, Schema: fmt.Sprintf("s%d", schemaSeq.Add(1))}
		return func(opts statefile.Options) (*statefile.Store, error) { return pgstate.Open(cfg, opts) }
	})
}

// open opens the state of cfg, failing the test on an error.
func open(t *testing.T, cfg pgstate.Config, opts statefile.Options) *statefile.Store {
	t.Helper()
	s, err := pgstate.Open(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func sql(t *testing.T, conn, query string, args ...any) {
	t.Helper()
	c, err := pgx.Connect(context.Background(), conn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if _, err := c.Exec(context.Background(), query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// TestUnreachableServer checks that a database that does not answer is
// reported in seconds, naming where genform looked.
func TestUnreachableServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // nothing listens there now
	openFailsNamingServer(t, port, "", 6*time.Second, "with no server")
}

// openFailsNamingServer opens a state at 127.0.0.1:port, with options
// added to the connection string, where no server answers (what says how),
// and checks that Open fails within limit naming where it looked.
func openFailsNamingServer(t *testing.T, port int, options string, limit time.Duration, what string) {
	t.Helper()
	start := time.Now()
	_, err := pgstate.Open(pgstate.Config{ConnString: fmt.Sprintf("postgres://genform@127.0.0.1:%d/team?sslmode=disable%s", port, options)}, statefile.Options{Command: "plan"})
	if err == nil {
		t.Fatalf("Open succeeded %s", what)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("127.0.0.1:%d", port)) {
		t.Errorf("the error does not name the server: %v", err)
	}
	if d := time.Since(start); d > limit {
		t.Errorf("it took %v to give up %s, want at most %v", d, what, limit)
	}
}

// TestLockDiesWithConnection checks that a lock holder whose connection
// ends (a process killed, a network gone) leaves no stale lock, and can no
// longer write: every write goes through the connection that holds the
// lock.
func TestLockDiesWithConnection(t *testing.T) {
	conn := pgtest.ConnString(t)
	cfg := pgstate.Config{ConnString: conn}
	first := open(t, cfg, statefile.Options{Create: true, Command: "apply"})
	sql(t, conn, "SELECT pg_terminate_backend(backend_pid) FROM genform.lock_holder")
	second := open(t, cfg, statefile.Options{Command: "apply", LockTimeout: 5 * time.Second})
	if err := first.Update(func(tx *statefile.Tx) error { return tx.SetService("simulator") }); err == nil {
		t.Error("the holder whose connection ended still wrote")
	}
	if err := second.Update(func(tx *statefile.Tx) error { return tx.SetService("simulator") }); err != nil {
		t.Errorf("the new holder cannot write: %v", err)
	}
}

// TestSchemasAreSeparate checks that two schemas of one database are two
// states, each with its own lock.
func TestSchemasAreSeparate(t *testing.T) {
	conn := pgtest.ConnString(t)
	a := open(t, pgstate.Config{ConnString: conn, Schema: "team_a"}, statefile.Options{Create: true, Command: "apply"})
	b := open(t, pgstate.Config{ConnString: conn, Schema: "team_b"}, statefile.Options{Create: true, Command: "apply"})
	ma, _ := a.Meta()
	mb, _ := b.Meta()
	if ma.Lineage == mb.Lineage || ma.Lineage == "" {
		t.Errorf("two schemas share lineage %q", ma.Lineage)
	}
	if _, err := pgstate.Open(pgstate.Config{ConnString: conn, Schema: "Bad-Name"}, statefile.Options{}); err == nil || !strings.Contains(err.Error(), "schema_name") {
		t.Errorf("a schema name that is no identifier: %v", err)
	}
}

// TestMigrationFromSchema1 checks that the shared migrations upgrade a
// state kept in PostgreSQL, keeping a copy of the records first.
func TestMigrationFromSchema1(t *testing.T) {
	conn, cfg := schema1State(t)
	s := open(t, cfg, statefile.Options{Command: "apply"})
	m, err := s.Meta()
	if err != nil || m.SchemaVersion != statefile.SchemaVersion {
		t.Fatalf("meta after migration = %+v, %v", m, err)
	}
	if g, err := s.Generation("sha256:aa", "g1"); err != nil || g == nil {
		t.Errorf("the migration did not file the record's generation: %v, %v", g, err)
	}
	sql(t, conn, `DO $$ BEGIN IF (SELECT count(*) FROM genform.records_schema_1_backup WHERE bucket = 'history') <> 0
		OR (SELECT value FROM genform.records_schema_1_backup WHERE bucket = 'meta' AND key = 'schema_version') <> '1'
		THEN RAISE EXCEPTION 'the backup is not the schema 1 state'; END IF; END $$`)
}

// schema1State makes a state as genform wrote it at schema 1 (which had no
// history), holding a record of image.hero, in a database of its own.
func schema1State(t *testing.T) (conn string, cfg pgstate.Config) {
	t.Helper()
	conn = pgtest.ConnString(t)
	cfg = pgstate.Config{ConnString: conn}
	s := open(t, cfg, statefile.Options{Create: true, Command: "apply"})
	r := &statefile.Resource{Addr: mustAddr("image.hero"), Endpoint: addrs.Text2Image,
		Fingerprint: "sha256:aa", Request: []byte(`{"prompt":"x"}`), GenerationID: "g1", Status: "succeed", Dir: "generated/image/hero"}
	if err := s.Update(func(tx *statefile.Tx) error { return tx.Record(r) }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	sql(t, conn, `DELETE FROM genform.records WHERE bucket = 'history'; DELETE FROM genform.buckets WHERE name = 'history';
		UPDATE genform.records SET value = '1' WHERE bucket = 'meta' AND key = 'schema_version'`)
	return conn, cfg
}

func mustAddr(s string) addrs.Instance {
	a, err := addrs.ParseInstance(s)
	if err != nil {
		panic(err)
	}
	return a
}

// TestCopyBetweenBackends moves a state from a file into PostgreSQL and
// back: every record, the history, the lineage and the service arrive as
// they were, and a copy that would lose what the target holds is refused
// unless forced.
func TestCopyBetweenBackends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	file, err := boltstate.Open(path, statefile.Options{Create: true, Command: "apply"})
	if err != nil {
		t.Fatal(err)
	}
	err = file.Update(func(tx *statefile.Tx) error {
		for i := range 30 {
			r := &statefile.Resource{Addr: mustAddr(fmt.Sprintf("image.many[%d]", i)), Endpoint: addrs.Text2Image,
				Fingerprint: fmt.Sprintf("sha256:%02d", i), Request: []byte(`{"prompt":"x"}`), GenerationID: fmt.Sprintf("g%d", i), Status: "succeed", Dir: "generated/image/many"}
			if err := tx.Record(r); err != nil {
				return err
			}
		}
		if err := tx.Protect(mustAddr("image.many[1]"), true); err != nil {
			return err
		}
		if err := tx.RecordIntent(&statefile.Intent{Addr: mustAddr("image.pending"), Endpoint: addrs.Text2Image, Fingerprint: "sha256:p", GenerationID: "job"}); err != nil {
			return err
		}
		return tx.SetService("simulator")
	})
	if err != nil {
		t.Fatal(err)
	}
	want, err := file.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	cfg := pgstate.Config{ConnString: pgtest.ConnString(t)}
	pg := open(t, cfg, statefile.Options{Create: true, Command: "state push"})
	got, err := statefile.Copy(pg, file, false)
	if err != nil || got != (statefile.Copied{Resources: 30, Intents: 1, History: 30}) {
		t.Fatalf("Copy = %+v, %v", got, err)
	}
	snap, err := pg.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if snap.Meta.Serial != want.Meta.Serial+1 {
		t.Errorf("serial after the copy = %d, want %d", snap.Meta.Serial, want.Meta.Serial+1)
	}
	snap.Meta.Serial = want.Meta.Serial
	if d := cmp.Diff(want, snap); d != "" {
		t.Errorf("the copy in PostgreSQL (-file +postgres):\n%s", d)
	}
	if n, err := pg.HistoryLen(); err != nil || n != 30 {
		t.Errorf("history in PostgreSQL: %d, %v", n, err)
	}
	// The file is now behind: copying it again would lose the change the
	// copy itself counted.
	if _, err := statefile.Copy(pg, file, false); err == nil || !strings.Contains(err.Error(), "is newer") {
		t.Errorf("copying an older state over a newer one: %v", err)
	}
	// Another state entirely is refused too, unless forced.
	other, err := boltstate.Open(filepath.Join(t.TempDir(), "other.db"), statefile.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Update(func(tx *statefile.Tx) error { return tx.SetService("https://gen.example.com") }); err != nil {
		t.Fatal(err)
	}
	if _, err := statefile.Copy(pg, other, false); err == nil || !strings.Contains(err.Error(), "another state") {
		t.Errorf("copying another lineage over a state: %v", err)
	}
	if _, err := statefile.Copy(pg, other, true); err != nil {
		t.Fatalf("a forced copy: %v", err)
	}
	if snap, err := pg.Snapshot(); err != nil || len(snap.Resources) != 0 || snap.Meta.Service != "https://gen.example.com" {
		t.Errorf("after the forced copy: %d resources, service %q, %v", len(snap.Resources), snap.Meta.Service, err)
	}
	// And back into a new file.
	file.Close()
	file, err = boltstate.Open(path, statefile.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if _, err := statefile.Copy(pg, file, true); err != nil {
		t.Fatal(err)
	}
	back, err := boltstate.Open(filepath.Join(t.TempDir(), "back.db"), statefile.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	if _, err := statefile.Copy(back, pg, false); err != nil {
		t.Fatal(err)
	}
	snap, err = back.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Resources) != 30 || snap.Meta.Lineage != want.Meta.Lineage || !snap.Protections[mustAddr("image.many[1]")] {
		t.Errorf("the state copied back: %d resources, lineage %s (want %s)", len(snap.Resources), snap.Meta.Lineage, want.Meta.Lineage)
	}
}

// TestUnresponsiveServer checks that a server that takes the connection
// and never answers (a hung host, a firewall that swallows packets) fails
// the command once the connect timeout passes, instead of hanging it.
func TestUnresponsiveServer(t *testing.T) {
	t.Parallel() // it waits out two timeouts
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered, until the test ends
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	openFailsNamingServer(t, port, "&connect_timeout=1", 4*time.Second, "against a server that never answers")
	// Without connect_timeout, genform's own default bounds the wait.
	start := time.Now()
	_, err = pgstate.Open(pgstate.Config{ConnString: fmt.Sprintf("postgres://genform@127.0.0.1:%d/team?sslmode=disable", port)}, statefile.Options{Command: "plan"})
	if err == nil {
		t.Fatal("Open succeeded against a server that never answers")
	}
	if d := time.Since(start); d > 12*time.Second {
		t.Errorf("it took %v to give up without connect_timeout", d)
	}
	t.Logf("gave up after %v: %v", time.Since(start).Round(100*time.Millisecond), err)
}

// TestReadOnlyRole checks that a role that may only read the state's
// tables can plan (the lock is taken, nothing is written) and read (what
// show PLANFILE reads to plan again included), and
// that a writer connected with it is told it needs a role that can write,
// before it does anything.
func TestReadOnlyRole(t *testing.T) {
	conn := pgtest.ConnString(t)
	cfg := pgstate.Config{ConnString: conn}
	w := open(t, cfg, statefile.Options{Create: true, Command: "apply"})
	w.Close()
	// Roles belong to the whole server, which other tests share.
	role := fmt.Sprintf("genform_reader_%d_%d", os.Getpid(), schemaSeq.Add(1))
	sql(t, conn, `CREATE ROLE `+role+` LOGIN`)
	sql(t, conn, `GRANT USAGE ON SCHEMA genform TO `+role)
	sql(t, conn, `GRANT SELECT ON ALL TABLES IN SCHEMA genform TO `+role)
	u, err := url.Parse(conn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	reader := pgstate.Config{ConnString: u.String()}

	p := open(t, reader, statefile.Options{Command: "plan", WritesNothing: true})
	if _, err := p.Snapshot(); err != nil {
		t.Fatalf("plan with a read-only role cannot read the state: %v", err)
	}
	p.Close()
	// show PLANFILE plans again, as apply would, on the state opened for
	// reading: the meta, the state as planning reads it, the history.
	r := open(t, reader, statefile.Options{ReadOnly: true, Command: "show"})
	if _, err := r.Meta(); err != nil {
		t.Errorf("show with a read-only role cannot read the state's meta: %v", err)
	}
	if _, err := r.PlanSnapshot(); err != nil {
		t.Errorf("show with a read-only role cannot read the state as planning does: %v", err)
	}
	if _, err := r.Generations("fp"); err != nil {
		t.Errorf("show with a read-only role cannot read the history: %v", err)
	}
	r.Close()
	_, err = pgstate.Open(reader, statefile.Options{Command: "apply"})
	if err == nil || !strings.Contains(err.Error(), "may only read the state") || !strings.Contains(err.Error(), "genform apply writes it") {
		t.Fatalf("apply with a read-only role: %v", err)
	}
}
