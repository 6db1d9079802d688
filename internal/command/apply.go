package command

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/formats/planfile"
	"github.com/genform/genform/internal/operation"
	"github.com/genform/genform/internal/views"
	"github.com/hashicorp/hcl/v2"
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
  -input=false         ask nothing: without -auto-approve or PLANFILE, refuse
                       rather than ask (the answer is otherwise one line of
                       standard input, a terminal or not: echo yes | ...)
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
	input          bool
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
	fs.BoolVar(&ac.input, "input", true, "")
	fs.IntVar(&ac.parallelism, "parallelism", 0, "")
	fs.IntVar(&ac.maxGenerations, "max-generations", -1, "")
	fs.StringVar(&ac.maxCost, "max-cost", "", "")
	fs.BoolVar(&ac.json, "json", false, "")
	if ok, code := parseArgs(env, "apply", fs, args, "at most one argument, the saved plan file", 1); !ok {
		return code
	}
	planFile := fs.Arg(0)
	if !ac.input && !ac.autoApprove && planFile == "" {
		// Refused before anything is read or locked, as Terraform does.
		return env.Errorf("apply -input=false asks no questions, so it requires -auto-approve, or a saved plan (genform plan -out=FILE, then genform apply FILE)")
	}
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
		asMade := "a saved plan is applied as it was made; -var, -var-file, -target and -replace belong to 'genform plan -out'"
		if code := savedPlanOptions(env, saved, asMade, ac.vars, len(ac.targets) > 0 || len(ac.replace) > 0, &opts); code != ExitOK {
			return code
		}
	}
	view := views.NewApply(&env.Streams, formatOf(ac.json, views.Human), false)
	ws := load(env, opts)
	if ws == nil {
		return ExitError
	}
	run, diags, err := ws.BeginApply(operation.ApplyRequest{PlanRequest: ac.request(), Saved: saved})
	if err != nil {
		return env.Errorf("%v", err)
	}
	if !diagnose(env, ws, diags) {
		return ExitError
	}
	defer run.Close()
	plan := run.Plan
	if saved == nil {
		view.Plan(plan, ws.Services(plan))
	}
	if !plan.HasChanges() {
		res := run.Idle()
		view.Idle(plan, res)
		showOutputs(env, view, ws, run)
		if len(res.PossiblyPaid) > 0 {
			return ExitError
		}
		return ExitOK
	}
	if err := run.CheckLimits(ac.maxGenerations, ac.maxCost); err != nil {
		return env.Errorf("%v", err)
	}
	if saved == nil && !ac.autoApprove {
		if code := confirm(env, "Apply", "apply", "; pass -auto-approve, or apply a saved plan (genform plan -out=FILE, then genform apply FILE)"); code != ExitOK {
			return code
		}
	}
	code := execute(env, view, ws, run, ac.parallelism)
	if code == ExitOK || code == ExitError {
		// What was applied, as Terraform ends: the outputs, also after
		// a partial apply (they show what the state holds now).
		showOutputs(env, view, ws, run)
	}
	return code
}

// showOutputs prints the configuration's outputs after an apply.
func showOutputs(env *Env, view views.Apply, ws *operation.Workspace, run *operation.Run) {
	values, diags, err := run.Outputs()
	if err != nil {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Outputs not shown",
			Detail: fmt.Sprintf("Reading the state for them: %v. genform output shows them.", err)})
	}
	if len(diags) > 0 {
		views.Diagnostics(&env.Streams, ws.Config.Files, diags)
	}
	if values != nil && !diags.HasErrors() {
		view.Outputs(ws.Config.Outputs, values)
	}
}

// savedPlanOptions sets opts to the variables a saved plan was made with,
// for apply and show. Only the values the plan left out, of secret
// variables, may be given again (-var, or GENFORM_VAR_<name>); anything
// else (another -var, a -var-file, or targeted, a -target or -replace) is
// refused with asMade, which says that it belongs to plan.
func savedPlanOptions(env *Env, saved *planfile.Saved, asMade string, vars varFlags, targeted bool, opts *config.Options) int {
	if len(saved.Secret) > 0 {
		asMade += fmt.Sprintf(" (give again only the values the plan left out: -var for %s)", strings.Join(saved.Secret, ", "))
	}
	if len(vars.files) > 0 || targeted {
		return env.Errorf("%s", asMade)
	}
	given := map[string]bool{}
	for _, v := range vars.vars {
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
	opts.Vars = append(append([]string(nil), saved.Vars...), vars.vars...)
	opts.VarFiles = saved.VarFiles
	return ExitOK
}

// confirm asks for "yes" before verb ("Apply", "Destroy") goes ahead.
// The answer is one line of standard input, a terminal or not, as
// Terraform reads it: echo yes | genform apply approves, and anything
// else, or no line at all, cancels. GENFORM_IN_AUTOMATION asks nothing
// and refuses, so that a CI job never waits on a question (-input=false
// is refused before confirm, when the flags are read); way says how to
// go ahead without a question, after the command's name cmd.
func confirm(env *Env, verb, cmd, way string) int {
	if env.Automation() {
		return env.Errorf("%s needs confirmation, but GENFORM_IN_AUTOMATION is set, so genform asks nothing%s", cmd, way)
	}
	fmt.Fprint(env.Stdout, "\nDo you want to perform these actions? Only 'yes' will be accepted: ")
	var line string
	var err error = io.EOF
	if env.Stdin != nil {
		line, err = bufio.NewReader(env.Stdin).ReadString('\n')
	}
	if f, ok := env.Stdin.(*os.File); !ok || !views.IsTerminal(f) {
		// A piped answer is not echoed: end the question's line.
		fmt.Fprintln(env.Stdout)
	}
	if strings.TrimSpace(line) != "yes" {
		fmt.Fprintf(env.Stdout, "\n%s cancelled.\n", verb)
		if line == "" && err != nil {
			fmt.Fprintf(env.Stderr, "No answer: standard input ended before a line was read%s.\n", way)
		}
		return ExitError
	}
	return ExitOK
}

// execute carries out run under interrupt handling and hands its
// progress and result to view.
func execute(env *Env, view views.Apply, ws *operation.Workspace, run *operation.Run, parallelism int) int {
	ctx, stop := interruptible(env)
	defer stop()
	res, err := run.Execute(ctx, operation.ExecuteOptions{
		Parallelism: parallelism,
		Started:     func() { view.Started(run.Plan) },
		Events:      view.Event,
	})
	if err != nil {
		view.ServiceFailed(err, ws.Endpoint.Token != "")
		return ExitError
	}
	view.Result(res)
	switch {
	case res.Interrupted:
		return ExitInterrupted
	case len(res.Failed) > 0 || len(res.Skipped) > 0 || res.StateErr != nil || res.Refused != nil || len(res.PossiblyPaid) > 0 || len(res.Unstored) > 0:
		return ExitError
	}
	return ExitOK
}

// interruptible is a context that the first Ctrl-C (or SIGTERM) cancels:
// no new generations are submitted, and what was is recorded. A second
// one exits at once; the state is consistent after every commit.
func interruptible(env *Env) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
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
	return ctx, func() { signal.Stop(sigs); cancel() }
}
