package command

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/cache"
	"github.com/genform/genform/internal/workdir"
	"github.com/genform/genform/reconcile/plans"
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
	entries := hist.of(addr)
	if *asJSON {
		doc := historyDocument{FormatVersion: jsonFormatVersion, History: hist.json(entries)}
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(doc); err != nil {
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
func stateAndHistory(cfg *config.Config, command string, lockTimeout time.Duration) (*statefile.Snapshot, *historyView, error) {
	hv := &historyView{heldBy: map[string]addrs.Instance{}, cache: workdir.CacheOf(cfg, "."), hide: newHider(cfg)}
	st, err := readState(cfg, command, lockTimeout)
	if err != nil || st == nil {
		return nil, hv, err
	}
	defer st.Close()
	snap, err := st.Snapshot()
	if err != nil {
		return nil, hv, err
	}
	if hv.entries, err = st.History(addrs.Instance{}); err != nil {
		return nil, hv, err
	}
	for addr, rec := range snap.Resources {
		if rec.GenerationID != "" {
			hv.heldBy[rec.GenerationID] = addr
		}
	}
	return snap, hv, nil
}

// historyView is the history as the views show it: its entries, newest
// first, which of them a record holds, and the cache their files may be
// in.
type historyView struct {
	entries []*statefile.Resource
	heldBy  map[string]addrs.Instance // generation id -> the instance that holds it
	cache   *cache.Cache
	// hide says what is made from a sensitive value: an entry's request
	// holds it as it was sent.
	hide *hider
}

// of lists the entries addr held last: every entry for the zero address,
// those of every instance of a resource for an address without a key.
func (h *historyView) of(addr addrs.Instance) []*statefile.Resource {
	if addr.IsZero() {
		return h.entries
	}
	var out []*statefile.Resource
	for _, e := range h.entries {
		if e.Addr == addr || addr.Key.IsZero() && e.Addr.Resource == addr.Resource {
			out = append(out, e)
		}
	}
	return out
}

// state says what can be done with an entry: "held" (a record holds it),
// "restorable", "failed", or "unrestorable" (a file was never hashed, so
// a copy could not be checked).
func (h *historyView) state(e *statefile.Resource) string {
	switch {
	case e.Status == plans.StatusFailed:
		return "failed"
	case !h.heldBy[e.GenerationID].IsZero():
		return "held"
	case e.Status != plans.StatusSucceed || len(e.Outputs) == 0:
		return "unrestorable"
	}
	for _, o := range e.Outputs {
		if o.SHA256 == "" {
			return "unrestorable"
		}
	}
	return "restorable"
}

// cached reports whether the cache holds every file of e.
func (h *historyView) cached(e *statefile.Resource) bool {
	if len(e.Outputs) == 0 {
		return false
	}
	for _, o := range e.Outputs {
		if !h.cache.Has(o.SHA256) {
			return false
		}
	}
	return true
}

// historyDocument is the JSON form of the history (history -json).
type historyDocument struct {
	FormatVersion string             `json:"format_version"`
	History       []historyEntryJSON `json:"history"`
}

// historyEntryJSON is one generation of the history, in the history
// document and the state document alike.
type historyEntryJSON struct {
	Address      string            `json:"address"`
	GenerationID string            `json:"generation_id"`
	CreationID   string            `json:"creation_id"`
	Fingerprint  string            `json:"fingerprint"`
	Endpoint     string            `json:"endpoint"`
	Status       string            `json:"status"`
	Error        string            `json:"error,omitempty"`
	State        string            `json:"state"`
	HeldBy       string            `json:"held_by,omitempty"`
	Cached       bool              `json:"cached"`
	Attributes   map[string]any    `json:"attributes"`
	Outputs      []stateOutputJSON `json:"outputs"`
	RecordedAt   string            `json:"recorded_at,omitempty"`
	UpdatedAt    string            `json:"updated_at,omitempty"`
}

func (h *historyView) json(entries []*statefile.Resource) []historyEntryJSON {
	out := make([]historyEntryJSON, 0, len(entries))
	for _, e := range entries {
		rh := h.hide.of(e)
		j := historyEntryJSON{
			Address: e.Addr.String(), GenerationID: e.GenerationID, CreationID: e.CreationID,
			Fingerprint: e.Fingerprint, Endpoint: e.Endpoint.Path(), Status: e.Status, Error: rh.text(e.Error),
			State: h.state(e), Cached: h.cached(e), Attributes: rh.attrs(recordAttrs(e), sensitiveText), Outputs: []stateOutputJSON{},
			RecordedAt: jsonTime(e.CreatedAt), UpdatedAt: jsonTime(e.UpdatedAt),
		}
		if held := h.heldBy[e.GenerationID]; !held.IsZero() {
			j.HeldBy = held.String()
		}
		for _, o := range e.Outputs {
			j.Outputs = append(j.Outputs, stateOutput(o))
		}
		out = append(out, j)
	}
	return out
}

// renderHistory writes entries grouped by the instance that held them
// last, newest first within each.
func renderHistory(w io.Writer, h *historyView, entries []*statefile.Resource) {
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
			counts[h.state(e)]++
			fmt.Fprintf(w, "  %s\n", h.line(e, addr))
		}
	}
	fmt.Fprintf(w, "\n%d generation%s: %d held, %d restorable, %d failed",
		len(entries), plural(len(entries)), counts["held"], counts["restorable"], counts["failed"])
	if n := counts["unrestorable"]; n > 0 {
		fmt.Fprintf(w, ", %d unrestorable", n)
	}
	fmt.Fprintln(w, ".")
}

// line is one entry in one line: when, what can be done with it, the job,
// the prompt, and for a restorable one where its files would come from.
func (h *historyView) line(e *statefile.Resource, addr addrs.Instance) string {
	state := h.state(e)
	rh := h.hide.of(e)
	s := fmt.Sprintf("%s  %-12s job %s", e.CreatedAt.UTC().Format("2006-01-02 15:04:05Z"), state, e.GenerationID)
	if p, ok := recordAttrs(e)["prompt"].(string); ok {
		if rh.hides("prompt") || rh.text(p) != p {
			s += "  prompt " + sensitiveText
		} else {
			s += fmt.Sprintf("  prompt %q", p)
		}
	}
	switch state {
	case "held":
		if held := h.heldBy[e.GenerationID]; held != addr {
			s += " (held by " + held.String() + ")"
		}
	case "restorable":
		if h.cached(e) {
			s += " (files in the cache)"
		} else {
			s += " (files downloaded again by creation id)"
		}
	case "failed":
		if e.Error != "" {
			s += ": " + rh.text(e.Error)
		}
	}
	return s
}
