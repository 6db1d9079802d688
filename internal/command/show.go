package command

import (
	"flag"
	"os"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/formats/planfile"
	"github.com/genform/genform/internal/operation"
	"github.com/genform/genform/internal/views"
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
	view := views.NewShow(&env.Streams, formatOf(*asJSON, views.Human))
	arg := fs.Arg(0)
	if arg != "" {
		if fi, err := os.Stat(arg); err == nil && fi.Mode().IsRegular() {
			return showPlanFile(env, view, arg, rf)
		}
	}
	var addr addrs.Instance
	if arg != "" {
		var err error
		if addr, err = addrs.ParseInstance(arg); err != nil {
			return env.Errorf("%v (and there is no plan file by that name)", err)
		}
	}
	return showState(env, view, "show", rf, addr, *asJSON)
}

// showPlanFile shows what apply of the saved plan at path would carry
// out, as plan showed it. Nothing of the file is shown as it is: the file
// could have been edited, so the plan shown is made again from the
// configuration and the state, after the check apply makes
// (Workspace.ShowSaved), and a file that check refuses is refused here in
// the same words.
func showPlanFile(env *Env, view views.Show, path string, rf readFlags) int {
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
	if err := view.Plan(plan, ws.Services(plan)); err != nil {
		return env.Errorf("%v", err)
	}
	return ExitOK
}

// showState shows the whole state, or the instance at addr, as last
// committed. show and state show share it; checkJSON is whether the
// records' JSON must be checked first, as the JSON document embeds it as
// it is stored.
func showState(env *Env, view views.Show, command string, rf readFlags, addr addrs.Instance, checkJSON bool) int {
	ws, _ := loadForReading(env, rf.vars.options(env))
	if ws == nil {
		return ExitError
	}
	snap, hist, err := ws.History(command, rf.lockTimeout)
	if err != nil {
		return env.Errorf("%v", err)
	}
	if checkJSON {
		if err := operation.DamagedJSON(snap, ws.StateWhere(), ws.StateInDatabase()); err != nil {
			return env.Errorf("%v", err)
		}
	}
	st := views.ShownState{Snapshot: snap, History: hist, Hider: ws.Hider(), Service: ws.Endpoint.ID, Store: ws.Config.Settings.Store != nil}
	if addr.IsZero() {
		err = view.State(st)
	} else if snap == nil || snap.Resources[addr] == nil {
		err = operation.UnknownAddr(addr, snap)
	} else {
		err = view.Resource(st, addr)
	}
	if err != nil {
		return env.Errorf("%v", err)
	}
	return ExitOK
}
