package history

import (
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/cache"
	"github.com/genform/genform/internal/secrets"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// New is the history of entries (newest first), as the views show it:
// snap says which of them a record holds (nil: no state), c is the cache
// their files may be in, and h what is made from a sensitive value.
func New(entries []*statefile.Resource, snap *statefile.Snapshot, c *cache.Cache, h *secrets.Hider) *View {
	v := &View{entries: entries, heldBy: map[string]addrs.Instance{}, cache: c, hide: h}
	if snap != nil {
		for addr, rec := range snap.Resources {
			if rec.GenerationID != "" {
				v.heldBy[rec.GenerationID] = addr
			}
		}
	}
	return v
}

// View is the history as the views show it: its entries, newest
// first, which of them a record holds, and the cache their files may be
// in.
type View struct {
	entries []*statefile.Resource
	heldBy  map[string]addrs.Instance // generation id -> the instance that holds it
	cache   *cache.Cache
	// hide says what is made from a sensitive value: an entry's request
	// holds it as it was sent.
	hide *secrets.Hider
}

// Of lists the entries addr held last: every entry for the zero address,
// those Of every instance Of a resource for an address without a key.
func (h *View) Of(addr addrs.Instance) []*statefile.Resource {
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

// State says what can be done with an entry: "held" (a record holds it),
// "restorable", "failed", or "unrestorable" (a file was never hashed, so
// a copy could not be checked).
func (h *View) State(e *statefile.Resource) string {
	switch {
	case plans.Failed(e.Status):
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

// Cached reports whether the cache holds every file of e.
func (h *View) Cached(e *statefile.Resource) bool {
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

// HeldBy is the instance whose record holds generation id; the zero
// address when none does.
func (h *View) HeldBy(id string) addrs.Instance { return h.heldBy[id] }

// Hide says what to hide in entry e: its request holds what was made from
// a sensitive value as it was sent.
func (h *View) Hide(e *statefile.Resource) *secrets.Record { return h.hide.Of(e) }

// Entries lists every entry, newest first.
func (h *View) Entries() []*statefile.Resource { return h.entries }
