package operation

import (
	"testing"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/catalog"
	"github.com/genform/genform/internal/configtest"
)

// Unset, a provider's window starts at its documented default and may
// widen to its documented top tier; set (in its block or by
// -parallelism), the parallelism is both where it starts and its ceiling.
func TestProviderLimits(t *testing.T) {
	fal := catalog.Lookup("fal").Limits
	set := &config.Config{Providers: map[string]*config.Provider{
		"fal": {Name: "fal", Catalog: catalog.Lookup("fal"), Settings: config.Service{Parallelism: 5}},
	}}
	tests := []struct {
		name               string
		cfg                *config.Config
		flag               int
		start, parallelism int
	}{
		{"unset", configtest.Load(t, t.TempDir(), ""), 0, fal.Parallelism, fal.MaxParallelism},
		{"set in the block", set, 0, 0, 5},
		{"set by the flag", configtest.Load(t, t.TempDir(), ""), 7, 0, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lim := providerLimits(tt.cfg, "fal", tt.flag)
			if lim.Start != tt.start || lim.Parallelism != tt.parallelism {
				t.Errorf("start %d, ceiling %d; want %d and %d", lim.Start, lim.Parallelism, tt.start, tt.parallelism)
			}
		})
	}
}
