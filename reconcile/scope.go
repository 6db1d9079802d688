package reconcile

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// StateScope evaluates the configuration against what the state records,
// the way the commands that read the state without planning (output,
// import, state mv) see it: every resource is expanded in dependency order,
// and an instance is known, with its creation id, outputs and paths, when
// the state holds a record of it whose last generation succeeded; any other
// instance is unknown ("known after apply").
//
// It returns the scope, for Config.EvalOutputs, and every instance it
// expanded, in the order of cfg.Resources. A resource that cannot be
// expanded (its count depends on something unknown, say) contributes no
// instances and stays unknown in the scope; its diagnostics are returned.
// A nil snap is an empty state.
func StateScope(cfg *config.Config, snap *statefile.Snapshot) (config.Scope, []*config.Instance, hcl.Diagnostics) {
	var records map[addrs.Instance]*statefile.Resource
	if snap != nil {
		records = snap.Resources
	}
	scope := make(config.Scope, len(cfg.Resources))
	var all []*config.Instance
	var diags hcl.Diagnostics
	for _, r := range cfg.Resources {
		insts, d := cfg.Expand(r, scope)
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		values := make(map[addrs.Instance]cty.Value, len(insts))
		for _, inst := range insts {
			if rec := records[inst.Addr]; rec != nil && rec.Status == plans.StatusSucceed {
				values[inst.Addr] = plans.RecordValue(cfg.Dir, rec, rec.Dir)
			}
		}
		scope[r.Addr()] = config.ResourceValue(r, insts, values)
		all = append(all, insts...)
	}
	return scope, all, diags
}
