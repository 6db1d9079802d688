package operation

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/operation/outcome"
	"github.com/genform/genform/reconcile"
	"github.com/genform/genform/reconcile/apply"
	"github.com/genform/genform/statefile"
)

// matchAddrs resolves addrs against the state: an instance address matches
// itself, an address without a key every instance of that resource, a
// module's (addrs.ModuleTarget) every instance in that module. known
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
				if addr.Targets(a) {
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
		return nil, UnknownAddr(src, snap)
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

// UnknownAddr says an address is not in the state, suggesting a near
// one when there is.
func UnknownAddr(addr addrs.Instance, snap *statefile.Snapshot) error {
	var known []addrs.Instance
	if snap != nil {
		known = addrs.SortedKeys(snap.Resources)
	}
	return unknownAddrIn(addr, known)
}

// unknownAddrIn is UnknownAddr with the known addresses listed.
func unknownAddrIn(addr addrs.Instance, known []addrs.Instance) error {
	msg := fmt.Sprintf("%s is not in the state", addr)
	if s := suggestAddr(addr, known); s != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", s)
	}
	return fmt.Errorf("%s; 'genform state list' shows the managed addresses", msg)
}

// suggestAddr is the address of known closest to addr, "" when none is
// close. Addresses are compared part by part, as config.Suggest compares
// names: another key of the same resource, else a resource of the same
// kind whose name is close to addr's (image.c is not image.a, however
// alike the whole strings look).
func suggestAddr(addr addrs.Instance, known []addrs.Instance) string {
	var keys, names []string
	first := map[string]addrs.Instance{}
	has := map[addrs.Instance]bool{}
	for _, k := range known {
		has[k] = true
		switch {
		case k.Resource == addr.Resource:
			keys = append(keys, k.String())
		case k.Resource.Kind == addr.Resource.Kind:
			if _, seen := first[k.Resource.Name]; !seen {
				first[k.Resource.Name] = k
				names = append(names, k.Resource.Name)
			}
		}
	}
	if len(keys) > 0 {
		return config.Suggest(addr.String(), keys)
	}
	name := config.Suggest(addr.Resource.Name, names)
	if name == "" {
		return ""
	}
	// The same key of the close resource, when it has one.
	if same := first[name].Resource.Instance(addr.Key); has[same] {
		return same.String()
	}
	return first[name].String()
}

// DamagedJSON names the first record of the state at where (the state
// file, or the database's schema when database is set) whose stored JSON
// (the request, the creation detail, a failed request) does not parse. The
// state document embeds them as they are, and only a damaged state holds
// such bytes: records carry no checksum, so a record a page of the file
// was overwritten in the middle of can still decode.
func DamagedJSON(snap *statefile.Snapshot, where string, database bool) error {
	if snap == nil {
		return nil
	}
	for _, addr := range addrs.SortedKeys(snap.Resources) {
		rec := snap.Resources[addr]
		parts := []struct {
			name string
			raw  json.RawMessage
		}{{"request", rec.Request}, {"creation detail", rec.Detail}}
		if rec.Failure != nil {
			parts = append(parts, struct {
				name string
				raw  json.RawMessage
			}{"failed request", rec.Failure.Request})
		}
		for _, p := range parts {
			if len(p.raw) > 0 && !json.Valid(p.raw) {
				msg := fmt.Sprintf("state file %s: resource record %s holds a %s that is not JSON, so the file is damaged; restore it from version control or a backup", where, addr, p.name)
				if database {
					msg = fmt.Sprintf("the state in %s: resource record %s holds a %s that is not JSON, so the state is damaged; restore it from a backup of the database", where, addr, p.name)
				}
				return fmt.Errorf("%s, or forget the resource with: genform state rm %s", msg, addr.Shell())
			}
		}
	}
	return nil
}

