package command

import (
	"flag"
	"fmt"

	"github.com/genform/genform/internal/backend"
	"github.com/genform/genform/internal/views"

	"github.com/genform/genform/internal/secrets"

	"github.com/genform/genform/reconcile"
)

func init() {
	register(&command{
		name:     "destroy",
		synopsis: "Delete every managed output file and forget the resources",
		usage: `Usage: genform destroy [flags]

  Removes the files of every resource in the state (or of the targeted ones)
  and forgets them. The service has no delete: the creations stay there.

Flags:
  -auto-approve        do not ask for confirmation
  -target=ADDR         destroy only ADDR (repeatable)
  -var 'NAME=VALUE'    set a variable (repeatable)
  -var-file=FILE       read variables from a *.genvars.hcl file (repeatable)
  -lock-timeout=DUR    wait this long for the state lock (default 0s)
`,
		run: runDestroy,
	})
}

func runDestroy(env *Env, args []string) int {
	var pf planFlags
	fs := flag.NewFlagSet("destroy", flag.ContinueOnError)
	pf.register(fs, false)
	autoApprove := fs.Bool("auto-approve", false, "")
	if ok, code := parseFlags(env, commands["destroy"], fs, args); !ok {
		return code
	}
	if msg := extraArgs("destroy", "no arguments (use -target=ADDR to limit it)", fs, args, 0); msg != "" {
		return env.Errorf("%s", msg)
	}
	if len(pf.replace) > 0 {
		return env.Errorf("-replace has no meaning for destroy")
	}
	cfg := loadConfig(env, pf.vars.options(env))
	if cfg == nil {
		return ExitError
	}
	ep := resolveEndpoint(env, cfg)
	store, err := backend.OpenState(cfg, "destroy", pf.lockTimeout, false)
	if err != nil {
		return env.Errorf("%v", err)
	}
	if store == nil {
		fmt.Fprintln(env.Stdout, "No changes. There is no state, so nothing to destroy.")
		return ExitOK
	}
	defer store.Close()
	snap, err := store.Snapshot()
	if err != nil {
		return env.Errorf("%v", err)
	}
	// Never refuses (see checkService): destroy sends nothing to a service.
	checkService(env, "destroy", recordedService(snap), ep, false)
	plan, diags := reconcile.MakeDestroyPlan(reconcile.PlanInput{Config: cfg, State: snap, Service: ep.ID, Targets: pf.targets})
	if len(diags) > 0 {
		views.Diagnostics(&env.Streams, cfg.Files, diags)
	}
	if diags.HasErrors() {
		return ExitError
	}
	secrets.HidePlan(plan, secrets.NewHider(cfg))
	views.Plan(env.Stdout, plan, ep.describe())
	if !plan.HasChanges() {
		return ExitOK
	}
	if !*autoApprove {
		if code := confirm(env); code != ExitOK {
			return code
		}
	}
	return execute(env, "Destroy", cfg, ep, store, plan, 0, false)
}
