package configtest

import (
	"testing"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/catalog"
	// The tables of the providers, registered by the one list of them.
	"github.com/genform/genform/internal/dirtest"
	_ "github.com/genform/genform/internal/provider/all"
)

// Load writes src as the main.gen.hcl of dir, in place of the one there,
// and loads the configuration of dir; a configuration with errors fails
// t.
func Load(t testing.TB, dir, src string) *config.Config {
	t.Helper()
	dirtest.Write(t, dir, map[string]string{"main.gen.hcl": src})
	cfg, diags := config.Load(dir, config.Options{Providers: catalog.Tables})
	if diags.HasErrors() {
		t.Fatalf("config: %v", diags)
	}
	return cfg
}
