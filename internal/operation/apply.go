package operation

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/backend"
	"github.com/genform/genform/internal/catalog"
	"github.com/genform/genform/internal/formats/planfile"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/secrets"
	"github.com/genform/genform/internal/words"
	"github.com/genform/genform/reconcile"
	"github.com/genform/genform/reconcile/apply"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// ApplyRequest is what apply is asked.
type ApplyRequest struct {
	// PlanRequest is how to plan, without a saved plan.
	PlanRequest
	// Saved is the saved plan to apply exactly; nil to plan now.
	Saved *planfile.Saved
}

// Run is an apply or a destroy whose plan is made, holding the state's
// exclusive lock until Close: what the user is shown and asked to
// approve, then carried out by Execute.
type Run struct {
	w     *Workspace
	store *statefile.Store
	// history is what the plan's restores were found in: the state's own,
	// and the other workspaces', which Execute restores from too.
	history *histories
	// Plan is what Execute carries out.
	Plan *plans.Plan
}

// Close releases the state.
func (r *Run) Close() error {
	r.history.close()
	return r.store.Close()
}

// BeginApply opens the state under its exclusive lock (creating it), and
// makes the plan to apply: the saved one, once it is checked against the
// service, the state and the configuration, or a new one.
func (w *Workspace) BeginApply(req ApplyRequest) (*Run, hcl.Diagnostics, error) {
	store, err := w.OpenState("apply", req.LockTimeout, true)
	if err != nil {
		return nil, nil, err
	}
	run := &Run{w: w, store: store, history: w.histories(store, req.LockTimeout)}
	var plan *plans.Plan
	var diags hcl.Diagnostics
	if req.Saved != nil {
		// A saved plan is a file anyone could have edited: what is carried
		// out is planned again here (see planSaved).
		plan, diags, err = w.planSaved("apply", req.Saved, store, run.history, req.MigrateService)
	} else {
		plan, diags, err = w.planNow(store, run.history, req.PlanRequest)
	}
	if err != nil || diags.HasErrors() {
		run.Close()
		return nil, diags, err
	}
	run.Plan = plan
	return run, diags, nil
}

// planNow plans from the configuration and the state in store, after
// checking the service the state was made with.
func (w *Workspace) planNow(store *statefile.Store, history *histories, req PlanRequest) (*plans.Plan, hcl.Diagnostics, error) {
	meta, err := store.Meta()
	if err != nil {
		return nil, nil, err
	}
	if _, err := w.checkService("apply", meta.Service, req.MigrateService); err != nil {
		return nil, nil, err
	}
	snap, err := store.PlanSnapshot()
	if err != nil {
		return nil, nil, err
	}
	plan, diags := w.makePlan(snap, history, req)
	return plan, diags, nil
}

// BeginDestroy opens the state under its exclusive lock and plans to
// delete every instance it records, or those of targets. It returns a nil
// Run when there is no state.
func (w *Workspace) BeginDestroy(targets []addrs.Instance, lockTimeout time.Duration) (*Run, hcl.Diagnostics, error) {
	store, err := w.OpenState("destroy", lockTimeout, false)
	if err != nil || store == nil {
		return nil, nil, err
	}
	run := &Run{w: w, store: store}
	snap, err := store.Snapshot()
	if err != nil {
		run.Close()
		return nil, nil, err
	}
	// Never refuses (see checkService): destroy sends nothing to a service.
	w.checkService("destroy", recordedService(snap), false)
	plan, diags := reconcile.MakeDestroyPlan(reconcile.PlanInput{Config: w.Config, State: snap, Service: w.Endpoint.ID, Targets: targets})
	if diags.HasErrors() {
		run.Close()
		return nil, diags, nil
	}
	secrets.HidePlan(plan, w.Hider())
	run.Plan = plan
	return run, diags, nil
}

// Idle is the result of a run whose plan has no changes, which carries
// nothing out: only the generations that wait for a decision (possibly
// paid for, see plans.Plan.PossiblyPaid) are in it.
func (r *Run) Idle() *apply.Result {
	res := &apply.Result{}
	for _, c := range r.Plan.PossiblyPaid() {
		res.PossiblyPaid = append(res.PossiblyPaid, apply.PossiblyPaid{Addr: c.Addr, Provider: c.Provider(), SentAt: c.Reason.Since})
	}
	return res
}

