package command

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/genform/genform/internal/backend"
	"github.com/genform/genform/internal/views"
	"github.com/genform/genform/reconcile/apply"
	"github.com/genform/genform/reconcile/plans"

	"github.com/genform/genform/internal/formats/jsonapply"
	"github.com/genform/genform/internal/formats/planfile"

	"github.com/genform/genform/internal/secrets"

	"github.com/genform/genform/config"
	"github.com/genform/genform/reconcile"
	"github.com/genform/genform/statefile"
)

func init() {
	register(&command{
		name:     "apply",
		synopsis: "Generate, download, move and delete to match the configuration",
		usage: `Usage: genform apply [flags] [PLANFILE]

  Makes the changes a plan shows: submits new generations, waits for them,
  downloads every output and records it in the state. Without PLANFILE it
  plans first and asks for confirmation; with PLANFILE (from plan -out) it
  applies exactly that plan, refusing one made for another state or
  configuration.

Flags:
  -auto-approve        do not ask for confirmation
  -parallelism=N       generations in flight at once (default: service.parallelism)
  -max-generations=N   refuse to submit more than N generations
  -max-cost=AMOUNT     refuse a plan whose estimated cost (from
                       service.prices) is above AMOUNT, e.g. -max-cost=5.00
  -json                print progress and the result as JSON lines
` + planFlagsUsage,
		run: runApply,
	})
}

type applyCmd struct {
	planFlags
	autoApprove    bool
	parallelism    int
	maxGenerations int
	maxCost        string
	json           bool
}

func runApply(env *Env, args []string) int {
	var ac applyCmd
	fs := flag.NewFlagSet("apply", flag.ContinueOnError)
	ac.register(fs, true)
	fs.BoolVar(&ac.autoApprove, "auto-approve", false, "")
	fs.IntVar(&ac.parallelism, "parallelism", 0, "")
	fs.IntVar(&ac.maxGenerations, "max-generations", -1, "")
	fs.StringVar(&ac.maxCost, "max-cost", "", "")
	fs.BoolVar(&ac.json, "json", false, "")
	if ok, code := parseFlags(env, commands["apply"], fs, args); !ok {
		return code
	}
	if msg := extraArgs("apply", "at most one argument, the saved plan file", fs, args, 1); msg != "" {
		return env.Errorf("%s", msg)
	}
	planFile := fs.Arg(0)
	if ac.maxCost != "" {
		if _, err := config.ParseMoney(ac.maxCost); err != nil {
			return env.Errorf("-max-cost must be an amount in the currency of service.prices: a decimal number, not negative, with at most six decimal places, such as -max-cost=5.00")
		}
	}

	var saved *planfile.Saved
	opts := ac.vars.options(env)
	if planFile != "" {
		var err error
		if saved, err = planfile.Read(planFile); err != nil {
			return env.Errorf("%v", err)
		}
		if code := savedPlanOptions(env, saved, &ac, &opts); code != ExitOK {
			return code
		}
	}
	cfg := loadConfig(env, opts)
	if cfg == nil {
		return ExitError
	}
	ep := resolveEndpoint(env, cfg)
	store, err := backend.OpenState(cfg, "apply", ac.lockTimeout, true)
	if err != nil {
		return env.Errorf("%v", err)
	}
	defer store.Close()
	meta, err := store.Meta()
	if err != nil {
		return env.Errorf("%v", err)
	}
	if _, code := checkService(env, "apply", meta.Service, ep, ac.migrateService || saved.MigratesFrom(meta.Service)); code != ExitOK {
		return code
	}

	var plan *plans.Plan
	if saved != nil {
		if code := checkSavedPlan(env, saved.Plan, cfg, ep, store); code != ExitOK {
			return code
		}
		plan = saved.Plan
	} else {
		snap, err := store.PlanSnapshot()
		if err != nil {
			return env.Errorf("%v", err)
		}
		p, pd := reconcile.MakePlan(reconcile.PlanInput{
			Config: cfg, State: snap, Service: ep.ID, History: store,
			Targets: ac.targets, Replace: ac.replace, Refresh: ac.refresh,
		})
		if len(pd) > 0 {
			views.Diagnostics(&env.Streams, cfg.Files, pd)
		}
		if pd.HasErrors() {
			return ExitError
		}
		secrets.HidePlan(p, secrets.NewHider(cfg))
		plan = p
		if !ac.json {
			views.Plan(env.Stdout, plan, ep.describe())
		}
	}
	if !plan.HasChanges() {
		if ac.json {
			jsonapply.WriteResult(env.Stdout, &apply.Result{}, nil)
		} else if saved != nil {
			fmt.Fprintln(env.Stdout, "No changes. Your media matches the configuration.")
		}
		return ExitOK
	}
	if ac.maxGenerations >= 0 && plan.Generations() > ac.maxGenerations {
		return env.Errorf("this apply would submit %d generations, more than -max-generations=%d allows; nothing was submitted. Narrow it with -target or raise the limit", plan.Generations(), ac.maxGenerations)
	}
	if err := checkMaxCost(plan, ac.maxCost); err != nil {
		return env.Errorf("%v", err)
	}
	if saved == nil && !ac.autoApprove {
		if code := confirm(env); code != ExitOK {
			return code
		}
	}
	return execute(env, "Apply", cfg, ep, store, plan, ac.parallelism, ac.json)
}

