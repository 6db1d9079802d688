package command

import (
	"flag"
	"fmt"
	"os"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/formats/jsonplan"
	"github.com/genform/genform/internal/formats/jsonstate"
	"github.com/genform/genform/internal/formats/planfile"
	"github.com/genform/genform/internal/operation"
	"github.com/genform/genform/internal/views"
	"github.com/genform/genform/statefile"
)

func init() {
	register(&command{
		name:     "show",
		synopsis: "Show the state, one resource, or a saved plan",
		usage: `Usage: genform show [flags] [PLANFILE | ADDR]

  Without an argument, shows every resource the state manages: its status,
  creation id, prompt and files. With ADDR (image.hero, image.hero[0],
  'image.hero["red"]'), shows every attribute of that resource instance.
  With PLANFILE (from plan -out), shows what apply of that plan would do,
  as plan showed it: like apply, it plans again from the configuration and
  the state, and refuses a plan that no longer matches them or whose file
  was edited. Give again, with -var or GENFORM_VAR_<name>, the values of
  secret variables the plan left out, as apply needs them.

  -json prints the versioned JSON document scripts can rely on: the state
  document, or for a saved plan the same document as plan -json. The
  docs/formats.md describes both.

Flags:
  -json                print JSON instead of the human view
` + readFlagsUsage,
		run: runShow,
	})
}

func runShow(env *Env, args []string) int {
	fs := flag.NewFlagSet("show", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "")
	var rf readFlags
	rf.register(fs)
	if ok, code := parseArgs(env, "show", fs, args, "at most one argument, a saved plan file or a resource address", 1); !ok {
		return code
	}
	arg := fs.Arg(0)
	if arg != "" {
		if fi, err := os.Stat(arg); err == nil && fi.Mode().IsRegular() {
			return showPlanFile(env, arg, rf, *asJSON)
		}
	}
	var addr addrs.Instance
	if arg != "" {
		var err error
		if addr, err = addrs.ParseInstance(arg); err != nil {
			return env.Errorf("%v (and there is no plan file by that name)", err)
		}
	}
	return showState(env, "show", rf, addr, *asJSON)
}

// showPlanFile shows what apply of the saved plan at path would carry
// out, as plan showed it. Nothing of the file is shown as it is: the file
// could have been edited, so the plan shown is made again from the
// configuration and the state, after the check apply makes
// (Workspace.ShowSaved), and a file that check refuses is refused here in
// the same words.
func showPlanFile(env *Env, path string, rf readFlags, asJSON bool) int {
	saved, err := planfile.Read(path)
	if err != nil {
		return env.Errorf("%v", err)
	}
	opts := rf.vars.options(env)
	asMade := "a saved plan is shown as it was made, as apply applies it; -var and -var-file belong to 'genform plan -out'"
	if code := savedPlanOptions(env, saved, asMade, rf.vars, false, &opts); code != ExitOK {
		return code
	}
	ws := load(env, opts)
	if ws == nil {
		return ExitError
	}
	plan, diags, err := ws.ShowSaved(saved, rf.lockTimeout)
	if err != nil {
		return env.Errorf("%v", err)
	}
	if !diagnose(env, ws, diags) {
		return ExitError
	}
	if asJSON {
		if err := jsonplan.Write(env.Stdout, plan); err != nil {
			return env.Errorf("writing the plan: %v", err)
		}
		return ExitOK
	}
	views.Plan(env.Stdout, plan, ws.DescribePlan(plan))
	return ExitOK
}

// showState shows the whole state, or the instance at addr, as last
// committed. show and state show share it.
func showState(env *Env, command string, rf readFlags, addr addrs.Instance, asJSON bool) int {
	ws, _ := loadForReading(env, rf.vars.options(env))
	if ws == nil {
		return ExitError
	}
	snap, hist, err := ws.History(command, rf.lockTimeout)
	if err != nil {
		return env.Errorf("%v", err)
	}
	if asJSON {
		// The document embeds the records' JSON as it is stored.
		if err := operation.DamagedJSON(snap, ws.StateWhere(), ws.StateInDatabase()); err != nil {
			return env.Errorf("%v", err)
		}
	}
	if !addr.IsZero() {
		if snap == nil || snap.Resources[addr] == nil {
			return env.Errorf("%v", operation.UnknownAddr(addr, snap))
		}
		if asJSON {
			one := &statefile.Snapshot{
				Meta:        snap.Meta,
				Resources:   map[addrs.Instance]*statefile.Resource{addr: snap.Resources[addr]},
				Protections: snap.Protections,
			}
			if it := snap.Intents[addr]; it != nil {
				one.Intents = map[addrs.Instance]*statefile.Intent{addr: it}
			}
			if err := jsonstate.Write(env.Stdout, one, ws.Endpoint.ID, ws.Hider(), hist, hist.Of(addr)); err != nil {
				return env.Errorf("writing the state: %v", err)
			}
			return ExitOK
		}
		views.Resource(env.Stdout, snap, addr, ws.Hider(), ws.Config.Settings.Store != nil)
		if entries := hist.Of(addr); len(entries) > 0 {
			fmt.Fprintf(env.Stdout, "\n%s\n", views.Bold(fmt.Sprintf("# history of %s (newest first; 'genform history' lists every instance's):", addr)))
			differ := views.HistoryDiffers(entries)
			for _, e := range entries {
				fmt.Fprintf(env.Stdout, "#   %s\n", views.HistoryLine(hist, e, addr, differ))
			}
		}
		return ExitOK
	}
	if asJSON {
		if err := jsonstate.Write(env.Stdout, snap, ws.Endpoint.ID, ws.Hider(), hist, hist.Entries()); err != nil {
			return env.Errorf("writing the state: %v", err)
		}
		return ExitOK
	}
	switch {
	case snap == nil:
		fmt.Fprintln(env.Stdout, "No state. Nothing has been applied in this directory yet.")
	case len(snap.Resources) == 0 && len(snap.Intents) == 0:
		fmt.Fprintln(env.Stdout, "The state is empty: no resources are managed.")
	default:
		views.StateSummary(env.Stdout, snap, ws.Hider(), ws.Config.Settings.Store != nil)
	}
	return ExitOK
}