// CheckLimits refuses a plan that would submit more than maxGenerations
// generations (-1: no limit), or cost more than maxCost ("": no limit),
// before anything is paid for.
func (r *Run) CheckLimits(maxGenerations int, maxCost string) error {
	plan := r.Plan
	if maxGenerations >= 0 && plan.Generations() > maxGenerations {
		return fmt.Errorf("this apply would submit %d generations, more than -max-generations=%d allows; nothing was submitted. Narrow it with -target or raise the limit", plan.Generations(), maxGenerations)
	}
	if err := checkMaxCost(plan, maxCost); err != nil {
		return err
	}
	return r.checkWorkspaceCeiling()
}

// checkWorkspaceCeiling refuses a plan that would take what the
// workspace spent past the configuration's workspace_max_cost, before
// anything is paid for: a preview's hundred pushes cannot spend a hundred
// budgets. default has no ceiling (its spend grows with the repository's
// life; -max-cost bounds each of its applies).
func (r *Run) checkWorkspaceCeiling() error {
	ceiling := r.w.Config.Settings.WorkspaceMaxCost
	plan := r.Plan
	if ceiling == nil || r.w.Name == backend.DefaultWorkspace || plan.Generations() == 0 {
		return nil
	}
	limit := "workspace_max_cost=" + ceiling.String()
	if cs := plan.Uncounted(); len(cs) > 0 {
		return uncountedError(cs[0], limit)
	}
	e, ok := plan.Cost()
	if !ok {
		return fmt.Errorf("%s needs prices to estimate what workspace %s spends, and the configuration sets none; set prices = { image = ..., video_second = ... } in the service block. Nothing was submitted", limit, r.w.Name)
	}
	if !e.Complete() {
		return fmt.Errorf("%s cannot be checked: %s Nothing was submitted", limit, strings.TrimPrefix(words.CostLine(plan), "Estimated cost: "))
	}
	spentAll, err := r.store.Spent()
	if err != nil {
		return err
	}
	spent := config.Money(spentAll[e.Currency])
	if total := spent.Plus(e.Amount); total > *ceiling {
		up := "an estimated"
		if e.AtMost {
			up = "up to"
		}
		return fmt.Errorf("workspace %s has spent %s %s, and this apply would cost %s %s %s more: %s %s, past workspace_max_cost = %s; nothing was submitted. Narrow it with -target, raise workspace_max_cost, or have a maintainer apply it", r.w.Name, spent, e.Currency, up, e.Amount, e.Currency, total, e.Currency, ceiling)
	}
	return nil
}

// checkMaxCost refuses a plan whose estimate is above -max-cost, or that
// cannot be estimated: a limit on money is never checked against a
// guess.
func checkMaxCost(p *plans.Plan, limit string) error {
	if limit == "" {
		return nil
	}
	max, err := config.ParseMoney(limit)
	if err != nil {
		return fmt.Errorf("-max-cost: %v", err)
	}
	if cs := p.Uncounted(); len(cs) > 0 {
		return uncountedError(cs[0], limit)
	}
	e, ok := p.Cost()
	if !ok {
		return fmt.Errorf("-max-cost=%s needs the service's prices to estimate the cost, and the configuration sets none; set prices = { image = ..., video_second = ... } in the service block. Nothing was submitted", limit)
	}
	if !e.Complete() {
		return fmt.Errorf("-max-cost=%s cannot be checked: %s Nothing was submitted", limit, strings.TrimPrefix(words.CostLine(p), "Estimated cost: "))
	}
	if e.Amount > max && e.AtMost {
		return fmt.Errorf("this apply could cost up to %s %s (a count or duration known only after apply is taken at the most the service allows), more than -max-cost=%s %s allows; nothing was submitted. Apply what it depends on first, narrow it with -target, or raise the limit", e.Amount, e.Currency, max, e.Currency)
	}
	if e.Amount > max {
		return fmt.Errorf("this apply would cost an estimated %s %s, more than -max-cost=%s %s allows; nothing was submitted. Narrow it with -target or raise the limit", e.Amount, e.Currency, max, e.Currency)
	}
	return nil
}