// savedPlanOptions sets opts to the variables a saved plan was made with.
// Only the values the plan left out, of secret variables, may be given
// again (-var, or GENFORM_VAR_<name>); everything else belongs to plan.
func savedPlanOptions(env *Env, saved *planfile.Saved, ac *applyCmd, opts *config.Options) int {
	asMade := "a saved plan is applied as it was made; -var, -var-file, -target and -replace belong to 'genform plan -out'"
	if len(saved.Secret) > 0 {
		asMade += fmt.Sprintf(" (give again only the values the plan left out: -var for %s)", strings.Join(saved.Secret, ", "))
	}
	if len(ac.vars.files) > 0 || len(ac.targets) > 0 || len(ac.replace) > 0 {
		return env.Errorf("%s", asMade)
	}
	given := map[string]bool{}
	for _, v := range ac.vars.vars {
		name, _, _ := strings.Cut(v, "=")
		name = strings.TrimSpace(name)
		if !slices.Contains(saved.Secret, name) {
			return env.Errorf("%s", asMade)
		}
		given[name] = true
	}
	for _, name := range saved.Secret {
		if !given[name] && env.Getenv("GENFORM_VAR_"+name) == "" {
			return env.Errorf("the saved plan does not hold the value of %s, which is secret (sensitive, or part of the service token): give it again with -var '%s=...' or GENFORM_VAR_%s", name, name, name)
		}
	}
	opts.Vars = append(append([]string(nil), saved.Vars...), ac.vars.vars...)
	opts.VarFiles = saved.VarFiles
	return ExitOK
}

// checkSavedPlan refuses a plan made for another service, state or
// configuration.
func checkSavedPlan(env *Env, plan *plans.Plan, cfg *config.Config, ep endpoint, store *statefile.Store) int {
	meta, err := store.Meta()
	if err != nil {
		return env.Errorf("%v", err)
	}
	switch {
	case plan.Service != ep.ID:
		return env.Errorf("the saved plan was made for service %s, but this configuration uses %s; run plan again", plan.Service, ep.ID)
	case plan.ConfigHash != cfg.Hash:
		return env.Errorf("the saved plan is stale: the configuration or its variables changed since it was made; run 'genform plan -out=FILE' again")
	case plan.Lineage != "" && plan.Lineage != meta.Lineage:
		return env.Errorf("the saved plan is stale: it was made for another state file (lineage %s, this one is %s); run plan again", plan.Lineage, meta.Lineage)
	case plan.Serial != meta.Serial && !(plan.Lineage == "" && meta.Serial <= 1):
		return env.Errorf("the saved plan is stale: the state changed since it was made (serial %d, now %d); run 'genform plan -out=FILE' again", plan.Serial, meta.Serial)
	}
	return ExitOK
}

// confirm asks for "yes" on a terminal and refuses without one, rather
// than hanging a CI job.
func confirm(env *Env) int {
	f, ok := env.Stdin.(*os.File)
	if !ok || !views.IsTerminal(f) || env.Automation() {
		return env.Errorf("apply needs confirmation, but there is no terminal to ask on; pass -auto-approve, or apply a saved plan (genform plan -out=FILE, then genform apply FILE)")
	}
	fmt.Fprint(env.Stdout, "\nDo you want to perform these actions? Only 'yes' will be accepted: ")
	line, _ := bufio.NewReader(env.Stdin).ReadString('\n')
	if strings.TrimSpace(line) != "yes" {
		fmt.Fprintln(env.Stdout, "\nApply cancelled.")
		return ExitError
	}
	return ExitOK
}

