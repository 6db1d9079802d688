package operation

import (
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/genform/genform/internal/backend"
	"github.com/genform/genform/statefile"
)

// histories is the history a plan's restores are found in: the
// workspace's own state's, then every other workspace's of the same
// storage, so a generation paid for in one workspace (a pull request's
// preview) is restored in another (main, after the merge) at no cost.
//
// Nothing is opened until the planner first asks, so a plan that would
// generate nothing never reads a history; the states opened are read as
// last committed (beside a writer holding the lock) and closed at close.
// Another workspace's state that cannot be read is skipped with a
// warning: its generations are not restored, nothing else is lost.
type histories struct {
	w           *Workspace
	lockTimeout time.Duration
	// own is the workspace's own state when the caller holds it open
	// (apply); nil has it opened here for reading, when it exists.
	own    *statefile.Store
	opened bool
	// ownErr is the error opening the own state: the planner reports it.
	ownErr error
	// mine is the own state opened here, closed at close.
	mine   *statefile.Store
	others []otherState
	// from names the workspace each entry handed out came from.
	from     map[*statefile.Resource]string
	warnings hcl.Diagnostics
}

type otherState struct {
	name string
	st   *statefile.Store
}

// histories makes the history a plan in w reads; own is the state the
// caller holds open, or nil.
func (w *Workspace) histories(own *statefile.Store, lockTimeout time.Duration) *histories {
	return &histories{w: w, own: own, lockTimeout: lockTimeout, from: map[*statefile.Resource]string{}}
}

func (h *histories) open() {
	if h.opened {
		return
	}
	h.opened = true
	if h.own == nil {
		h.mine, h.ownErr = h.w.ReadState("plan", h.lockTimeout)
		h.own = h.mine
	}
	names, err := backend.Workspaces(h.w.Config)
	if err != nil {
		h.warn(fmt.Sprintf("The other workspaces' histories were not read: %v. A generation made in another workspace is made again rather than restored; fix the access to the state's storage and plan again.", err))
		return
	}
	for _, name := range names {
		if name == h.w.Name {
			continue
		}
		st, err := backend.ReadState(h.w.Config, name, "plan", h.lockTimeout)
		if err != nil {
			h.warn(fmt.Sprintf("Workspace %s's history was not read: %v. Its generations are not restored here; fix the access to its state and plan again.", name, err))
			continue
		}
		if st != nil {
			h.others = append(h.others, otherState{name: name, st: st})
		}
	}
}

func (h *histories) warn(detail string) {
	h.warnings = append(h.warnings, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Another workspace's history is unread", Detail: detail})
}

// Generations returns every workspace's entries for the request fp, the
// most recently made first; a generation recorded in several workspaces
// (restored from one into another) is listed once, as the own
// workspace's when it is one.
func (h *histories) Generations(fp string) ([]*statefile.Resource, error) {
	h.open()
	if h.ownErr != nil {
		return nil, h.ownErr
	}
	var all []*statefile.Resource
	seen := map[string]bool{}
	if h.own != nil {
		own, err := h.own.Generations(fp)
		if err != nil {
			return nil, err
		}
		for _, e := range own {
			seen[e.GenerationID] = true
		}
		all = own
	}
	for _, o := range h.others {
		entries, err := o.st.Generations(fp)
		if err != nil {
			h.warn(fmt.Sprintf("Workspace %s's history was not read: %v. Its generations are not restored here.", o.name, err))
			continue
		}
		for _, e := range entries {
			if seen[e.GenerationID] {
				continue
			}
			seen[e.GenerationID] = true
			h.from[e] = o.name
			all = append(all, e)
		}
	}
	if len(h.others) > 0 {
		slices.SortStableFunc(all, func(a, b *statefile.Resource) int { return b.CreatedAt.Compare(a.CreatedAt) })
	}
	return all, nil
}

// WorkspaceOf names the workspace that recorded e: "" for the own.
func (h *histories) WorkspaceOf(e *statefile.Resource) string { return h.from[e] }

// Generation finds generation gid of the request fp in another
// workspace's history (the apply engine looks in its own state first).
func (h *histories) Generation(fp, gid string) (*statefile.Resource, error) {
	h.open()
	for _, o := range h.others {
		e, err := o.st.Generation(fp, gid)
		if err != nil {
			return nil, fmt.Errorf("reading workspace %s's history: %w", o.name, err)
		}
		if e != nil {
			return e, nil
		}
	}
	return nil, nil
}

func (h *histories) close() {
	if h == nil {
		return
	}
	if h.mine != nil {
		h.mine.Close()
	}
	for _, o := range h.others {
		o.st.Close()
	}
	h.mine, h.others = nil, nil
}
