package command

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/operation"
	"github.com/genform/genform/internal/views"
)

func init() {
	register(&command{
		name:     "state",
		synopsis: "Inspect and edit the state: list, show, rm, mv, push, pull",
		usage: `Usage: genform state <subcommand> [flags] [args]

  Inspects and edits the state by hand. Every subcommand holds the state
  lock while it runs, and refuses an address the state does not hold.

Subcommands:
  list [ADDR...]       list the managed resource instances (those of ADDR)
  show ADDR            show every attribute of one instance
  rm ADDR...           forget instances; their files stay on disk
  mv SRC DST           record SRC under DST, moving its files to DST's dir
  pull                 print the whole state as its JSON document
  push [-force] FILE   replace the configured state with the document FILE
                       (- for standard input), as state pull prints it;
                       -force even when it is of another lineage, or older
                       than the state (a lower serial)

Flags (every subcommand):
` + readFlagsUsage + `
Addresses are image.NAME or video.NAME, with [N] or ["KEY"] for one
instance of a counted or for_each resource; quote those for the shell:
  genform state rm 'image.variant["red"]'
`,
		run: runState,
	})
}

// stateSubcommands are the state subcommands, with their usage lines.
var stateSubcommands = map[string]struct {
	usage string
	run   func(env *Env, sc *stateCmd) int
}{
	"list": {"genform state list [flags] [ADDR...]", runStateList},
	"show": {"genform state show [flags] ADDR", runStateShow},
	"rm":   {"genform state rm [flags] ADDR...", runStateRm},
	"mv":   {"genform state mv [flags] SRC DST", runStateMv},
	"push": {"genform state push [flags] [-force] FILE", runStatePush},
	"pull": {"genform state pull [flags] > FILE", runStatePull},
}

// stateCmd is what every state subcommand parses.
type stateCmd struct {
	name        string
	vars        varFlags
	lockTimeout time.Duration
	args        []string
	// extra says which arguments are past the max the subcommand takes.
	extra func(takes string, max int) string
	// force is push's -force.
	force bool
}

func runState(env *Env, args []string) int {
	c := commands["state"]
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, c.usage)
		return ExitError
	}
	if args[0] == "-help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(env.Stdout, c.usage)
		return ExitOK
	}
	if strings.HasPrefix(args[0], "-") {
		// A flag where the subcommand goes is not repeated: its value may
		// be a secret (-var).
		return env.Errorf("state takes its subcommand first (list, show, rm, mv, push or pull), then its flags, e.g. genform state list -lock-timeout=30s")
	}
	sub, ok := stateSubcommands[args[0]]
	if !ok {
		msg := fmt.Sprintf("unknown state subcommand %q", args[0])
		if s := config.Suggest(args[0], []string{"list", "mv", "rm", "show", "push", "pull"}); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		return env.Errorf("%s; the subcommands are list, show, rm, mv, push and pull", msg)
	}
	sc := &stateCmd{name: args[0]}
	fs := flag.NewFlagSet("state "+sc.name, flag.ContinueOnError)
	sc.vars.register(fs)
	fs.DurationVar(&sc.lockTimeout, "lock-timeout", 0, "")
	if sc.name == "push" {
		fs.BoolVar(&sc.force, "force", false, "")
	}
	usage := &command{usage: "Usage: " + sub.usage + "\n\n" + strings.SplitN(c.usage, "\n\n", 2)[1]}
	if ok, code := parseFlags(env, usage, fs, args[1:]); !ok {
		return code
	}
	sc.args = fs.Args()
	sc.extra = func(takes string, max int) string {
		return extraArgs("state "+sc.name, takes, fs, args[1:], max)
	}
	return sub.run(env, sc)
}

// parseAddrs checks every address argument before anything is done. A
// module's address (module.NAME) is taken too, for every instance in it.
func parseAddrs(args []string) ([]addrs.Instance, error) {
	list := make([]addrs.Instance, len(args))
	for i, arg := range args {
		a, err := addrs.ParseTarget(arg)
		if err != nil {
			return nil, err
		}
		list[i] = a
	}
	return list, nil
}

