package command

import (
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/genform/genform/internal/backend"
	"github.com/genform/genform/internal/words"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/reconcile"
	"github.com/genform/genform/reconcile/apply"
	"github.com/genform/genform/statefile"
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
  -var 'NAME=VALUE'    set a variable (repeatable)
  -var-file=FILE       read variables from a *.genvars.hcl file (repeatable)
  -lock-timeout=DUR    wait this long for the state lock (default 0s)

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
	sub, ok := stateSubcommands[args[0]]
	if !ok {
		msg := fmt.Sprintf("unknown state subcommand %q", args[0])
		if s := suggest(args[0], []string{"list", "mv", "rm", "show", "push", "pull"}); s != "" {
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

// open loads the configuration (it names the state file) and opens the
// state under its lock; a missing state file is an error, since every
// subcommand needs an address in it.
func (sc *stateCmd) open(env *Env) (*config.Config, *statefile.Store, *statefile.Snapshot, int) {
	cfg := loadConfig(env, sc.vars.options(env))
	if cfg == nil {
		return nil, nil, nil, ExitError
	}
	store, err := backend.OpenState(cfg, "state "+sc.name, sc.lockTimeout, false)
	if err != nil {
		return nil, nil, nil, env.Errorf("%v", err)
	}
	if store == nil {
		return nil, nil, nil, env.Errorf("there is no state file (%s): nothing has been applied in this directory yet", backend.Where(cfg))
	}
	snap, err := store.Snapshot()
	if err != nil {
		store.Close()
		return nil, nil, nil, env.Errorf("%v", err)
	}
	return cfg, store, snap, ExitOK
}

// parseAddrs checks every address argument before anything is done.
func parseAddrs(args []string) ([]addrs.Instance, error) {
	list := make([]addrs.Instance, len(args))
	for i, arg := range args {
		a, err := addrs.ParseInstance(arg)
		if err != nil {
			return nil, err
		}
		list[i] = a
	}
	return list, nil
}

// matchAddrs resolves addrs against the state: an instance address matches
// itself, an address without a key every instance of that resource. known
// says which addresses count as present. An address that matches nothing
// is an error naming it.
func matchAddrs(list []addrs.Instance, known map[addrs.Instance]bool) ([]addrs.Instance, error) {
	var out []addrs.Instance
	seen := map[addrs.Instance]bool{}
	for _, addr := range list {
		var matched []addrs.Instance
		if known[addr] {
			matched = []addrs.Instance{addr}
		} else if addr.Key.IsZero() {
			for a := range known {
				if a.Resource == addr.Resource {
					matched = append(matched, a)
				}
			}
			addrs.Sort(matched)
		}
		if len(matched) == 0 {
			return nil, unknownAddrIn(addr, addrs.SortedKeys(known))
		}
		for _, a := range matched {
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	return out, nil
}

func runStateList(env *Env, sc *stateCmd) int {
	list, err := parseAddrs(sc.args)
	if err != nil {
		return env.Errorf("%v", err)
	}
	cfg, _ := loadForReading(env, sc.vars.options(env))
	if cfg == nil {
		return ExitError
	}
	snap, err := readSnapshot(cfg, "state list", sc.lockTimeout)
	if err != nil {
		return env.Errorf("%v", err)
	}
	if snap == nil {
		if len(list) > 0 {
			return env.Errorf("there is no state file (%s), so %s is not in it", backend.Where(cfg), list[0])
		}
		return ExitOK
	}
	shown := addrs.SortedKeys(snap.Resources)
	if len(list) > 0 {
		known := make(map[addrs.Instance]bool, len(snap.Resources))
		for a := range snap.Resources {
			known[a] = true
		}
		if shown, err = matchAddrs(list, known); err != nil {
			return env.Errorf("%v", err)
		}
	}
	for _, a := range shown {
		fmt.Fprintln(env.Stdout, a)
	}
	return ExitOK
}

func runStateShow(env *Env, sc *stateCmd) int {
	if msg := sc.extra("one address", 1); msg != "" {
		return env.Errorf("%s", msg)
	}
	if len(sc.args) != 1 {
		return env.Errorf("state show takes one address, e.g. genform state show image.hero; got %d arguments", len(sc.args))
	}
	addr, err := addrs.ParseInstance(sc.args[0])
	if err != nil {
		return env.Errorf("%v", err)
	}
	return showState(env, "state show", sc.vars, sc.lockTimeout, addr, false)
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
	// rm reads addresses only, never whole records: it is the remedy the
	// state store advises for a record that no longer decodes.
	cfg := loadConfig(env, sc.vars.options(env))
	if cfg == nil {
		return ExitError
	}
	store, err := backend.OpenState(cfg, "state "+sc.name, sc.lockTimeout, false)
	if err != nil {
		return env.Errorf("%v", err)
	}
	if store == nil {
		return env.Errorf("there is no state file (%s): nothing has been applied in this directory yet", backend.Where(cfg))
	}
	defer store.Close()
	resources, intents, err := store.Addresses()
	if err != nil {
		return env.Errorf("%v", err)
	}
	known := make(map[addrs.Instance]bool, len(resources)+len(intents))
	for _, a := range resources {
		known[a] = true
	}
	for _, a := range intents {
		known[a] = true
	}
	forget, err := matchAddrs(list, known)
	if err != nil {
		return env.Errorf("%v", err)
	}
	abandoned := map[addrs.Instance]string{}
	err = store.Update(func(tx *statefile.Tx) error {
		for _, a := range forget {
			f, err := tx.Forget(a)
			if err != nil {
				return err
			}
			if f.GenerationID != "" {
				abandoned[a] = f.GenerationID
			}
		}
		return nil
	})
	if err != nil {
		return env.Errorf("removing from the state: %v; nothing was removed", err)
	}
	for _, a := range forget {
		fmt.Fprintf(env.Stdout, "Removed %s\n", a)
		if id := abandoned[a]; id != "" {
			fmt.Fprintf(env.Stdout, "  job %s, submitted by an interrupted apply, is no longer followed\n", id)
		}
	}
	fmt.Fprintf(env.Stdout, "Successfully removed %d resource instance%s. Their files stay on disk; genform no longer manages them.\n", len(forget), words.Plural(len(forget)))
	return ExitOK
}

// runStateMv records SRC under DST. An instance address moves that
// instance; an address without a key moves every instance of its
// resource, keeping their keys. The files follow to DST's directory when
// DST is declared in the configuration; otherwise they stay where they are.
func runStateMv(env *Env, sc *stateCmd) int {
	if msg := sc.extra("two addresses, SRC and DST", 2); msg != "" {
		return env.Errorf("%s", msg)
	}
	if len(sc.args) != 2 {
		return env.Errorf("state mv takes two addresses, SRC and DST, e.g. genform state mv image.old image.new; got %d arguments", len(sc.args))
	}
	list, err := parseAddrs(sc.args)
	if err != nil {
		return env.Errorf("%v", err)
	}
	src, dst := list[0], list[1]
	if src.Resource.Kind != dst.Resource.Kind {
		return env.Errorf("cannot move %s to %s: a record keeps its kind, and %s is not %s", src, dst, withArticle(src.Resource.Kind), withArticle(dst.Resource.Kind))
	}
	cfg, store, snap, code := sc.open(env)
	if code != ExitOK {
		return code
	}
	defer store.Close()

	pairs, err := movePairs(src, dst, snap)
	if err != nil {
		return env.Errorf("%v", err)
	}
	// The directory each destination's files belong in, as the
	// configuration declares it; where the files already are otherwise.
	_, insts, _ := reconcile.StateScope(cfg, snap)
	declared := make(map[addrs.Instance]*config.Instance, len(insts))
	for _, inst := range insts {
		declared[inst.Addr] = inst
	}
	dirOwner := map[string]addrs.Instance{}
	for a, rec := range snap.Resources {
		dirOwner[rec.Dir] = a
	}
	for i, p := range pairs {
		if inst := declared[p.dst]; inst != nil {
			pairs[i].dir = inst.Dir
			if owner, ok := dirOwner[inst.Dir]; ok && owner != p.src {
				return env.Errorf("cannot move %s to %s: its files would go to %s, where %s keeps its files; move or remove %s first", p.src, p.dst, inst.Dir, owner, owner)
			}
		}
	}
	for _, p := range pairs {
		old := snap.Resources[p.src]
		rec, err := apply.MoveRecord(apply.MoveInput{
			Store: store, Src: p.src, Dst: p.dst, Dir: p.dir,
			WorkDir: ".", OutputDir: cfg.Settings.OutputDir,
		})
		if err != nil {
			return env.Errorf("%v", err)
		}
		fmt.Fprintf(env.Stdout, "Moved %s to %s\n", p.src, p.dst)
		if rec != nil && rec.Dir != old.Dir {
			fmt.Fprintf(env.Stdout, "  %d file%s moved from %s to %s\n", len(rec.Outputs), words.Plural(len(rec.Outputs)), old.Dir, rec.Dir)
		}
	}
	fmt.Fprintf(env.Stdout, "Successfully moved %d resource instance%s.\n", len(pairs), words.Plural(len(pairs)))
	return ExitOK
}

type movePair struct {
	src, dst addrs.Instance
	dir      string
}

// movePairs checks a move against the state and lists the instance moves
// it makes.
func movePairs(src, dst addrs.Instance, snap *statefile.Snapshot) ([]movePair, error) {
	var pairs []movePair
	switch {
	case snap.Resources[src] != nil:
		pairs = []movePair{{src: src, dst: dst}}
	case src.Key.IsZero():
		if !dst.Key.IsZero() {
			return nil, fmt.Errorf("cannot move every instance of %s to the single instance %s; move them one by one", src, dst)
		}
		for _, a := range addrs.SortedKeys(snap.Resources) {
			if a.Resource == src.Resource {
				pairs = append(pairs, movePair{src: a, dst: dst.Resource.Instance(a.Key)})
			}
		}
	}
	if len(pairs) == 0 {
		if snap.Intents[src] != nil {
			return nil, fmt.Errorf("%s has only an unfinished submission, no record to move; run 'genform apply' to finish it, or 'genform state rm %s' to forget it", src, src.Shell())
		}
		return nil, unknownAddrError(src, snap)
	}
	for _, p := range pairs {
		if p.src == p.dst {
			return nil, fmt.Errorf("%s is already at %s", p.src, p.dst)
		}
		if snap.Resources[p.dst] != nil {
			return nil, fmt.Errorf("cannot move %s to %s: %s is already in the state; remove it first with 'genform state rm %s'", p.src, p.dst, p.dst, p.dst.Shell())
		}
		if snap.Intents[p.dst] != nil {
			return nil, fmt.Errorf("cannot move %s to %s: an apply left an unfinished submission for %s; run 'genform apply' to finish it, or 'genform state rm %s' to forget it", p.src, p.dst, p.dst, p.dst.Shell())
		}
		if snap.Intents[p.src] != nil {
			return nil, fmt.Errorf("cannot move %s: an apply left an unfinished submission for it; run 'genform apply' to finish it first", p.src)
		}
	}
	return pairs, nil
}

func withArticle(kind addrs.Kind) string {
	if kind == addrs.Image {
		return "an image"
	}
	return "a " + kind.String()
}
