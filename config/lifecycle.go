package config

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/schema"
)

// TodayEnv is the environment variable that sets the day model
// lifecycles are checked against (YYYY-MM-DD), when Options.Today is not
// set: what a configuration meets on another day, and the tests' fixed
// day. Unset, it is today's date in UTC.
const TodayEnv = "GENFORM_TODAY"

// ShutdownWarningDays is how many days ahead of a model's shutdown plan
// warns of it.
const ShutdownWarningDays = 30

// modelUse is one model a resource's instances use, as Load expanded
// them: a resource with a model per instance has a use for each.
type modelUse struct {
	r    *Resource
	prov *schema.Provider
	ep   addrs.Endpoint
}

// decodeToday sets the day model lifecycles are checked against:
// opts.Today's, else TodayEnv's, else today's (UTC).
func (c *Config) decodeToday(opts Options) hcl.Diagnostics {
	switch {
	case !opts.Today.IsZero():
		c.today = schema.Day(opts.Today)
	case c.environ[TodayEnv] != "":
		t, err := time.Parse(time.DateOnly, strings.TrimSpace(c.environ[TodayEnv]))
		if err != nil {
			c.today = schema.Day(time.Now())
			return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid " + TodayEnv,
				Detail: fmt.Sprintf("%s sets the day model shutdowns are checked against, written 2006-01-02; got %q. Fix it, or unset it to check against today.", TodayEnv, c.environ[TodayEnv])}}
		}
		c.today = t
	default:
		c.today = schema.Day(time.Now())
	}
	return nil
}

// Today is the day model lifecycles are checked against (midnight UTC):
// Options.Today's, GENFORM_TODAY's, or the day Load ran.
func (c *Config) Today() time.Time { return c.today }

// ModelCaps is what the tables list of the model of ep, a live
// provider's: ok is false for the reference service and for a model the
// tables do not list.
func (c *Config) ModelCaps(ep addrs.Endpoint) (caps schema.Caps, ok bool) {
	if ep.Provider() == addrs.Reference {
		return schema.Caps{}, false
	}
	p := c.providers.Live(ep.Provider())
	if p == nil || !p.Listed(ep.Target()) {
		return schema.Caps{}, false
	}
	return p.Caps(ep.Target()), true
}

// noteModels keeps the models r's instances use, once each, for
// ModelDiagnostics and ModelWarnings.
func (c *Config) noteModels(r *Resource, insts []instData) {
	if r.live == nil {
		return
	}
	start := len(c.models)
	for i := range insts {
		sp := insts[i].ep
		if sp == nil || sp.prov == nil {
			continue
		}
		if slices.ContainsFunc(c.models[start:], func(u modelUse) bool { return u.ep == sp.ep }) {
			continue
		}
		c.models = append(c.models, modelUse{r: r, prov: sp.prov, ep: sp.ep})
	}
}

// modelRange is where r's model is written: its value, or the block's
// header when it has no model attribute.
func modelRange(r *Resource) *hcl.Range {
	if r.live != nil && r.live.model != (hcl.Range{}) {
		rng := r.live.model
		return &rng
	}
	rng := r.DeclRange
	return &rng
}

// ModelDiagnostics are what validate says of the models the blocks use:
// an error for a model its provider has shut down (naming the day and
// the successor the provider names), a warning for one whose shutdown is
// announced, and a warning for a model the tables do not list whose name
// is close to one they do (a likely typo; it is still taken).
func (c *Config) ModelDiagnostics() hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, u := range c.models {
		caps, listed := c.ModelCaps(u.ep)
		if !listed {
			if d := nearMiss(u); d != nil {
				diags = append(diags, d)
			}
			continue
		}
		switch caps.StageOn(c.today) {
		case schema.Retired:
			diags = append(diags, c.shutDown(u.r, u.prov, u.ep, caps, validateWhy))
		case schema.Retiring:
			diags = append(diags, c.shutdownAhead(u, caps))
		}
	}
	return diags
}

// ModelWarnings are what plan says of the models the blocks use before
// it plans: a warning for a model whose shutdown is at most
// ShutdownWarningDays away, and for a likely typo of a listed model's
// name. A model already shut down is plan's to judge, instance by
// instance (ShutDownModel): what it made is kept.
func (c *Config) ModelWarnings() hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, u := range c.models {
		caps, listed := c.ModelCaps(u.ep)
		if !listed {
			if d := nearMiss(u); d != nil {
				diags = append(diags, d)
			}
			continue
		}
		if days, ok := caps.DaysLeft(c.today); ok && caps.StageOn(c.today) == schema.Retiring && days <= ShutdownWarningDays {
			diags = append(diags, c.shutdownAhead(u, caps))
		}
	}
	return diags
}

// Why a model shut down is refused, or noted.
type shutDownWhy int

const (
	// validateWhy: validate, which reads no state, refuses it.
	validateWhy shutDownWhy = iota
	// generateWhy: plan would generate with it.
	generateWhy
	// keptWhy: plan keeps what was made with it, and generates nothing.
	keptWhy
)

