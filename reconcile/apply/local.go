package apply

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/workdir"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// This file holds the actions that cost no generation: update (move files,
// download again), move (a rename) and delete.

// update moves an instance's files to its new dir, fetches the outputs that
// are missing or changed on disk (or all of them when watermark_free
// changed) and records the result.
func (r *applyRun) update(inst *config.Instance, c *plans.Change) error {
	e := r.e
	// A settled submission's job is followed and kept before its intent
	// is cleared with the record.
	if err := r.keepJob(inst.Addr, inst.Dir, r.interruptedJob(inst.Addr, c.Reason)); err != nil {
		return err
	}
	old, err := e.Store.Resource(inst.Addr)
	if err != nil {
		return err
	}
	if old == nil {
		return fmt.Errorf("%s is no longer in the state; run plan again", inst.Addr)
	}
	rec := *old
	rec.Outputs = append([]statefile.Output(nil), old.Outputs...)
	rec.Dir = inst.Dir
	rec.WatermarkFree = inst.WatermarkFree
	if err := r.relocate(&rec, old); err != nil {
		return err
	}
	which := map[int]bool{}
	for _, o := range rec.Outputs {
		if old.WatermarkFree != inst.WatermarkFree || workdir.CheckFile(e.Dir, o) != workdir.FileOK {
			which[o.Index] = true
		}
	}
	var dlErr, storeErr error
	fromProvider := false
	fromStore := map[int]bool{} // the outputs fetched from the store
	fromCache := map[int]bool{} // the outputs taken from the local cache
	if len(which) > 0 {
		r.emit(Event{Addr: inst.Addr, Action: c.Action, Phase: PhaseDownloading, GenerationID: rec.GenerationID})
		// A file about to be overwritten (the other watermark wish) stays
		// restorable; one changed on disk is not what the record says
		// and is not kept.
		r.keepFiles(&rec)
		// The local cache, then the store, hold the recorded bytes; the
		// other watermark wish is other bytes, which only the provider
		// has.
		if old.WatermarkFree == inst.WatermarkFree {
			asked := maps.Clone(which)
			cacheErr := r.fetchCached(&rec, which)
			for i := range asked {
				fromCache[i] = !which[i]
			}
			asked = maps.Clone(which)
			storeErr = errors.Join(cacheErr, r.fetchStored(r.on(inst.Addr), &rec, which))
			for i := range asked {
				fromStore[i] = !which[i]
			}
		}
		if len(which) > 0 {
			fromProvider = true
			dlErr = r.downloadAll(r.on(inst.Addr), &rec, which, nil)
		}
		if dlErr != nil && old.WatermarkFree != inst.WatermarkFree {
			// The files are not all the other wish's yet: the record
			// keeps the wish its hashes were made under, so the next plan
			// fetches them all again, rather than take the files left
			// as they are for the new wish.
			rec.WatermarkFree = old.WatermarkFree
		}
	}
	if err := r.refreshStats(&rec); err != nil {
		return err
	}
	rec.UpdatedAt = nowUTC()
	if err := e.Store.Batch(func(tx *statefile.Tx) error {
		if fromProvider {
			// Files downloaded again come from the service too.
			if err := r.setService(tx, rec.Endpoint); err != nil {
				return err
			}
		}
		if err := tx.Record(&rec); err != nil {
			return err
		}
		return tx.Protect(inst.Addr, inst.Resource.PreventDestroy)
	}); err != nil {
		return fmt.Errorf("recording %s: %w", inst.Addr, err)
	}
	if old.Dir != rec.Dir {
		pruneDirs(e.Dir, old.Dir, e.Config.Settings.OutputDir)
	}
	r.upload(inst.Addr, &rec)
	if dlErr != nil {
		dlErr = fmt.Errorf("%w; rerun apply to download again", dlErr)
	}
	if err := errors.Join(storeErr, dlErr); err != nil {
		return err
	}
	switch {
	case c.MovesOnly():
		r.record(&r.res.Moved, inst.Addr)
	case c.UploadsOnly():
		r.record(&r.res.Uploaded, inst.Addr)
	default:
		r.record(&r.res.Updated, inst.Addr)
	}
	r.emit(Event{Addr: inst.Addr, Action: c.Action, Phase: PhaseDone, Reason: updated(c.Reason, &rec, fromCache, fromStore), Files: len(rec.Outputs), Dir: rec.Dir})
	return nil
}