// uncountedError refuses -max-cost for c, whose input has a count field
// the plan cannot count: what it makes, and so what it costs, has no
// bound before it is sent.
func uncountedError(c *plans.Change, limit string) error {
	u := c.Uncounted
	if u.Key == "input" {
		return fmt.Errorf("input of %s is known only after apply, so whether a count field in it asks for more files, and so what this apply costs, is not known, and -max-cost=%s cannot bound it; nothing was submitted. Apply what input depends on first (-target), or apply without -max-cost", c.Addr, limit)
	}
	why, fix := "is known only after apply", fmt.Sprintf("Set %s to a number, apply what it depends on first (-target), or apply without -max-cost", u.Key)
	if !u.Unknown {
		why, fix = "is not a whole number of at least 1", fmt.Sprintf("Set %s to a whole number, or apply without -max-cost", u.Key)
	}
	return fmt.Errorf("%s of %s says how many %ss it makes, and %s, so -max-cost=%s cannot bound what this apply costs; nothing was submitted. %s", u.Key, c.Addr, c.Kind(), why, limit, fix)
}

// ExecuteOptions says how to carry out a run.
type ExecuteOptions struct {
	// Parallelism overrides the service block's and every provider
	// block's, when above 0.
	Parallelism int
	// Started is called once everything the run needs is ready, just
	// before the engine starts.
	Started func()
	// Events hears every event of the run, with what is made from a
	// secret hidden in its error.
	Events func(apply.Event)
}

// Execute carries out the plan: the engine submits, follows, downloads,
// restores, moves and deletes, recording each step in the state. ctx
// cancelled stops new submissions; what was submitted is recorded. The
// result's errors, and the error, hide what is made from a secret. An
// error means nothing was carried out.
func (r *Run) Execute(ctx context.Context, opts ExecuteOptions) (*apply.Result, error) {
	cfg, ep, plan := r.w.Config, r.w.Endpoint, r.Plan
	eng := &apply.Engine{
		Config:       cfg,
		Store:        r.store,
		ServiceID:    ep.ID,
		Parallelism:  cfg.Service.Parallelism,
		PollInterval: cfg.Service.PollInterval,
		Timeout:      cfg.Service.Timeout,
	}
	if opts.Parallelism > 0 {
		eng.Parallelism = opts.Parallelism
	}
	if r.history != nil {
		eng.Elsewhere = r.history
	}
	// The store is asked once, before anything is paid for, whether it
	// answers to the credentials: a wrong key is one error, not a paid
	// generation whose files no teammate can fetch.
	if usesStore(plan) {
		b, err := r.w.checkedBlobs(ctx)
		if err != nil {
			return nil, fmt.Errorf("%w; nothing was submitted", err)
		}
		eng.Blobs = b
	}
	for _, name := range usedProviders(plan) {
		lim := providerLimits(cfg, name, opts.Parallelism)
		if eng.Limits == nil {
			eng.Limits = map[string]apply.Limits{}
		}
		eng.Limits[name] = lim
	}
	// Every provider is connected when a change first needs it: the
	// engine checks the key of each one the plan submits to before
	// anything is submitted, and a restore from the cache needs none
	// until a cached copy turns out changed or gone (its files are then
	// downloaded again by creation id, in the same apply).
	var mu sync.Mutex
	var stops []func()
	defer func() {
		for _, stop := range stops {
			stop()
		}
	}()
	eng.Connect = func(name string) (provider.Provider, error) {
		p, stop, err := r.w.Provider(name, apply.ReportRetry)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		stops = append(stops, stop)
		mu.Unlock()
		return p, nil
	}
	if needsService(plan) && !ep.Builtin() {
		defer oneProc(r.w.Getenv)()
	}
	mask := secrets.NewMasker(r.w.Hider(), plan)
	eng.Events = func(ev apply.Event) {
		ev.Err = mask.Err(ev.Err)
		if opts.Events != nil {
			opts.Events(ev)
		}
	}
	if opts.Started != nil {
		opts.Started()
	}
	res, err := eng.Apply(ctx, plan)
	if err != nil {
		return nil, mask.Err(err)
	}
	for _, list := range [][]apply.Failure{res.Failed, res.Skipped} {
		for i := range list {
			list[i].Err = mask.Err(list[i].Err)
		}
	}
	for i := range res.PossiblyPaid {
		res.PossiblyPaid[i].Err = mask.Err(res.PossiblyPaid[i].Err)
	}
	for i := range res.Unstored {
		res.Unstored[i].Err = mask.Err(res.Unstored[i].Err)
	}
	res.Refused, res.StateErr = mask.Err(res.Refused), mask.Err(res.StateErr)
	return res, nil
}

