package config

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/genform/genform/internal/dirtest"
)

// TestBackendBlock checks the genform block's backend "pg" block: its
// attributes, the PG_CONN_STR fallback, and the state file as default.
func TestBackendBlock(t *testing.T) {
	c := mustLoad(t, `image "a" { prompt = "x" }`, Options{})
	if c.Settings.Backend != nil || c.Settings.StateFile != DefaultStateFile {
		t.Errorf("without a backend block: backend %+v, state file %q", c.Settings.Backend, c.Settings.StateFile)
	}
	c = mustLoad(t, `genform {
  backend "pg" {
    conn_str    = "postgres://team@db.example.com:5432/media"
    schema_name = "brand_x"
  }
}`, Options{Environ: []string{"PG_CONN_STR=postgres://other@elsewhere/db"}})
	if be := c.Settings.Backend; be == nil || be.Type != "pg" || be.ConnStr != "postgres://team@db.example.com:5432/media" || !be.ConnStrWritten || be.SchemaName != "brand_x" {
		t.Errorf("backend = %+v", be)
	}
	c = mustLoad(t, `genform {
  backend "pg" {}
}`, Options{Environ: []string{"PG_CONN_STR=host=db.example.com dbname=media"}})
	if be := c.Settings.Backend; be == nil || be.ConnStr != "host=db.example.com dbname=media" || be.ConnStrWritten || be.SchemaName != DefaultSchemaName {
		t.Errorf("backend with PG_CONN_STR = %+v", be)
	}
}

// TestBackendBlockInvalid checks that each bad backend block is refused
// with a diagnostic saying what to write instead. (Whether conn_str holds
// a password, and whether the driver can read it, internal/backend says:
// its tests check the warning.)
func TestBackendBlockInvalid(t *testing.T) {
	for _, tc := range []struct {
		name, src, summary, detail string
	}{
		{"unknown type", `genform {
  backend "s3" {}
}`, "Unsupported backend type", `backend "pg"`},
		{"two blocks", `genform {
  backend "pg" {}
  backend "pg" {}
}`, "Duplicate backend block", "main.gen.hcl:2"},
		{"with state_file", `genform {
  state_file = "x/state.db"
  backend "pg" {}
}`, "Conflicting state settings", "keep one of them"},
		{"schema name", `genform {
  backend "pg" { schema_name = "Brand-X" }
}`, "Invalid schema_name", `got "Brand-X"`},
		{"conn_str", `genform {
  backend "pg" { conn_str = "db.example.com" }
}`, "Invalid conn_str", "key=value"},
		{"unknown argument", `genform {
  backend "pg" { database = "x" }
}`, "Unsupported argument", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diags := loadErrors(t, tc.src, Options{})
			wantDiag(t, diags, tc.summary, tc.detail)
		})
	}
	// A URL of several hosts, which net/url cannot read, is the driver's
	// to judge.
	_, diags := loadTest(dirtest.New(t, map[string]string{"main.gen.hcl": `genform {
  backend "pg" { conn_str = "postgres://team@db1:5432,db2:5433/media" }
}`}), Options{})
	if len(diags) != 0 {
		t.Errorf("a URL of two hosts: %s", diagList(diags))
	}
}

// A variable the pg backend's connection string is made from carries its
// password: it is as secret as the service token's, so a saved plan never
// holds its value.
func TestConnStrVariableIsSecret(t *testing.T) {
	c := mustLoad(t, `variable "pgpw" {}
variable "host" {
  default = "db.example.com"
}
locals {
  auth = "team:${var.pgpw}"
}
genform {
  backend "pg" {
    conn_str = "postgres://${local.auth}@db.example.com:5432/media"
  }
}
image "a" { prompt = "x" }
`, Options{Vars: []string{"pgpw=hunter2"}})
	if !c.Secret("pgpw") {
		t.Error("a variable the connection string is made from, through a local, is not secret")
	}
	if c.Secret("host") {
		t.Error("a variable the connection string does not use is secret")
	}
}

// wantDiag finds the diagnostic of summary in diags, failing the test
// when there is none or its detail lacks detail.
func wantDiag(t *testing.T, diags hcl.Diagnostics, summary, detail string) *hcl.Diagnostic {
	t.Helper()
	var found *hcl.Diagnostic
	for _, d := range diags {
		if d.Summary == summary {
			found = d
		}
	}
	if found == nil {
		t.Fatalf("no %q diagnostic in %s", summary, diagList(diags))
	}
	if !strings.Contains(found.Detail, detail) {
		t.Errorf("detail %q does not contain %q", found.Detail, detail)
	}
	return found
}