// execute runs the engine under interrupt handling and reports the result.
// verb is "Apply" or "Destroy", for the closing line.
func execute(env *Env, verb string, cfg *config.Config, ep endpoint, store *statefile.Store, plan *plans.Plan, parallelism int, asJSON bool) int {
	needService := false
	for _, c := range plan.Changes {
		switch c.Action {
		case plans.Create, plans.Replace, plans.Resume:
			needService = true
		case plans.Update:
			// Files that only move need no service.
			needService = needService || !c.MovesOnly()
		case plans.Restore:
			// Files the cache does not hold come from the service.
			needService = needService || c.Reason == nil || !c.Reason.Cached
		}
		// A job an interrupted apply left undeclared is followed to its
		// end and kept in the history.
		needService = needService || c.Reason.KeptJob() != ""
	}
	eng := &apply.Engine{
		Config:       cfg,
		Store:        store,
		ServiceID:    ep.ID,
		Parallelism:  cfg.Service.Parallelism,
		PollInterval: cfg.Service.PollInterval,
		Timeout:      cfg.Service.Timeout,
	}
	if parallelism > 0 {
		eng.Parallelism = parallelism
	}
	if needService {
		client, stop, err := connect(env, cfg, ep, apply.ReportRetry)
		if err != nil {
			return env.Errorf("%v", err)
		}
		defer stop()
		eng.Service = client
		if !ep.builtin() {
			defer oneProc(env.Getenv)()
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		n := 0
		for range sigs {
			n++
			if n == 1 {
				fmt.Fprintln(env.Stderr, "\nInterrupt received: no new generations are submitted; jobs already submitted are recorded. Press Ctrl-C again to exit at once.")
				cancel()
				continue
			}
			fmt.Fprintln(env.Stderr, "Second interrupt: exiting now; the state is consistent, rerun apply to resume.")
			os.Exit(ExitInterrupted)
		}
	}()

	total := 0
	for _, c := range plan.Changes {
		if c.Action != plans.NoOp {
			total++
		}
	}
	var view views.Progress
	if asJSON {
		view = jsonapply.NewProgress(env.Stdout)
	} else {
		view = views.NewProgress(&env.Streams, total)
	}
	var warnMu sync.Mutex
	var warnings []string
	mask := secrets.NewMasker(secrets.NewHider(cfg), plan)
	eng.Events = func(ev apply.Event) {
		ev.Err = mask.Err(ev.Err)
		if ev.Phase == apply.PhaseWarning {
			// Worth telling in every run (an undocumented job status, a
			// stale file that could not be removed), not only a debug one.
			msg := fmt.Sprint(ev.Err)
			if !ev.Addr.IsZero() {
				msg = fmt.Sprintf("%s: %v", ev.Addr, ev.Err)
			}
			warnMu.Lock()
			warnings = append(warnings, msg)
			warnMu.Unlock()
			if !asJSON {
				fmt.Fprintf(env.Stderr, "Warning: %s\n", msg)
			}
		}
		view.Event(ev)
	}
	if !asJSON {
		fmt.Fprintln(env.Stdout)
	}
	res, err := eng.Apply(ctx, plan)
	view.Close()
	if err != nil {
		return serviceFailed(env, ep, mask.Err(err), "nothing was submitted")
	}
	for _, list := range [][]apply.Failure{res.Failed, res.Skipped} {
		for i := range list {
			list[i].Err = mask.Err(list[i].Err)
		}
	}
	res.Refused, res.StateErr = mask.Err(res.Refused), mask.Err(res.StateErr)
	if asJSON {
		jsonapply.WriteResult(env.Stdout, res, warnings)
	} else {
		views.Result(&env.Streams, verb, res)
	}
	switch {
	case res.Interrupted:
		return ExitInterrupted
	case len(res.Failed) > 0 || len(res.Skipped) > 0 || res.StateErr != nil || res.Refused != nil:
		return ExitError
	}
	return ExitOK
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
