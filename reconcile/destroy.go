package reconcile

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
)

// MakeDestroyPlan plans the deletion of every recorded instance (or of the
// targeted ones): their files are removed and the state forgets them.
// Instances protected by prevent_destroy, in the configuration or in the
// state, make the plan an error.
func MakeDestroyPlan(in PlanInput) (*Plan, hcl.Diagnostics) {
	st := in.State
	plan := &Plan{FormatVersion: FormatVersion, Service: in.Service, Targets: in.Targets}
	if in.Config != nil {
		plan.ConfigHash = in.Config.Hash
	}
	if st == nil {
		return plan, nil
	}
	plan.Lineage, plan.Serial = st.Meta.Lineage, st.Meta.Serial
	protected := map[string]bool{}
	if in.Config != nil {
		for _, r := range in.Config.Resources {
			if r.PreventDestroy {
				protected[r.Addr()] = true
			}
		}
	}
	want := func(addr string) bool {
		if len(in.Targets) == 0 {
			return true
		}
		for _, t := range in.Targets {
			if t == addr || t == ResourceAddr(addr) {
				return true
			}
		}
		return false
	}
	var diags hcl.Diagnostics
	matched := map[string]bool{}
	for _, addr := range sortedKeys(st.Resources) {
		if !want(addr) {
			continue
		}
		matched[addr], matched[ResourceAddr(addr)] = true, true
		rec := st.Resources[addr]
		if st.Protections[addr] || protected[ResourceAddr(addr)] {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Instance cannot be destroyed",
				Detail:   fmt.Sprintf("%s has lifecycle.prevent_destroy set. Set prevent_destroy = false and apply, or leave it out with -target.", addr),
			})
			continue
		}
		plan.Changes = append(plan.Changes, &Change{
			Addr: addr, Resource: ResourceAddr(addr), Kind: rec.Kind, Action: Delete,
			Reason: "destroy: its files are removed (the creation stays on the service)",
			Before: beforeAttrs(rec), Dir: rec.Dir,
		})
	}
	for _, addr := range sortedKeys(st.Intents) {
		if !want(addr) || st.Resources[addr] != nil {
			continue
		}
		matched[addr], matched[ResourceAddr(addr)] = true, true
		it := st.Intents[addr]
		c := &Change{Addr: addr, Resource: ResourceAddr(addr), Kind: it.Kind, Action: Delete,
			Reason: "destroy: an interrupted submission is forgotten"}
		if it.GenerationID != "" {
			c.Warnings = append(c.Warnings, fmt.Sprintf("job %s may still be running on the service and may have been paid for; its outputs will not be downloaded", it.GenerationID))
		}
		plan.Changes = append(plan.Changes, c)
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