// Forget removes instances from the state, as terraform state rm does:
// the record, its protection and any unfinished submission go; the files
// stay where they are and genform stops managing them. An address without
// a key forgets every instance of its resource. Every address is checked
// before anything is removed, and all are removed in one transaction. It
// reads addresses only, never whole records: it is the remedy the state
// store advises for a record that no longer decodes.
func (w *Workspace) Forget(list []addrs.Instance, command string, lockTimeout time.Duration) ([]outcome.Forgotten, error) {
	store, err := w.openExisting(command, lockTimeout)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	resources, intents, err := store.Addresses()
	if err != nil {
		return nil, err
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
		return nil, err
	}
	out := make([]outcome.Forgotten, len(forget))
	err = store.Update(func(tx *statefile.Tx) error {
		for i, a := range forget {
			f, err := tx.Forget(a)
			if err != nil {
				return err
			}
			out[i] = outcome.Forgotten{Addr: a, AbandonedJob: f.GenerationID}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("removing from the state: %v; nothing was removed", err)
	}
	return out, nil
}

// Move records src under dst. An instance address moves that instance;
// an address without a key moves every instance of its resource, keeping
// their keys. The files follow to dst's directory when dst is declared in
// the configuration; otherwise they stay where they are. moved hears of
// each instance as it is moved.
func (w *Workspace) Move(src, dst addrs.Instance, command string, lockTimeout time.Duration, moved func(outcome.Moved)) (int, error) {
	if src.Resource.Kind != dst.Resource.Kind {
		return 0, fmt.Errorf("cannot move %s to %s: a record keeps its kind, and %s is not %s", src, dst, withArticle(src.Resource.Kind), withArticle(dst.Resource.Kind))
	}
	store, err := w.openExisting(command, lockTimeout)
	if err != nil {
		return 0, err
	}
	defer store.Close()
	snap, err := store.Snapshot()
	if err != nil {
		return 0, err
	}
	pairs, err := movePairs(src, dst, snap)
	if err != nil {
		return 0, err
	}
	// The directory each destination's files belong in, as the
	// configuration declares it; where the files already are otherwise.
	_, insts, _ := reconcile.StateScope(w.Config, snap)
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
				return 0, fmt.Errorf("cannot move %s to %s: its files would go to %s, where %s keeps its files; move or remove %s first", p.src, p.dst, inst.Dir, owner, owner)
			}
		}
	}
	for _, p := range pairs {
		old := snap.Resources[p.src]
		rec, err := apply.MoveRecord(apply.MoveInput{
			Store: store, Src: p.src, Dst: p.dst, Dir: p.dir,
			WorkDir: ".", OutputDir: w.Config.Settings.OutputDir,
		})
		if err != nil {
			return 0, err
		}
		m := outcome.Moved{Src: p.src, Dst: p.dst}
		if rec != nil && rec.Dir != old.Dir {
			m.Files, m.FromDir, m.ToDir = len(rec.Outputs), old.Dir, rec.Dir
		}
		moved(m)
	}
	return len(pairs), nil
}

// openExisting opens the state under its exclusive lock for a command
// that edits it: a missing state is an error, since every such command
// needs an address in it.
func (w *Workspace) openExisting(command string, lockTimeout time.Duration) (*statefile.Store, error) {
	store, err := w.OpenState(command, lockTimeout, false)
	if err != nil {
		return nil, err
	}
	if store == nil {
		return nil, fmt.Errorf("there is no state (%s): nothing has been applied in this directory yet", w.StateWhere())
	}
	return store, nil
}

// MatchAddrs resolves list against the addresses of snap's records, as
// matchAddrs does.
func MatchAddrs(list []addrs.Instance, snap *statefile.Snapshot) ([]addrs.Instance, error) {
	known := make(map[addrs.Instance]bool, len(snap.Resources))
	for a := range snap.Resources {
		known[a] = true
	}
	return matchAddrs(list, known)
}

func withArticle(kind addrs.Kind) string {
	if kind == addrs.Image {
		return "an image"
	}
	return "a " + kind.String()
}
