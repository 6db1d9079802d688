package backend

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// TestDiagnosticsWarnOfAPassword checks that a secret written into
// conn_str draws one warning, in every form the driver reads, that never
// quotes it and points at the block's header; that one from PG_CONN_STR,
// PGPASSWORD, or nowhere draws none; and that a conn_str the driver cannot
// read is refused without being quoted.
func TestDiagnosticsWarnOfAPassword(t *testing.T) {
	for _, c := range []struct {
		name, conn string
		environ    []string
		want       string // the secrets named; "" for no warning
	}{
		{"URL user info", `"postgres://team:hunter2@db.example.com/media"`, nil, "(password)"},
		{"URL parameter", `"postgres://team@db.example.com/media?sslmode=require&password=hunter2"`, nil, "(password)"},
		{"key=value, spaces around =", `"host=db.example.com password = hunter2"`, nil, "(password)"},
		{"key=value, escaped space", `"host=db.example.com password=hunter\\ twotail"`, nil, "(password)"},
		{"key=value, escaped quote", `"host=db.example.com password='hunter\\'s'"`, nil, "(password)"},
		{"sslpassword", `"host=db.example.com sslpassword=hunter2 password=hunter3"`, nil, "(password and sslpassword)"},
		{"several hosts", `"postgres://team:hunter2@db1:5432,db2:5433/media"`, nil, "(password)"},
		{"none", `"postgres://team@db.example.com/media"`, nil, ""},
		{"PGPASSWORD", `"postgres://team@db.example.com/media"`, []string{"PGPASSWORD=hunter2"}, ""},
		{"PG_CONN_STR", "", []string{"PG_CONN_STR=postgres://team:hunter2@db.example.com/media"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, kv := range c.environ {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			diags := Diagnostics(load(t, c.conn, c.environ...))
			if c.want == "" {
				if len(diags) != 0 {
					t.Fatalf("diagnostics %v, want none", diags)
				}
				return
			}
			if len(diags) != 1 || diags[0].Severity != hcl.DiagWarning || diags[0].Summary != "Password in conn_str" {
				t.Fatalf("diagnostics %v, want one warning", diags)
			}
			d := diags[0]
			if !strings.Contains(d.Detail, "holds a secret "+c.want) || !strings.Contains(d.Detail, "PGPASSWORD or ~/.pgpass") {
				t.Errorf("detail %q", d.Detail)
			}
			if strings.Contains(d.Detail, "hunter") || strings.Contains(d.Detail, "twotail") {
				t.Errorf("the warning quotes the secret: %q", d.Detail)
			}
			if d.Subject == nil || d.Subject.Start.Line != 2 {
				t.Errorf("the warning points at %v, want the block's header, line 2", d.Subject)
			}
		})
	}
	diags := Diagnostics(load(t, `"host=db.example.com password=hunter2 twotail"`))
	if len(diags) != 1 || diags[0].Severity != hcl.DiagError || diags[0].Summary != "Invalid conn_str" ||
		strings.Contains(diags[0].Detail, "hunter2") || strings.Contains(diags[0].Detail, "twotail") {
		t.Errorf("a conn_str the driver cannot read: %v", diags)
	}
}
