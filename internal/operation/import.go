package operation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/blobstore"
	"github.com/genform/genform/internal/operation/outcome"
	"github.com/genform/genform/reconcile"
	"github.com/genform/genform/reconcile/apply"
	"github.com/genform/genform/statefile"
)

// ImportRequest is what import is asked: adopt the creation CreationID,
// made elsewhere, for the declared instance Addr.
type ImportRequest struct {
	Addr       addrs.Instance
	CreationID string
	// LockTimeout is how long to wait for the state's lock.
	LockTimeout time.Duration
	// MigrateService imports from the configured service although the
	// state was made with another.
	MigrateService bool
	// Started is called just before the creation is fetched, with the
	// service it is fetched from.
	Started func(outcome.Services)
}

// Imported is what an import adopted, and what it noticed on the way.
type Imported struct {
	// Resource is the record now in the state; nil when the import
	// failed.
	Resource *statefile.Resource
	// Warnings are what the creation differs in from the declaration,
	// and what else the import noticed.
	Warnings []apply.ImportWarning
	// PromptSensitive is whether the declared prompt is made from a
	// secret, so that no warning shows it.
	PromptSensitive bool
	// Unstored are the files the object store did not take (the record
	// and the files are kept; the next apply uploads them).
	Unstored []apply.Unstored
}

// Import fetches the creation's detail, downloads its outputs where the
// instance's files go and records it: genform import. Warnings are
// returned even when the import fails. An error wrapping
// context.Canceled means ctx ended it and nothing was recorded.
func (w *Workspace) Import(ctx context.Context, req ImportRequest) (*Imported, hcl.Diagnostics, error) {
	addr, id := req.Addr, req.CreationID
	store, err := w.OpenState("import", req.LockTimeout, true)
	if err != nil {
		return nil, nil, err
	}
	defer store.Close()
	snap, err := store.Snapshot()
	if err != nil {
		return nil, nil, err
	}
	if _, err := w.checkService("import", snap.Meta.Service, req.MigrateService); err != nil {
		return nil, nil, err
	}
	if rec := snap.Resources[addr]; rec != nil {
		return nil, nil, fmt.Errorf("%s is already managed (creation %s); to adopt another creation, forget it first with 'genform state rm %s'", addr, rec.CreationID, addr.Shell())
	}
	_, insts, diags := reconcile.StateScope(w.Config, snap)
	var inst *config.Instance
	for _, in := range insts {
		if in.Addr == addr {
			inst = in
		}
	}
	if inst == nil {
		if r := w.Config.Resource(addr.Resource); r != nil && diags.HasErrors() && !hasInstances(insts, r.Addr()) {
			// The resource is declared but could not be expanded: say why.
			return nil, diags, fmt.Errorf("cannot import %s: the instances of %s cannot be known from the configuration and the state", addr, r.Addr())
		}
		return nil, nil, notDeclaredError(addr, w.Config, insts)
	}

	// As apply, the store is asked first whether it answers to the
	// credentials: an import whose files no teammate could fetch is
	// refused before anything is downloaded.
	var blobs *blobstore.Bucket
	if w.Config.Settings.Store != nil {
		if blobs, err = w.checkedBlobs(ctx); err != nil {
			return nil, nil, err
		}
	}
	client, stop, err := w.Provider(inst.Endpoint.Provider(), nil)
	if err != nil {
		return nil, nil, err
	}
	defer stop()
	if req.Started != nil {
		req.Started(w.serviceOf(inst.Endpoint.Provider()))
	}
	res, err := apply.Import(ctx, apply.ImportInput{
		Instance: inst, CreationID: id, Store: store, Service: client, ServiceID: w.Endpoint.ID, Dir: ".", Blobs: blobs,
	})
	out := &Imported{PromptSensitive: slices.Contains(inst.Sensitive, "prompt")}
	if res != nil {
		out.Unstored, out.Warnings = res.Unstored, res.Warnings
	}
	if err != nil {
		return out, nil, err
	}
	// Recorded after the import, not before: a refused import changes
	// nothing. A crash in between leaves the state naming what it named
	// before: no service (recorded at the next apply), or the one that
	// -migrate-service moved away from, whose switch is asked again.
	if inst.Endpoint.Provider() == addrs.Reference {
		if err := store.Update(func(tx *statefile.Tx) error { return tx.SetService(w.Endpoint.ID) }); err != nil {
			return out, nil, err
		}
	}
	out.Resource = res.Resource
	return out, nil, nil
}

func hasInstances(insts []*config.Instance, r addrs.Resource) bool {
	for _, in := range insts {
		if in.Addr.Resource == r {
			return true
		}
	}
	return false
}

// notDeclaredError refuses an address the configuration does not declare
// (as expanded, in declared), pointing at the nearest one, or at the
// instance addresses when the resource has count or for_each.
func notDeclaredError(addr addrs.Instance, cfg *config.Config, declared []*config.Instance) error {
	raddr := addr.Resource
	if cfg.Resource(raddr) == nil {
		msg := fmt.Sprintf("%s is not declared in the configuration; import adopts a creation for a declared resource, so add its block first", addr)
		names := make([]addrs.Instance, len(declared))
		for i, in := range declared {
			names[i] = in.Addr
		}
		if s := suggestAddr(addr, names); s != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", addrs.ShellQuote(s))
		}
		return errors.New(msg)
	}
	var own []string
	for _, in := range declared {
		if in.Addr.Resource == raddr {
			own = append(own, in.Addr.String())
		}
	}
	switch {
	case len(own) == 0:
		return fmt.Errorf("%s is declared, but its count or for_each yields no instances, so there is nothing to import %s into", raddr, addr)
	case addr.Key.IsZero():
		return fmt.Errorf("%s has count or for_each: import into one of its instances, e.g. %s", addr, addrs.ShellQuote(own[0]))
	}
	if len(own) > 5 {
		own = append(own[:5], "...")
	}
	return fmt.Errorf("%s is not an instance of %s; its instances are %s", addr, raddr, strings.Join(own, ", "))
}
