package command

import (
	"flag"
	"fmt"
	"time"

	"github.com/genform/genform/internal/backend"
	"github.com/genform/genform/internal/views"

	"github.com/genform/genform/internal/formats/planfile"

	"github.com/genform/genform/internal/formats/jsonplan"

	"github.com/genform/genform/internal/secrets"

	"github.com/genform/genform/config"
	"github.com/genform/genform/reconcile"
	"github.com/genform/genform/statefile"
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
	if ok, code := parseFlags(env, commands["plan"], fs, args); !ok {
		return code
	}
	if msg := extraArgs("plan", "no arguments", fs, args, 0); msg != "" {
		return env.Errorf("%s", msg)
	}
	if pc.format != "" && pc.format != "markdown" {
		return env.Errorf("-format takes only markdown (or use -json for a JSON document)")
	}
	opts := pc.vars.options(env)
	cfg := loadConfig(env, opts)
	if cfg == nil {
		return ExitError
	}
	ep := resolveEndpoint(env, cfg)
	store, err := backend.OpenState(cfg, "plan", pc.lockTimeout, false)
	if err != nil {
		return env.Errorf("%v", err)
	}
	var snap *statefile.Snapshot
	var history reconcile.History
	if store != nil {
		snap, err = store.PlanSnapshot()
		store.Close()
		if err != nil {
			return env.Errorf("%v", err)
		}
		lh := &lazyHistory{cfg: cfg, lockTimeout: pc.lockTimeout}
		defer lh.close()
		history = lh
	}
	migrateFrom, code := checkService(env, "plan", recordedService(snap), ep, pc.migrateService)
	if code != ExitOK {
		return code
	}
	plan, diags := reconcile.MakePlan(reconcile.PlanInput{
		Config:  cfg,
		State:   snap,
		Service: ep.ID,
		Targets: pc.targets,
		Replace: pc.replace,
		Refresh: pc.refresh,
		History: history,
	})
	if len(diags) > 0 {
		views.Diagnostics(&env.Streams, cfg.Files, diags)
	}
	if diags.HasErrors() {
		return ExitError
	}
	secrets.HidePlan(plan, secrets.NewHider(cfg))
	switch {
	case pc.json:
		if err := jsonplan.Write(env.Stdout, plan); err != nil {
			return env.Errorf("%v", err)
		}
	case pc.format == "markdown":
		views.PlanMarkdown(env.Stdout, plan, ep.describe())
	default:
		views.Plan(env.Stdout, plan, ep.describe())
	}
	if pc.out != "" {
		sp := planfile.New(plan, cfg, opts)
		sp.MigrateFrom = migrateFrom
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

// lazyHistory reads the history for plan, opening the state again (under
// its shared lock) only when the planner first asks: a plan that would
// generate nothing never reads it. The state is closed while planning
// otherwise, so that its file's pages, mapped while it is open, do not
// add to the plan's memory.
type lazyHistory struct {
	cfg         *config.Config
	lockTimeout time.Duration
	st          *statefile.Store
	err         error
	opened      bool
}

func (h *lazyHistory) Generations(fp string) ([]*statefile.Resource, error) {
	if !h.opened {
		h.opened = true
		h.st, h.err = backend.ReadState(h.cfg, "plan", h.lockTimeout)
	}
	if h.err != nil || h.st == nil {
		return nil, h.err
	}
	return h.st.Generations(fp)
}

func (h *lazyHistory) close() {
	if h.st != nil {
		h.st.Close()
	}
}
