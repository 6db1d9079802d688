package reconcile

import (
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/schema"
	"github.com/genform/genform/reconcile/plans"
)

// checkModels judges the planned changes whose model its provider has
// shut down, after -target kept what it keeps, so that an untargeted
// block does not stop the plan: a change that would generate with it is
// refused (the provider makes nothing with it); a change that keeps what
// was made with it (a no-op, an update, a move, a restore, a resume) is
// planned, with a warning that it is kept. Outputs are never generated
// anew because their model retired. Each resource is reported once; the
// warnings of a shutdown to come follow (config.ModelWarnings).
func (p *planner) checkModels() {
	cfg := p.in.Config
	shut := map[addrs.Endpoint]bool{}
	generating := map[addrs.Resource]bool{}
	var retired []*plans.Change
	for _, c := range p.plan.Changes {
		if c.Model == nil || c.Action == plans.Delete {
			continue
		}
		ep := c.Model.Endpoint
		isShut, seen := shut[ep]
		if !seen {
			caps, listed := cfg.ModelCaps(ep)
			isShut = listed && caps.StageOn(cfg.Today()) == schema.Retired
			shut[ep] = isShut
		}
		if !isShut {
			continue
		}
		if c.Action.Generates() {
			generating[c.Addr.Resource] = true
		}
		retired = append(retired, c)
	}
	reported := map[addrs.Resource]bool{}
	for _, c := range retired {
		r := cfg.Resource(c.Addr.Resource)
		if r == nil || reported[c.Addr.Resource] {
			continue
		}
		reported[c.Addr.Resource] = true
		if d := cfg.ShutDownModel(r, c.Model.Endpoint, generating[c.Addr.Resource]); d != nil {
			p.diags = append(p.diags, d)
		}
	}
	p.diags = append(p.diags, cfg.ModelWarnings()...)
}