// addrArgs parses the arguments of a subcommand that takes exactly n
// addresses: takes says what they are, example is a use of them.
func (sc *stateCmd) addrArgs(takes string, n int, example string) ([]addrs.Instance, error) {
	if msg := sc.extra(takes, n); msg != "" {
		return nil, errors.New(msg)
	}
	if len(sc.args) != n {
		return nil, fmt.Errorf("state %s takes %s, e.g. genform state %s %s; got %d arguments", sc.name, takes, sc.name, example, len(sc.args))
	}
	list := make([]addrs.Instance, len(sc.args))
	for i, arg := range sc.args {
		a, err := addrs.ParseInstance(arg)
		if err != nil {
			return nil, err
		}
		list[i] = a
	}
	return list, nil
}

func runStateList(env *Env, sc *stateCmd) int {
	list, err := parseAddrs(sc.args)
	if err != nil {
		return env.Errorf("%v", err)
	}
	ws, _ := loadForReading(env, sc.vars.options(env))
	if ws == nil {
		return ExitError
	}
	snap, err := ws.Snapshot("state list", sc.lockTimeout)
	if err != nil {
		return env.Errorf("%v", err)
	}
	if snap == nil {
		if len(list) > 0 {
			return env.Errorf("there is no state (%s), so %s is not in it", ws.StateWhere(), list[0])
		}
		return ExitOK
	}
	shown := addrs.SortedKeys(snap.Resources)
	if len(list) > 0 {
		if shown, err = operation.MatchAddrs(list, snap); err != nil {
			return env.Errorf("%v", err)
		}
	}
	views.NewState(&env.Streams).List(shown)
	return ExitOK
}

func runStateShow(env *Env, sc *stateCmd) int {
	list, err := sc.addrArgs("one address", 1, "image.hero")
	if err != nil {
		return env.Errorf("%v", err)
	}
	return showState(env, views.NewShow(&env.Streams, views.Human), "state show", readFlags{vars: sc.vars, lockTimeout: sc.lockTimeout}, list[0], false)
}

// runStateRm forgets instances, as terraform state rm does: the record,
// its protection and any unfinished submission go; the files stay where
// they are and genform stops managing them. Every address is checked
// before anything is removed, and all are removed in one transaction.
func runStateRm(env *Env, sc *stateCmd) int {
	if len(sc.args) == 0 {
		return env.Errorf("state rm takes the addresses to forget, e.g. genform state rm image.hero")
	}
	list, err := parseAddrs(sc.args)
	if err != nil {
		return env.Errorf("%v", err)
	}
	ws := load(env, sc.vars.options(env))
	if ws == nil {
		return ExitError
	}
	forgotten, err := ws.Forget(list, "state "+sc.name, sc.lockTimeout)
	if err != nil {
		return env.Errorf("%v", err)
	}
	views.NewState(&env.Streams).Removed(forgotten)
	return ExitOK
}

// runStateMv records SRC under DST. An instance address moves that
// instance; an address without a key moves every instance of its
// resource, keeping their keys. The files follow to DST's directory when
// DST is declared in the configuration; otherwise they stay where they are.
func runStateMv(env *Env, sc *stateCmd) int {
	list, err := sc.addrArgs("two addresses, SRC and DST", 2, "image.old image.new")
	if err != nil {
		return env.Errorf("%v", err)
	}
	ws := load(env, sc.vars.options(env))
	if ws == nil {
		return ExitError
	}
	view := views.NewState(&env.Streams)
	n, err := ws.Move(list[0], list[1], "state "+sc.name, sc.lockTimeout, view.Moved)
	if err != nil {
		return env.Errorf("%v", err)
	}
	view.MovedAll(n)
	return ExitOK
}
