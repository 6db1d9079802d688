package command

import (
	"flag"
	"fmt"
	"time"

	"github.com/genform/genform/internal/backend"
	"github.com/genform/genform/internal/views"
	"github.com/genform/genform/internal/workdir"

	"github.com/genform/genform/internal/formats/jsonstate"
	"github.com/genform/genform/internal/history"

	"github.com/genform/genform/internal/secrets"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/statefile"
)

func init() {
	register(&command{
		name:     "history",
		synopsis: "List every generation the state recorded, restorable or not",
		usage: `Usage: genform history [flags] [ADDR]

  Lists every generation the state has recorded, newest first, grouped by
  the instance that held it last: when it was recorded, whether an
  instance holds it now, can be restored at no cost (plan shows restore
  when a declared request matches it), or failed, and its prompt. With
  ADDR (image.hero, or image.hero[0] for one instance) only the
  generations that address held.

  A restorable generation's files come from the local cache when it holds
  them ("cached"), and are downloaded again by creation id otherwise: no
  new generation either way.

Flags:
  -json                print the JSON document instead (docs/formats.md)
  -var 'NAME=VALUE'    set a variable (repeatable)
  -var-file=FILE       read variables from a *.genvars.hcl file (repeatable)
  -lock-timeout=DUR    wait this long for the state lock (default 0s)
`,
		run: runHistory,
	})
}

func runHistory(env *Env, args []string) int {
	fs := flag.NewFlagSet("history", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "")
	var vf varFlags
	vf.register(fs)
	lockTimeout := fs.Duration("lock-timeout", 0, "")
	if ok, code := parseFlags(env, commands["history"], fs, args); !ok {
		return code
	}
	if fs.NArg() > 1 {
		return env.Errorf("history takes at most one argument, a resource address; got %d", fs.NArg())
	}
	var addr addrs.Instance
	if fs.NArg() == 1 {
		var err error
		if addr, err = addrs.ParseInstance(fs.Arg(0)); err != nil {
			return env.Errorf("%v", err)
		}
	}
	cfg := loadConfig(env, vf.options(env))
	if cfg == nil {
		return ExitError
	}
	snap, hist, err := stateAndHistory(cfg, "history", *lockTimeout)
	if err != nil {
		return env.Errorf("%v", err)
	}
	entries := hist.Of(addr)
	if *asJSON {
		if err := jsonstate.WriteHistory(env.Stdout, hist, entries); err != nil {
			return env.Errorf("writing the history: %v", err)
		}
		return ExitOK
	}
	switch {
	case snap == nil:
		fmt.Fprintln(env.Stdout, "No state. Nothing has been applied in this directory yet.")
	case len(entries) == 0 && !addr.IsZero():
		fmt.Fprintf(env.Stdout, "The history holds no generation of %s.\n", addr)
	case len(entries) == 0:
		fmt.Fprintln(env.Stdout, "The history is empty: nothing has been generated yet.")
	default:
		views.History(env.Stdout, hist, entries)
	}
	return ExitOK
}

// stateAndHistory reads the state and its history under the shared lock
// of readState; a missing state file is an empty state with an empty
// history.
func stateAndHistory(cfg *config.Config, command string, lockTimeout time.Duration) (*statefile.Snapshot, *history.View, error) {
	c, h := workdir.CacheOf(cfg, "."), secrets.NewHider(cfg)
	st, err := backend.ReadState(cfg, command, lockTimeout)
	if err != nil || st == nil {
		return nil, history.New(nil, nil, c, h), err
	}
	defer st.Close()
	snap, err := st.Snapshot()
	if err != nil {
		return nil, history.New(nil, nil, c, h), err
	}
	entries, err := st.History(addrs.Instance{})
	if err != nil {
		return nil, history.New(nil, nil, c, h), err
	}
	return snap, history.New(entries, snap, c, h), nil
}
