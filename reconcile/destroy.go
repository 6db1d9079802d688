package reconcile

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/reconcile/plans"
)

// MakeDestroyPlan plans the deletion of every recorded instance (or of the
// targeted ones): their files are removed and the state forgets them.
// Instances protected by prevent_destroy, in the configuration or in the
// state, make the plan an error.
func MakeDestroyPlan(in PlanInput) (*plans.Plan, hcl.Diagnostics) {
	st := in.State
	plan := &plans.Plan{Service: in.Service, Targets: in.Targets}
	if in.Config != nil {
		plan.ConfigHash = in.Config.Hash
	}
	if st == nil {
		return plan, nil
	}
	plan.Lineage, plan.Serial = st.Meta.Lineage, st.Meta.Serial
	protected := map[addrs.Resource]bool{}
	if in.Config != nil {
		for _, r := range in.Config.Resources {
			if r.PreventDestroy {
				protected[r.Addr()] = true
			}
		}
	}
	matched := map[addrs.Instance]bool{}
	want := func(addr addrs.Instance) bool {
		found := len(in.Targets) == 0
		for _, t := range in.Targets {
			if t.Targets(addr) {
				matched[t], found = true, true
			}
		}
		return found
	}
	var diags hcl.Diagnostics
	for _, addr := range addrs.SortedKeys(st.Resources) {
		if !want(addr) {
			continue
		}
		rec := st.Resources[addr]
		if st.Protections[addr] || protected[addr.Resource] {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Instance cannot be destroyed",
				Detail:   fmt.Sprintf("%s has lifecycle.prevent_destroy set. Set prevent_destroy = false and apply, or leave it out with -target.", addr),
			})
			continue
		}
		why := &plans.Reason{Code: plans.ReasonDestroy}
		if it := st.Intents[addr]; it != nil {
			why.GenerationID = it.GenerationID
		}
		plan.Changes = append(plan.Changes, &plans.Change{
			Addr: addr, Action: plans.Delete, Model: plans.ModelOf(rec.Endpoint, nil), Reason: why,
			Before: beforeAttrs(rec), Dir: rec.Dir,
		})
	}
	for _, addr := range addrs.SortedKeys(st.Intents) {
		if !want(addr) || st.Resources[addr] != nil {
			continue
		}
		plan.Changes = append(plan.Changes, &plans.Change{
			Addr: addr, Action: plans.Delete, Model: plans.ModelOf(st.Intents[addr].Endpoint, nil),
			Reason: &plans.Reason{Code: plans.ReasonDestroyIntent, GenerationID: st.Intents[addr].GenerationID, Since: st.Intents[addr].CreatedAt},
		})
	}
	for _, t := range in.Targets {
		if !matched[t] {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid target address",
				Detail:   fmt.Sprintf("-target=%s matches nothing in the state; 'genform state list' shows the managed addresses.", t),
			})
		}
	}
	return plan, diags
}
