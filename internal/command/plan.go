package command

import (
	"flag"

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
	format := views.Human
	if pc.format == "markdown" {
		format = views.Markdown
	}
	view := views.NewPlan(&env.Streams, formatOf(pc.json, format))
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
	if err := view.Plan(plan, ws.Services(plan)); err != nil {
		return env.Errorf("%v", err)
	}
	if pc.out != "" {
		sp := planfile.New(plan, ws.Config, opts)
		sp.MigrateFrom = migrateFrom
		sp.NoRefresh = !pc.refresh
		if err := planfile.Write(pc.out, sp); err != nil {
			return env.Errorf("%v", err)
		}
		view.Saved(pc.out)
	}
	if pc.detailed && plan.HasChanges() {
		return ExitChanges
	}
	return ExitOK
}