// updated is the reason of an update as it was carried out, for its done
// event: a file the plan expected from the object store says where it
// came from (the store, or the provider when the store lacked it), and a
// file whose upload failed is left out (the apply's summary names it).
func updated(why *plans.Reason, rec *statefile.Resource, fromCache, fromStore map[int]bool) *plans.Reason {
	if why == nil {
		return nil
	}
	stored := map[int]bool{}
	for _, o := range rec.Outputs {
		stored[o.Index] = o.Stored
	}
	out := *why
	out.Local = nil
	for _, l := range why.Local {
		switch l.What {
		case plans.OutputMissing, plans.OutputModified:
			l.Cached, l.Stored = fromCache[l.Output], fromStore[l.Output]
		case plans.OutputUnstored:
			if !stored[l.Output] {
				continue
			}
		}
		out.Local = append(out.Local, l)
	}
	return &out
}

// relocate moves rec's files from old's paths into rec.Dir. A file already
// in place is left alone; one found nowhere is left for re-download.
func (r *applyRun) relocate(rec, old *statefile.Resource) error {
	if rec.Dir == old.Dir {
		return nil
	}
	e := r.e
	if err := workdir.CheckInside(e.Dir, rec.Dir); err != nil {
		return err
	}
	if err := makeDir(e.Dir, rec.Dir); err != nil {
		return err
	}
	for i := range rec.Outputs {
		o := &rec.Outputs[i]
		if o.Path == "" {
			continue
		}
		dst := filepath.ToSlash(filepath.Join(rec.Dir, filepath.Base(o.Path)))
		src := o.Path
		o.Path = dst
		if workdir.CheckFile(e.Dir, *o) == workdir.FileOK {
			continue
		}
		err := renameFile(e.Dir, src, dst)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("moving %s to %s: %w", src, dst, err)
		}
	}
	return nil
}

// refreshStats records the size and mtime of outputs whose bytes match the
// record, so the next plan does not hash them again.
func (r *applyRun) refreshStats(rec *statefile.Resource) error {
	for i := range rec.Outputs {
		o := &rec.Outputs[i]
		if o.SHA256 == "" || o.Path == "" {
			continue
		}
		fi, err := os.Stat(filepath.Join(r.e.Dir, filepath.FromSlash(o.Path)))
		if err != nil || fi.Size() == o.Size && fi.ModTime().Equal(o.ModTime) {
			continue
		}
		// Only a file holding the recorded bytes gives its stats: one
		// changed on disk whose fetch failed would otherwise pass, by
		// its size and time, for the recorded file from then on.
		if workdir.CheckFile(r.e.Dir, *o) != workdir.FileOK {
			continue
		}
		o.Size = fi.Size()
		o.ModTime = fi.ModTime()
	}
	return nil
}

// statOutput records the size and modification time of o's file, as it
// is on disk; a file that is not there leaves the record as it was.
func (r *applyRun) statOutput(o *statefile.Output) {
	fi, err := os.Stat(filepath.Join(r.e.Dir, filepath.FromSlash(o.Path)))
	if err != nil {
		return
	}
	o.Size = fi.Size()
	o.ModTime = fi.ModTime()
}

// move records a rename: the state and the files follow the new address.
func (r *applyRun) move(c *plans.Change) {
	e := r.e
	old, err := e.Store.Resource(c.PrevAddr)
	if err != nil || old == nil {
		r.fail(c, fmt.Errorf("moving %s to %s: %s is no longer in the state; run plan again", c.PrevAddr, c.Addr, c.PrevAddr))
		return
	}
	rec := *old
	rec.Outputs = append([]statefile.Output(nil), old.Outputs...)
	rec.Addr = c.Addr
	if c.Dir != "" {
		rec.Dir = c.Dir
	}
	if err := r.relocate(&rec, old); err != nil {
		r.fail(c, err)
		return
	}
	if err := r.refreshStats(&rec); err != nil {
		r.fail(c, err)
		return
	}
	rec.UpdatedAt = nowUTC()
	err = e.Store.Update(func(tx *statefile.Tx) error {
		if err := tx.Move(c.PrevAddr, &rec); err != nil {
			return err
		}
		// The renamed block's own prevent_destroy, not the old one's.
		if r := e.Config.Resource(c.Addr.Resource); r != nil {
			return tx.Protect(c.Addr, r.PreventDestroy)
		}
		return nil
	})
	if err != nil {
		r.fail(c, fmt.Errorf("recording the move of %s to %s: %w", c.PrevAddr, c.Addr, err))
		return
	}
	if old.Dir != rec.Dir {
		pruneDirs(e.Dir, old.Dir, e.Config.Settings.OutputDir)
	}
	r.noteMoved(c)
	r.record(&r.res.Moved, c.Addr)
	r.emit(Event{Addr: c.Addr, Action: plans.Move, Phase: PhaseDone, PrevAddr: c.PrevAddr, Files: len(rec.Outputs), Dir: rec.Dir})
}

