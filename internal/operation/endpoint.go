package operation

import (
	"strings"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/catalog"
	"github.com/genform/genform/internal/operation/outcome"
	"github.com/genform/genform/reconcile/plans"
)

// builtinToken is what genform presents to its own in-process simulator.
const builtinToken = "genform-builtin"

// Endpoint says which service a command talks to.
type Endpoint struct {
	// ID enters fingerprints: the base URL, or "simulator".
	ID string
	// BaseURL is "" for the built-in simulator.
	BaseURL string
	Token   string
	// From says where BaseURL was set: "service.base_url" or
	// "GENFORM_BASE_URL"; "" for the built-in simulator.
	From string
}

// Builtin reports whether the endpoint is the built-in simulator.
func (ep Endpoint) Builtin() bool { return ep.BaseURL == "" }

// Reference is the endpoint as the views name it: without its token.
func (ep Endpoint) Reference() outcome.Reference {
	return outcome.Reference{ID: ep.ID, BaseURL: ep.BaseURL, From: ep.From}
}

// ResolveEndpoint applies the precedence config > environment > built-in.
func ResolveEndpoint(cfg *config.Config, getenv func(string) string) Endpoint {
	base, from := cfg.Service.BaseURL, "service.base_url"
	if base == "" {
		base, from = getenv("GENFORM_BASE_URL"), "GENFORM_BASE_URL"
	}
	token := cfg.Service.Token
	if token == "" {
		token = getenv("GENFORM_TOKEN")
	}
	if base == "" {
		return Endpoint{ID: config.SimulatorService, Token: builtinToken}
	}
	base = strings.TrimRight(base, "/")
	return Endpoint{ID: base, BaseURL: base, Token: token, From: from}
}

// liveProvider is the live provider called name as the views name it: its
// title, and its base URL when the block sets one.
func (w *Workspace) liveProvider(name string) outcome.Provider {
	p := w.Config.ProviderOf(name)
	title := name
	if t := catalog.LookupLive(name); t != nil {
		title = t.Title
	}
	return outcome.Provider{Name: name, Title: title, BaseURL: p.Settings.BaseURL}
}

// serviceOf names the service the provider called name is: the reference
// service, or a live provider.
func (w *Workspace) serviceOf(name string) outcome.Services {
	if name == addrs.Reference {
		ref := w.Endpoint.Reference()
		return outcome.Services{Reference: &ref}
	}
	return outcome.Services{Providers: []outcome.Provider{w.liveProvider(name)}}
}

// Services names the services plan's changes are made with, for the plan
// header: the reference service when the plan uses it (or no provider),
// then each live provider its changes are made with.
func (w *Workspace) Services(plan *plans.Plan) outcome.Services {
	var s outcome.Services
	names := usedProviders(plan)
	reference := len(names) == 0
	for _, c := range plan.Changes {
		reference = reference || c.Model == nil
	}
	if reference {
		ref := w.Endpoint.Reference()
		s.Reference = &ref
	}
	for _, n := range names {
		s.Providers = append(s.Providers, w.liveProvider(n))
	}
	return s
}
