package command

import (
	"flag"
	"fmt"

	"github.com/genform/genform/internal/formats/jsonplan"
	"github.com/genform/genform/internal/formats/planfile"
	"github.com/genform/genform/internal/views"
)

func init() {
	register(&command{
		name:     "plan",
		synopsis: "Show what apply would generate, download, move or delete",
		usage: `Usage: genform plan [flags]

  Compares the configuration with the state and the files on disk and shows
  what apply would do. It sends nothing to the service and needs no token.

Flags:
  -out=FILE            save the plan, to apply exactly it later
  -detailed-exitcode   exit 0 with no changes, 1 on error, 2 with changes
  -json                print the plan as a JSON document
  -format=markdown     print the plan as a pull-request comment
` + planFlagsUsage,
		run: runPlan,
	})
}

type planCmd struct {
	planFlags
	out      string
	detailed bool
	json     bool
	format   string
}

func runPlan(env *Env, args []string) int {
	var pc planCmd
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	pc.register(fs, true)
	fs.StringVar(&pc.out, "out", "", "")
	fs.BoolVar(&pc.detailed, "detailed-exitcode", false, "")
	fs.BoolVar(&pc.json, "json", false, "")
	fs.StringVar(&pc.format, "format", "", "")
	if ok, code := parseArgs(env, "plan", fs, args, "no arguments", 0); !ok {
		return code
	}
	if pc.format != "" && pc.format != "markdown" {
		return env.Errorf("-format takes only markdown (or use -json for a JSON document)")
	}
	opts := pc.vars.options(env)
	ws := load(env, opts)
	if ws == nil {
		return ExitError
	}
	plan, migrateFrom, diags, err := ws.Plan(pc.request())
	if err != nil {
		return env.Errorf("%v", err)
	}
	if !diagnose(env, ws, diags) {
		return ExitError
	}
	switch {
	case pc.json:
		if err := jsonplan.Write(env.Stdout, plan); err != nil {
			return env.Errorf("%v", err)
		}
	case pc.format == "markdown":
		views.PlanMarkdown(env.Stdout, plan, ws.DescribePlan(plan))
	default:
		views.Plan(env.Stdout, plan, ws.DescribePlan(plan))
	}
	if pc.out != "" {
		sp := planfile.New(plan, ws.Config, opts)
		sp.MigrateFrom = migrateFrom
		sp.NoRefresh = !pc.refresh
		if err := planfile.Write(pc.out, sp); err != nil {
			return env.Errorf("%v", err)
		}
		if !pc.json && pc.format == "" {
			fmt.Fprintf(env.Stdout, "\nSaved the plan to: %s\nTo make exactly these changes, run: genform apply %s\n", pc.out, pc.out)
		}
	}
	if pc.detailed && plan.HasChanges() {
		return ExitChanges
	}
	return ExitOK
}