// moveAhead moves the record of a change that does more than move (a
// replacement, an update, a restore of an instance a moved block moves)
// from c.PrevAddr to its address, before the change is carried out there.
// Its files stay where they are: the change itself moves, replaces or
// fetches them, and if it fails the state names them where they are, at
// the new address, so the next plan is the same change without the move.
// A move that cannot be made leaves the change undone.
func (r *applyRun) moveAhead(c *plans.Change) {
	e := r.e
	old, err := e.Store.Resource(c.PrevAddr)
	if err == nil && old == nil {
		err = fmt.Errorf("%s is no longer in the state; run plan again", c.PrevAddr)
	}
	if err == nil {
		rec := *old
		rec.Outputs = append([]statefile.Output(nil), old.Outputs...)
		rec.Addr = c.Addr
		err = e.Store.Update(func(tx *statefile.Tx) error { return tx.Move(c.PrevAddr, &rec) })
	}
	if err != nil {
		if r.unmoved == nil {
			r.unmoved = map[addrs.Instance]bool{}
		}
		r.unmoved[c.Addr] = true
		r.fail(c, fmt.Errorf("moving %s to %s before its %s: %w", c.PrevAddr, c.Addr, c.Action, err))
		return
	}
	r.noteMoved(c)
}

// noteMoved notes that c's record moved from c.PrevAddr, for moveHistory.
func (r *applyRun) noteMoved(c *plans.Change) {
	if r.moved == nil {
		r.moved = map[addrs.Instance]addrs.Instance{}
	}
	r.moved[c.PrevAddr] = c.Addr
}

// moveHistory files the history of the records moved under their new
// addresses, in one walk of the history. The moves stand if it fails:
// the entries then name the old address, which is only what history
// shows.
func (r *applyRun) moveHistory() {
	if len(r.moved) == 0 {
		return
	}
	if err := r.e.Store.Update(func(tx *statefile.Tx) error { return tx.MoveHistory(r.moved) }); err != nil {
		old := addrs.SortedKeys(r.moved)[0]
		r.emit(Event{Addr: r.moved[old], Phase: PhaseWarning, Err: fmt.Errorf("the history of %s (and of any other instance moved) could not be filed under its new address, and still names the old one: %w", old, err)})
	}
}

// delete removes an instance's files and forgets it. The creation stays on
// the service, which has no delete.
func (r *applyRun) delete(c *plans.Change) {
	e := r.e
	// A forgotten submission's job is followed and kept first.
	if err := r.keepJob(c.Addr, c.Dir, r.interruptedJob(c.Addr, c.Reason)); err != nil {
		r.fail(c, err)
		return
	}
	rec, err := e.Store.Resource(c.Addr)
	if err != nil {
		r.fail(c, err)
		return
	}
	if rec != nil {
		if err := workdir.CheckInside(e.Dir, rec.Dir); err != nil {
			r.fail(c, err)
			return
		}
		r.keepFiles(rec)
		for _, o := range rec.Outputs {
			if o.Path == "" {
				continue
			}
			if err := removeFile(e.Dir, o.Path); err != nil {
				r.fail(c, fmt.Errorf("removing %s: %w", o.Path, err))
				return
			}
		}
		pruneDirs(e.Dir, rec.Dir, e.Config.Settings.OutputDir)
	}
	err = e.Store.Update(func(tx *statefile.Tx) error {
		_, err := tx.Forget(c.Addr)
		return err
	})
	if err != nil {
		r.fail(c, fmt.Errorf("forgetting %s: %w", c.Addr, err))
		return
	}
	r.record(&r.res.Deleted, c.Addr)
	r.emit(Event{Addr: c.Addr, Action: plans.Delete, Phase: PhaseDone})
}
