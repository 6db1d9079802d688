package all

import (
	"slices"

	"github.com/genform/genform/internal/catalog"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/provider/fal"
	"github.com/genform/genform/internal/provider/luma"
	"github.com/genform/genform/internal/provider/lumaagents"
	"github.com/genform/genform/internal/provider/openai"
	"github.com/genform/genform/internal/provider/reference"
	"github.com/genform/genform/internal/provider/replicate"
	"github.com/genform/genform/internal/provider/runway"
)

// Providers lists every provider genform speaks, the reference service
// first.
var Providers = []*provider.Registration{
	reference.Registration,
	fal.Registration,
	replicate.Registration,
	openai.Registration,
	runway.Registration,
	luma.Registration,
	lumaagents.Registration,
}

func init() {
	for _, r := range Providers {
		catalog.Register(r.Table)
	}
}

// Lookup is the provider named name, or nil.
func Lookup(name string) *provider.Registration {
	i := slices.IndexFunc(Providers, func(r *provider.Registration) bool { return r.Name() == name })
	if i < 0 {
		return nil
	}
	return Providers[i]
}

// Service is the reference service's registration: the provider of every
// block that names none, configured by the service block.
func Service() *provider.Registration {
	i := slices.IndexFunc(Providers, func(r *provider.Registration) bool { return r.Table.Service })
	return Providers[i]
}
