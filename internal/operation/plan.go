package operation

import (
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/secrets"
	"github.com/genform/genform/reconcile"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// PlanRequest is what plan, and apply without a saved plan, are asked.
type PlanRequest struct {
	// Targets limits the plan to these instances and what they depend on.
	Targets []addrs.Instance
	// Replace generates these instances anew.
	Replace []addrs.Instance
	// Refresh checks the output files on disk.
	Refresh bool
	// MigrateService accepts a state made with another service than the
	// configured one (-migrate-service).
	MigrateService bool
	// LockTimeout is how long to wait for the state's lock.
	LockTimeout time.Duration
}

// Plan compares the configuration with the state and the files on disk,
// without writing anything: genform plan. migrateFrom is the service the
// state moves away from under MigrateService ("" without a switch). What
// the configuration makes from a secret is marked sensitive in the plan.
func (w *Workspace) Plan(req PlanRequest) (plan *plans.Plan, migrateFrom string, diags hcl.Diagnostics, err error) {
	store, err := w.LockState("plan", req.LockTimeout)
	if err != nil {
		return nil, "", nil, err
	}
	var snap *statefile.Snapshot
	if store != nil {
		snap, err = store.PlanSnapshot()
		store.Close()
		if err != nil {
			return nil, "", nil, err
		}
	}
	// The history is read from the state as last committed, opened again
	// only when the planner first asks: the state is closed while planning
	// otherwise, so that its file's pages, mapped while it is open, do not
	// add to the plan's memory.
	history := w.histories(nil, req.LockTimeout)
	defer history.close()
	if migrateFrom, err = w.checkService("plan", recordedService(snap), req.MigrateService); err != nil {
		return nil, "", nil, err
	}
	plan, diags = w.makePlan(snap, history, req)
	return plan, migrateFrom, diags, nil
}

// makePlan runs the planner on snap and hides what is made from a secret.
func (w *Workspace) makePlan(snap *statefile.Snapshot, history *histories, req PlanRequest) (*plans.Plan, hcl.Diagnostics) {
	plan, diags := reconcile.MakePlan(reconcile.PlanInput{
		Config:  w.Config,
		State:   snap,
		Service: w.Endpoint.ID,
		Targets: req.Targets,
		Replace: req.Replace,
		Refresh: req.Refresh,
		History: history,
	})
	diags = append(diags, history.warnings...)
	if len(req.Targets) > 0 {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Resource targeting is in effect",
			Detail: "This plan covers only the -target instances and what they depend on, so it may not be all the configuration asks for: what else changed stays unplanned until a plan without -target. -target is for the exception (a retry of one image, a budget split in parts), not for routine use."})
	}
	if !diags.HasErrors() {
		secrets.HidePlan(plan, w.Hider())
	}
	return plan, diags
}
