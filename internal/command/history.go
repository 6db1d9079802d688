package command

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/genform/genform/internal/formats/jsonstate"
	"github.com/genform/genform/internal/history"

	"github.com/genform/genform/internal/words"

	"github.com/genform/genform/internal/secrets"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/reconcile"
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
  -json                print the JSON document instead (see the README)
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
		renderHistory(env.Stdout, hist, entries)
	}
	return ExitOK
}

// stateAndHistory reads the state and its history under the shared lock
// of readState; a missing state file is an empty state with an empty
// history.
func stateAndHistory(cfg *config.Config, command string, lockTimeout time.Duration) (*statefile.Snapshot, *history.View, error) {
	c, h := reconcile.CacheOf(cfg, "."), secrets.NewHider(cfg)
	st, err := readState(cfg, command, lockTimeout)
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

// renderHistory writes entries grouped by the instance that held them
// last, newest first within each.
func renderHistory(w io.Writer, h *history.View, entries []*statefile.Resource) {
	byAddr := map[addrs.Instance][]*statefile.Resource{}
	for _, e := range entries {
		byAddr[e.Addr] = append(byAddr[e.Addr], e)
	}
	counts := map[string]int{}
	for i, addr := range addrs.SortedKeys(byAddr) {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, colBold.Sprint("# "+addr.String()))
		for _, e := range byAddr[addr] {
			counts[h.State(e)]++
			fmt.Fprintf(w, "  %s\n", historyLine(h, e, addr))
		}
	}
	fmt.Fprintf(w, "\n%d generation%s: %d held, %d restorable, %d failed",
		len(entries), words.Plural(len(entries)), counts["held"], counts["restorable"], counts["failed"])
	if n := counts["unrestorable"]; n > 0 {
		fmt.Fprintf(w, ", %d unrestorable", n)
	}
	fmt.Fprintln(w, ".")
}

// line is one entry in one line: when, what can be done with it, the job,
// the prompt, and for a restorable one where its files would come from.
func historyLine(h *history.View, e *statefile.Resource, addr addrs.Instance) string {
	state := h.State(e)
	rh := h.Hide(e)
	s := fmt.Sprintf("%s  %-12s job %s", e.CreatedAt.UTC().Format("2006-01-02 15:04:05Z"), state, e.GenerationID)
	if p, ok := secrets.RecordAttrs(e)["prompt"].(string); ok {
		if rh.Hides("prompt") || rh.Text(p) != p {
			s += "  prompt " + secrets.Text
		} else {
			s += fmt.Sprintf("  prompt %q", p)
		}
	}
	switch state {
	case "held":
		if held := h.HeldBy(e.GenerationID); held != addr {
			s += " (held by " + held.String() + ")"
		}
	case "restorable":
		if h.Cached(e) {
			s += " (files in the cache)"
		} else {
			s += " (files downloaded again by creation id)"
		}
	case "failed":
		if e.Error != "" {
			s += ": " + rh.Text(e.Error)
		}
	}
	return s
}