// ShutDownModel is plan's diagnostic about an instance of r whose model
// (of ep) its provider has shut down, or nil when it has not:
// generating, an error (the plan would make a new generation with it,
// which the provider refuses); otherwise a warning that what was made
// with it is kept, and nothing is made with it again.
func (c *Config) ShutDownModel(r *Resource, ep addrs.Endpoint, generating bool) *hcl.Diagnostic {
	caps, listed := c.ModelCaps(ep)
	if !listed || caps.StageOn(c.today) != schema.Retired {
		return nil
	}
	why := keptWhy
	if generating {
		why = generateWhy
	}
	return c.shutDown(r, c.providers.Live(ep.Provider()), ep, caps, why)
}

// shutDown is the diagnostic of r's model, shut down, for why.
func (c *Config) shutDown(r *Resource, p *schema.Provider, ep addrs.Endpoint, caps schema.Caps, why shutDownWhy) *hcl.Diagnostic {
	model := ep.Target()
	var b strings.Builder
	fmt.Fprintf(&b, "%s shut down model %s on %s", p.Title, model, caps.ShutDown)
	if caps.Successor != "" {
		fmt.Fprintf(&b, "; it names %s in its place", caps.Successor)
	}
	b.WriteString(". ")
	use := fmt.Sprintf("Set model to %s", successorText(caps.Successor))
	switch why {
	case validateWhy:
		fmt.Fprintf(&b, "A generation of %s with it makes nothing. %s. Outputs already made with it stay as they are: plan and apply keep them and generate nothing while the block is unchanged.", r.Addr(), use)
	case generateWhy:
		fmt.Fprintf(&b, "The plan would generate %s with it, which %s refuses. %s, or undo the change. Outputs already made with it stay as they are.", r.Addr(), p.Title, use)
	case keptWhy:
		fmt.Fprintf(&b, "The outputs of %s made with it are kept, and nothing is generated with it again; a change to the block needs another model. %s when you next change it.", r.Addr(), use)
	}
	sev, summary := hcl.DiagError, "Model shut down"
	if why == keptWhy {
		sev, summary = hcl.DiagWarning, "Model shut down, outputs kept"
	}
	return &hcl.Diagnostic{Severity: sev, Summary: summary, Detail: b.String(), Subject: modelRange(r)}
}

// successorText is what to set model to: the successor the provider
// names, or, when it names none the tables know, a model genform
// providers lists.
func successorText(s string) string {
	if s == "" {
		return "a model the provider still serves (genform providers lists them)"
	}
	if strings.Contains(s, " or ") {
		return "one of " + s
	}
	return s
}

// shutdownAhead warns that u's model shuts down on a day to come.
func (c *Config) shutdownAhead(u modelUse, caps schema.Caps) *hcl.Diagnostic {
	days, _ := caps.DaysLeft(c.today)
	in := fmt.Sprintf("in %d days", days)
	if days == 1 {
		in = "tomorrow"
	}
	detail := fmt.Sprintf("%s shuts down model %s on %s (%s)", u.prov.Title, u.ep.Target(), caps.ShutDown, in)
	if caps.Deprecated != "" {
		detail = fmt.Sprintf("%s deprecated model %s on %s and shuts it down on %s (%s)", u.prov.Title, u.ep.Target(), caps.Deprecated, caps.ShutDown, in)
	}
	if caps.Successor != "" {
		detail += "; it names " + caps.Successor + " in its place"
	}
	detail += fmt.Sprintf(". From that day %s cannot be generated anew with it (outputs already made stay as they are); set model to %s before then.", u.r.Addr(), successorText(caps.Successor))
	summary := "Model shuts down soon"
	if days > ShutdownWarningDays {
		summary = "Model deprecated"
	}
	return &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: summary, Detail: detail, Subject: modelRange(u.r)}
}

// nearMiss warns of a model the tables do not list whose name is a
// likely typo of one they list for the same kind; nil when none is
// close. The model is still taken: providers add models faster than
// the tables.
func nearMiss(u modelUse) *hcl.Diagnostic {
	var ids []string
	for _, id := range u.prov.ModelIDs() {
		if u.prov.Models[id].Makes(u.ep.Kind()) {
			ids = append(ids, id)
		}
	}
	model := u.ep.Target()
	s := Suggest(model, ids)
	if s == "" || s == model {
		return nil
	}
	return &hcl.Diagnostic{
		Severity: hcl.DiagWarning,
		Summary:  "Model not listed",
		Detail: fmt.Sprintf("genform's tables do not list %s model %s, so %s is sent to %s as written and checked only as the provider's general capabilities allow. Did you mean %q? If %s is the model you mean, ignore this warning.",
			u.prov.Name, model, u.r.Addr(), u.prov.Title, s, model),
		Subject: modelRange(u.r),
	}
}
