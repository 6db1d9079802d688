package command

import (
	"flag"

	"github.com/genform/genform/internal/views"
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
  -input=false         ask nothing: without -auto-approve, refuse rather than
                       ask (the answer is otherwise one line of standard
                       input, a terminal or not: echo yes | ...)
  -target=ADDR         destroy only ADDR (repeatable)
` + readFlagsUsage,
		run: runDestroy,
	})
}

func runDestroy(env *Env, args []string) int {
	var pf planFlags
	fs := flag.NewFlagSet("destroy", flag.ContinueOnError)
	pf.register(fs, false)
	autoApprove := fs.Bool("auto-approve", false, "")
	input := fs.Bool("input", true, "")
	if ok, code := parseArgs(env, "destroy", fs, args, "no arguments (use -target=ADDR to limit it)", 0); !ok {
		return code
	}
	if len(pf.replace) > 0 {
		return env.Errorf("-replace has no meaning for destroy")
	}
	if !*input && !*autoApprove {
		return env.Errorf("destroy -input=false asks no questions, so it requires -auto-approve")
	}
	view := views.NewApply(&env.Streams, views.Human, true)
	ws := load(env, pf.vars.options(env))
	if ws == nil {
		return ExitError
	}
	run, diags, err := ws.BeginDestroy(pf.targets, pf.lockTimeout)
	if err != nil {
		return env.Errorf("%v", err)
	}
	if !diagnose(env, ws, diags) {
		return ExitError
	}
	if run == nil {
		view.NoState()
		return ExitOK
	}
	defer run.Close()
	view.Plan(run.Plan, ws.Services(run.Plan))
	if !run.Plan.HasChanges() {
		return ExitOK
	}
	if !*autoApprove {
		if code := confirm(env, "Destroy", "destroy", "; pass -auto-approve"); code != ExitOK {
			return code
		}
	}
	return execute(env, view, ws, run, 0)
}
