package operation

import (
	"strings"

	"github.com/genform/genform/config"
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

// Describe is the plan header's service line.
func (ep Endpoint) Describe() string {
	if ep.Builtin() {
		return "built-in simulator (outputs are synthetic)"
	}
	return ep.BaseURL
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

// DescribeProvider names the provider called name as the commands show
// it: the reference service's line for "", otherwise the provider's title,
// with its base URL when the block sets one.
func (w *Workspace) DescribeProvider(name string) string {
	if name == "" {
		return w.Endpoint.Describe()
	}
	p := w.Config.ProviderOf(name)
	title := name
	if p.Catalog != nil {
		title = p.Catalog.Title
	}
	if p.Settings.BaseURL != "" {
		return title + " at " + p.Settings.BaseURL
	}
	return title
}

// DescribePlan is the plan header's service line: the reference service
// when the plan uses it (or no provider), then each live provider its
// changes are made with.
func (w *Workspace) DescribePlan(plan *plans.Plan) string {
	names := usedProviders(plan)
	var lines []string
	reference := len(names) == 0
	for _, c := range plan.Changes {
		reference = reference || c.Model == nil
	}
	if reference {
		lines = append(lines, w.Endpoint.Describe())
	}
	for _, n := range names {
		lines = append(lines, w.DescribeProvider(n))
	}
	return strings.Join(lines, "; ")
}
