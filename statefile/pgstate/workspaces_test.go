package pgstate_test

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/genform/genform/statefile"
	"github.com/genform/genform/statefile/pgstate"
	"github.com/genform/genform/statefile/pgstate/pgtest"
)

// TestWorkspaceSchemas: the states kept beside one (its workspaces) are
// listed by their prefix, a role that may only read, given the default
// privileges the docs name, lists and plans a workspace made after its
// grants, and Drop removes one under its lock, after its check, and
// nothing else.
func TestWorkspaceSchemas(t *testing.T) {
	conn := pgtest.ConnString(t)
	role := fmt.Sprintf("genform_ws_reader_%d_%d", os.Getpid(), schemaSeq.Add(1))
	sql(t, conn, `CREATE ROLE `+role+` LOGIN`)
	// What docs/workspaces.md asks of a database's owner once, so that a
	// reader reads every workspace made later.
	sql(t, conn, `ALTER DEFAULT PRIVILEGES GRANT USAGE ON SCHEMAS TO `+role)
	sql(t, conn, `ALTER DEFAULT PRIVILEGES GRANT SELECT ON TABLES TO `+role)

	for _, s := range []string{"genform", "genform_ws_pr_2d1", "genform_ws_pr_2d2", "other"} {
		st := open(t, pgstate.Config{ConnString: conn, Schema: s}, statefile.Options{Create: true, Command: "apply"})
		st.Close()
	}
	u, err := url.Parse(conn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	reader := pgstate.Config{ConnString: u.String(), Schema: "genform"}

	got, err := pgstate.Schemas(reader, "genform_ws_")
	if err != nil {
		t.Fatalf("a reader lists the workspaces: %v", err)
	}
	if diff := cmp.Diff([]string{"genform_ws_pr_2d1", "genform_ws_pr_2d2"}, got); diff != "" {
		t.Errorf("Schemas (-want +got):\n%s", diff)
	}
	ws := reader
	ws.Schema = "genform_ws_pr_2d1"
	p := open(t, ws, statefile.Options{Command: "plan", WritesNothing: true})
	if _, err := p.Snapshot(); err != nil {
		t.Errorf("a reader cannot plan a workspace made after its grants: %v", err)
	}
	p.Close()
	r := open(t, ws, statefile.Options{ReadOnly: true, Command: "plan"})
	if _, err := r.Generations("fp"); err != nil {
		t.Errorf("a reader cannot read a workspace's history: %v", err)
	}
	r.Close()

	// Drop: a check's refusal drops nothing; then it drops one schema.
	writer := pgstate.Config{ConnString: conn, Schema: "genform_ws_pr_2d1"}
	refused := errors.New("still manages files")
	if err := pgstate.Drop(writer, statefile.Options{Command: "workspace delete"}, func(*statefile.Store) error { return refused }); !errors.Is(err, refused) {
		t.Fatalf("Drop with a refusing check = %v", err)
	}
	checked := false
	if err := pgstate.Drop(writer, statefile.Options{Command: "workspace delete"}, func(st *statefile.Store) error {
		_, err := st.Snapshot()
		checked = true
		return err
	}); err != nil || !checked {
		t.Fatalf("Drop = %v (checked %v)", err, checked)
	}
	if err := pgstate.Drop(writer, statefile.Options{Command: "workspace delete"}, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("dropping it again = %v, want fs.ErrNotExist", err)
	}
	got, err = pgstate.Schemas(pgstate.Config{ConnString: conn}, "genform")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"genform", "genform_ws_pr_2d2"}, got); diff != "" {
		t.Errorf("after Drop (-want +got):\n%s", diff)
	}
}
