package config

import (
	"github.com/genform/genform/internal/catalog"
	"github.com/hashicorp/hcl/v2"
	// The providers' tables, which package catalog holds once the one
	// list of providers registers them.
	_ "github.com/genform/genform/internal/provider/all"
)

// loadTest is Load with the providers genform speaks, unless opts names
// others.
func loadTest(dir string, opts Options) (*Config, hcl.Diagnostics) {
	if opts.Providers == nil {
		opts.Providers = catalog.Tables
	}
	return Load(dir, opts)
}
