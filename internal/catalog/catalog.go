package catalog

import (
	"fmt"
	"slices"
	"strings"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/schema"
)

var providers = map[string]*schema.Provider{}

// Register adds p to the tables: the one list of providers (package
// provider/all) registers each provider's own table, from its folder.
func Register(p *schema.Provider) {
	if _, dup := providers[p.Name]; dup {
		panic("catalog: provider registered twice: " + p.Name)
	}
	providers[p.Name] = p
}

// Lookup returns the provider named name, or nil.
func Lookup(name string) *schema.Provider { return providers[name] }

// LookupLive returns the live provider named name, which a provider
// block and provider = NAME may name, or nil.
func LookupLive(name string) *schema.Provider {
	if p := providers[name]; p != nil && !p.Service {
		return p
	}
	return nil
}

// Names lists the names of the live providers, which provider blocks
// and provider = NAME may name, sorted.
func Names() []string {
	var names []string
	for name, p := range providers {
		if !p.Service {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// Providers lists every live provider genform speaks, by name.
func Providers() []*schema.Provider {
	ps := make([]*schema.Provider, 0, len(providers))
	for _, n := range Names() {
		ps = append(ps, providers[n])
	}
	return ps
}

// Unknown is the error of a provider name the tables do not have.
func Unknown(name string) error {
	return fmt.Errorf("genform speaks no provider %q; it speaks %s", name, strings.Join(Names(), ", "))
}

// Tables is the registered tables as the configuration reads them
// (config.Providers): the live providers a provider block may name.
var Tables tables

type tables struct{}

// Live is the live provider named name, or nil.
func (tables) Live(name string) *schema.Provider { return LookupLive(name) }

// LiveNames lists the live providers' names, sorted.
func (tables) LiveNames() []string { return Names() }

// Endpoint is what the reference service's endpoint ep takes, or nil.
func (tables) Endpoint(ep addrs.Endpoint) *schema.Endpoint {
	if p := Lookup(ep.Provider()); p != nil {
		return p.Endpoints[ep]
	}
	return nil
}
