package command

import (
	"flag"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/views"
)

func init() {
	register(&command{
		name:     "history",
		synopsis: "List every generation the state recorded, restorable or not",
		usage: `Usage: genform history [flags] [ADDR]

  Lists every generation the state has recorded, newest first, grouped by
  the instance that held it last: when it was recorded, whether an
  instance holds it now, can be restored at no cost (plan shows restore
  when a declared request matches it), or failed, its prompt, and the
  attributes that tell it from the instance's other generations (a video
  made again from another source_image shows each one). With ADDR
  (image.hero, or image.hero[0] for one instance) only the generations
  that address held.

  A restorable generation's files come from the local cache when it holds
  them ("cached"), and are downloaded again by creation id otherwise: no
  new generation either way.

Flags:
  -json                print the JSON document instead (docs/formats.md)
` + readFlagsUsage,
		run: runHistory,
	})
}

func runHistory(env *Env, args []string) int {
	fs := flag.NewFlagSet("history", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "")
	var rf readFlags
	rf.register(fs)
	if ok, code := parseArgs(env, "history", fs, args, "at most one argument, a resource address", 1); !ok {
		return code
	}
	var addr addrs.Instance
	if fs.NArg() == 1 {
		var err error
		if addr, err = addrs.ParseInstance(fs.Arg(0)); err != nil {
			return env.Errorf("%v", err)
		}
	}
	view := views.NewHistory(&env.Streams, formatOf(*asJSON, views.Human))
	ws := load(env, rf.vars.options(env))
	if ws == nil {
		return ExitError
	}
	snap, hist, err := ws.History("history", rf.lockTimeout)
	if err != nil {
		return env.Errorf("%v", err)
	}
	st := views.ShownState{Snapshot: snap, History: hist}
	if err := view.History(st, addr); err != nil {
		return env.Errorf("%v", err)
	}
	return ExitOK
}
