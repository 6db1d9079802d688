package operation

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/backend"
	"github.com/genform/genform/internal/operation/outcome"
	"github.com/genform/genform/internal/words"
	"github.com/genform/genform/statefile"
)

// Workspaces lists the workspaces of the configured storage whose state
// exists, default first: genform workspace list.
func (w *Workspace) Workspaces() ([]string, error) { return backend.Workspaces(w.Config) }

// WorkspaceExists reports whether workspace name's state exists (default
// always does: it is the state as it always was, made by the first
// apply).
func (w *Workspace) WorkspaceExists(name string) (bool, error) {
	if name == backend.DefaultWorkspace {
		return true, nil
	}
	names, err := w.Workspaces()
	if err != nil {
		return false, err
	}
	for _, n := range names {
		if n == name {
			return true, nil
		}
	}
	return false, nil
}

// NewWorkspace makes workspace name's state, empty: genform workspace
// new. A workspace that exists is refused.
func (w *Workspace) NewWorkspace(name string, lockTimeout time.Duration) error {
	if err := backend.CheckWorkspace(name); err != nil {
		return err
	}
	exists, err := w.WorkspaceExists(name)
	if err != nil {
		return err
	}
	if exists {
		return fmt.Errorf("workspace %q already exists; genform workspace select %s uses it", name, name)
	}
	st, err := backend.OpenState(w.Config, name, "workspace new", lockTimeout, true)
	if err != nil {
		return err
	}
	return st.Close()
}

// DeleteWorkspace removes workspace name's state: genform workspace
// delete. A workspace that still records files, or submissions an
// interrupted apply left, is refused unless force. Its history is filed
// in the default workspace's first, so that what it paid for stays
// restorable everywhere (a pull request closed before main applied its
// changes costs nothing more). Output files and the object store's
// objects are never touched.
func (w *Workspace) DeleteWorkspace(name string, force bool, lockTimeout time.Duration) (outcome.WorkspaceDeleted, error) {
	res := outcome.WorkspaceDeleted{Name: name}
	if err := backend.CheckWorkspace(name); err != nil {
		return res, err
	}
	switch {
	case name == backend.DefaultWorkspace:
		return res, errors.New("the default workspace cannot be deleted: it is the state as it always was")
	case name == w.Name:
		return res, fmt.Errorf("workspace %q is the one selected; select another first (genform workspace select default), or unset %s", name, backend.WorkspaceEnv)
	}
	err := backend.DeleteWorkspace(w.Config, name, lockTimeout, func(st *statefile.Store) error {
		snap, err := st.Snapshot()
		if err != nil {
			return err
		}
		for _, r := range snap.Resources {
			if len(r.Outputs) > 0 {
				res.Managed = append(res.Managed, r.Addr)
			}
		}
		for a := range snap.Intents {
			res.Abandoned = append(res.Abandoned, a)
		}
		addrs.Sort(res.Managed)
		addrs.Sort(res.Abandoned)
		if !force && (len(res.Managed) > 0 || len(res.Abandoned) > 0) {
			return refuseDelete(name, res)
		}
		entries, err := st.History(addrs.Instance{})
		if err != nil {
			return err
		}
		if len(entries) == 0 {
			return nil
		}
		def, err := backend.OpenState(w.Config, backend.DefaultWorkspace, "workspace delete", lockTimeout, true)
		if err != nil {
			return fmt.Errorf("keeping workspace %s's history in the default workspace's, before deleting it: %w; nothing was deleted", name, err)
		}
		defer def.Close()
		// Only what default's history lacks is written: a generation
		// restored from default into the workspace is there already.
		var missing []*statefile.Resource
		for _, e := range entries {
			have, err := def.Generation(e.Fingerprint, e.GenerationID)
			if err != nil {
				return err
			}
			if have == nil {
				missing = append(missing, e)
			}
		}
		if len(missing) == 0 {
			return nil
		}
		if err := def.Update(func(tx *statefile.Tx) error {
			for _, e := range missing {
				if err := tx.RecordHistory(e); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return fmt.Errorf("keeping workspace %s's history in the default workspace's, before deleting it: %w; nothing was deleted", name, err)
		}
		res.Kept = len(missing)
		return nil
	})
	return res, err
}

// refuseDelete says why a workspace that still manages something is not
// deleted without -force.
func refuseDelete(name string, res outcome.WorkspaceDeleted) error {
	var what []string
	if n := len(res.Managed); n > 0 {
		what = append(what, fmt.Sprintf("manages the files of %d instance%s (%s)", n, words.Plural(n), listAddrs(res.Managed)))
	}
	if n := len(res.Abandoned); n > 0 {
		what = append(what, fmt.Sprintf("holds %d submission%s an interrupted apply left (%s), whose jobs may be paid for; an apply in it follows them", n, words.Plural(n), listAddrs(res.Abandoned)))
	}
	return fmt.Errorf("workspace %s still %s; nothing was deleted. genform workspace delete -force %s deletes its state anyway: the files stay on disk, unmanaged, and every object in the store stays", name, strings.Join(what, ", and "), name)
}

func listAddrs(list []addrs.Instance) string {
	const most = 3
	var parts []string
	for i, a := range list {
		if i == most {
			parts = append(parts, fmt.Sprintf("and %d more", len(list)-most))
			break
		}
		parts = append(parts, a.String())
	}
	return strings.Join(parts, ", ")
}
