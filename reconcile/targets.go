package reconcile

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"

	"github.com/genform/genform/internal/addrs"
)

// This file holds -target: the addresses a plan is limited to, with what
// they depend on.

// matches reports whether the address list names addr: itself, or its
// resource by an address without a key.
func matches(list map[addrs.Instance]bool, addr addrs.Instance) bool {
	return list[addr] || list[addr.Resource.Instance(addrs.NoKey)]
}

// applyTargets keeps only the changes of targeted resources and of what
// they depend on.
func (p *planner) applyTargets() {
	deps := map[addrs.Resource][]addrs.Resource{}
	for _, r := range p.in.Config.Resources {
		deps[r.Addr()] = r.Refs
	}
	keepRes := map[addrs.Resource]bool{}
	keepInst := map[addrs.Instance]bool{}
	var visit func(addrs.Resource)
	visit = func(raddr addrs.Resource) {
		if keepRes[raddr] {
			return
		}
		keepRes[raddr] = true
		for _, d := range deps[raddr] {
			visit(d)
		}
	}
	for _, t := range p.in.Targets {
		matched := false
		for _, c := range p.plan.Changes {
			if t.Targets(c.Addr) {
				matched = true
				keepInst[c.Addr] = true
				for _, d := range deps[c.Addr.Resource] {
					visit(d)
				}
			}
		}
		if !matched {
			p.diags = append(p.diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid target address",
				Detail:   fmt.Sprintf("-target=%s matches no resource in the configuration or the state; use an address such as image.hero, video.intro[\"red\"] or module.brand.", t),
			})
		}
	}
	kept := p.plan.Changes[:0]
	for _, c := range p.plan.Changes {
		if keepInst[c.Addr] || keepRes[c.Addr.Resource] {
			kept = append(kept, c)
		}
	}
	p.plan.Changes = kept
}