// usedProviders lists the live providers the plan's changes are made
// with, by name.
func usedProviders(plan *plans.Plan) []string {
	var names []string
	for _, c := range plan.Changes {
		if n := c.Provider(); n != "" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

// needsService reports whether carrying out plan asks anything of a
// service.
func needsService(plan *plans.Plan) bool {
	needService := false
	for _, c := range plan.Changes {
		switch c.Action {
		case plans.Create, plans.Replace, plans.Resume:
			needService = true
		case plans.Update:
			// Files that only move, or only go up to the object store,
			// need no service.
			needService = needService || !c.MovesOnly() && !c.UploadsOnly()
		case plans.Restore:
			// Files the cache does not hold come from the service.
			needService = needService || c.Reason == nil || !c.Reason.Cached
		}
		// A job an interrupted apply left undeclared is followed to its
		// end and kept in the history.
		needService = needService || c.Reason.KeptJob() != ""
	}
	return needService
}

// oneProc runs Go on one processor until the function it returns is
// called, unless GOMAXPROCS says otherwise. Applying against a service is
// waiting: on its answers, within its rate limit, and on the disk; a job
// costs well under a millisecond of CPU. With more processors the
// scheduler keeps threads spinning on the idle ones, looking for work,
// each time a goroutine blocks: with one, an apply of 500 images spent
// 0.63 ms of CPU a job instead of 0.75, in the same wall time. The plan
// before it, which does compute, has run by then on every core. The
// built-in simulator is left its cores: it runs in this process.
func oneProc(getenv func(string) string) (restore func()) {
	if getenv("GOMAXPROCS") != "" {
		return func() {}
	}
	prev := runtime.GOMAXPROCS(1)
	return func() { runtime.GOMAXPROCS(prev) }
}

// providerLimits are the limits of provider name's jobs: its block's
// settings, or its documented ones. The parallelism set (by -parallelism
// or the block) is the ceiling of the apply's window and where it
// starts; unset, the window starts at the provider's documented default
// and may widen up to its documented top tier, narrowing whenever the
// provider throttles.
func providerLimits(cfg *config.Config, name string, flag int) apply.Limits {
	s := cfg.SettingsOf(name)
	lim := apply.Limits{Parallelism: s.Parallelism, PollInterval: s.PollInterval, Timeout: s.Timeout}
	p, table := cfg.ProviderOf(name), catalog.LookupLive(name)
	switch {
	case flag > 0:
		lim.Parallelism = flag
	case p.Settings.Parallelism == 0 && table != nil && table.Limits.MaxParallelism > s.Parallelism:
		lim.Start, lim.Parallelism = s.Parallelism, table.Limits.MaxParallelism
	}
	return lim
}

// Outputs evaluates the configuration's output blocks against the state
// as the run left it, for apply to print at its end (as Terraform does):
// nil values when the configuration declares none.
func (r *Run) Outputs() (map[string]cty.Value, hcl.Diagnostics, error) {
	cfg := r.w.Config
	if len(cfg.Outputs) == 0 {
		return nil, nil, nil
	}
	snap, err := r.store.Snapshot()
	if err != nil {
		return nil, nil, err
	}
	scope, _, _ := reconcile.StateScope(cfg, snap)
	values, diags := cfg.EvalOutputs(scope)
	return values, diags, nil
}
