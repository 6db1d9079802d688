package backend

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/catalog"
)

// load loads a configuration whose backend block's conn_str is conn
// (written as an HCL string), with environ.
func load(t *testing.T, conn string, environ ...string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	block := "backend \"pg\" {}"
	if conn != "" {
		block = "backend \"pg\" {\n    conn_str = " + conn + "\n  }"
	}
	src := "genform {\n  " + block + "\n}\n\nimage \"a\" {\n  prompt = \"x\"\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.gen.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.Load(dir, config.Options{Environ: environ, Providers: catalog.Tables})
	if diags.HasErrors() {
		t.Fatalf("loading: %v", diags)
	}
	return cfg
}

// TestRememberedHoldsNoSecret checks what .genform/backend.json holds of a
// PostgreSQL storage: where it is and how to reach it, never a secret.
func TestRememberedHoldsNoSecret(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("PGPASSWORD", "fromenv")
	cfg := load(t, `"host=db.example.com port=5433 user=team dbname=media password=hunter\\ twotail sslpassword=keypass sslmode=require application_name=x"`)
	s, err := Configured(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Remember(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(File)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"hunter", "twotail", "keypass", "fromenv", "password", "application_name"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("%s holds %q:\n%s", File, secret, b)
		}
	}
	r, err := Remembered()
	if err != nil {
		t.Fatal(err)
	}
	if r.ConnString != "host=db.example.com port=5433 dbname=media user=team sslmode=require" || !r.Same(s) {
		t.Errorf("remembered %+v", r)
	}
}
