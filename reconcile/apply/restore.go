package apply

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/cache"
	"github.com/genform/genform/internal/catalog"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/workdir"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// This file holds what the history gives back: keeping the files a change
// removes or overwrites in the local cache, and the restore action, which
// takes a generation the history holds back for an instance, from the
// cache or, failing that, from the service by creation id. Neither costs a
// generation.

// cacheFor returns the apply's cache, or nil with a warning when its
// directory cannot be used (a symbolic link out of the working directory).
func (r *applyRun) cacheFor() *cache.Cache {
	r.cacheOnce.Do(func() {
		e := r.e
		if err := workdir.CheckInside(e.Dir, e.Config.Settings.CacheDir); err != nil {
			r.emit(Event{Phase: PhaseWarning, Err: fmt.Errorf("the cache is not used: %w", err)})
			return
		}
		r.cache = workdir.CacheOf(e.Config, e.Dir)
	})
	return r.cache
}

// keepFiles puts the files of rec's generation in the cache before a
// change removes or overwrites them, so a later restore costs nothing. A
// file that cannot be kept is a warning: the history still knows the
// generation, and its files can be downloaded again by creation id.
func (r *applyRun) keepFiles(rec *statefile.Resource) {
	if rec == nil || rec.Status != plans.StatusSucceed {
		return
	}
	c := r.cacheFor()
	if c == nil {
		return
	}
	if err := workdir.CheckInside(r.e.Dir, rec.Dir); err != nil {
		return
	}
	for _, o := range rec.Outputs {
		if o.Path == "" || o.SHA256 == "" {
			continue
		}
		if _, err := c.Keep(filepath.Join(r.e.Dir, filepath.FromSlash(o.Path)), o.SHA256, o.Size, o.ModTime); err != nil {
			r.emit(Event{Addr: rec.Addr, Phase: PhaseWarning,
				Err: fmt.Errorf("keeping %s in the cache: %w; restoring it later downloads it again", o.Path, err)})
		}
	}
}

// keepStrangers puts in the cache the files of dir named as the outputs
// of indexes are (N, or N with an extension) that rec, the instance's
// record, does not hold: files another workspace's apply wrote in this
// working copy, or the user's own. Writing an output over one of them
// then loses no bytes anyone paid for: the workspace that recorded them
// restores them from the cache at no cost. A file that cannot be kept is
// a warning.
func (r *applyRun) keepStrangers(addr addrs.Instance, dir string, indexes []int, rec *statefile.Resource) {
	if len(indexes) == 0 || workdir.CheckInside(r.e.Dir, dir) != nil {
		return
	}
	abs := filepath.Join(r.e.Dir, filepath.FromSlash(dir))
	entries, err := os.ReadDir(abs)
	if err != nil {
		return
	}
	held := map[string]statefile.Output{}
	if rec != nil {
		for _, o := range rec.Outputs {
			held[o.Path] = o
		}
	}
	for _, de := range entries {
		name := de.Name()
		if !de.Type().IsRegular() || !slices.ContainsFunc(indexes, func(i int) bool {
			n := strconv.Itoa(i)
			return name == n || strings.HasPrefix(name, n+".")
		}) {
			continue
		}
		fi, err := de.Info()
		if err != nil {
			continue
		}
		file := filepath.Join(abs, name)
		if o, ok := held[path.Join(dir, name)]; ok && o.Size == fi.Size() && o.ModTime.Equal(fi.ModTime()) {
			continue // the record's own: keepFiles keeps it
		}
		c := r.cacheFor()
		if c == nil {
			return
		}
		sha, err := cache.HashFile(file)
		if err == nil {
			_, err = c.Keep(file, sha, fi.Size(), fi.ModTime())
		}
		if err != nil {
			r.emit(Event{Addr: addr, Phase: PhaseWarning,
				Err: fmt.Errorf("keeping %s, which this apply writes over, in the cache: %w", path.Join(dir, name), err)})
		}
	}
}

// pruneCache brings the cache down to its budget after an apply.
func (r *applyRun) pruneCache() {
	if r.cache == nil {
		return
	}
	// What the state still needs stays, whatever the budget.
	keep := &pins{store: r.e.Store, dir: r.e.Dir}
	if _, err := r.cache.Prune(r.e.Config.Settings.CacheMaxSize, keep.pinned); err != nil {
		r.emit(Event{Phase: PhaseWarning, Err: err})
	}
}

// restore takes back the generation the plan found in the history for
// inst. Every file is first put beside its final name and checked against
// its recorded sha256; only when all are there are they renamed into
// place and the instance recorded, so a restore that fails changes
// neither the files nor the state.
func (r *applyRun) restore(inst *config.Instance, c *plans.Change) error {
	e := r.e
	if err := workdir.CheckInside(e.Dir, inst.Dir); err != nil {
		return err
	}
	entry, err := e.Store.Generation(c.Fingerprint, c.GenerationID)
	if err == nil && entry == nil && e.Elsewhere != nil {
		entry, err = e.Elsewhere.Generation(c.Fingerprint, c.GenerationID)
	}
	if err != nil {
		return err
	}
	if entry == nil {
		return fmt.Errorf("the history no longer holds generation %s for %s; run plan again", c.GenerationID, inst.Addr)
	}
	// What is fetched again from the service is bounded as a generation
	// is.
	ctx, cancel := r.generation(inst.Addr, entry.Endpoint)
	defer cancel()
	if fp := inst.Fingerprint(e.ServiceID); inst.Request == nil || fp != c.Fingerprint {
		return fmt.Errorf("the request of %s is no longer the one the plan showed; nothing was restored: run plan again", inst.Addr)
	}
	old, err := e.Store.Resource(inst.Addr)
	if err != nil {
		return err
	}
	r.emit(Event{Addr: inst.Addr, Action: plans.Restore, Phase: PhaseDownloading, GenerationID: entry.GenerationID})

	// The directory is made, and the files later renamed, through the
	// working directory's root: a folder swapped for a link to somewhere
	// else since the check above is refused, not followed.
	if err := makeDir(e.Dir, inst.Dir); err != nil {
		return fmt.Errorf("restoring %s: %w", inst.Addr, err)
	}
	dir := filepath.Join(e.Dir, filepath.FromSlash(inst.Dir))
	rec := *entry
	rec.Addr, rec.Dir, rec.Deps, rec.Failure = inst.Addr, inst.Dir, inst.Resource.Refs, nil
	// The record's creation time is the instance's (Record keeps the one
	// it replaces); the history keeps the generation's.
	rec.CreatedAt, rec.UpdatedAt = time.Time{}, nowUTC()
	rec.Outputs = append([]statefile.Output(nil), entry.Outputs...)

	staged := make([]string, len(rec.Outputs))
	defer func() {
		for _, p := range staged {
			if p != "" {
				os.Remove(p)
			}
		}
	}()
	var fresh *provider.Result // the creation's detail, fetched once if the cache falls short
	c2 := r.cacheFor()
	for i := range rec.Outputs {
		o := &rec.Outputs[i]
		name := strconv.Itoa(o.Index) + path.Ext(o.Path)
		stage := filepath.Join(dir, ".restore-"+name)
		if c2 != nil {
			err := c2.Restore(o.SHA256, stage)
			if err == nil {
				staged[i] = stage
				o.Path = path.Join(inst.Dir, name)
				continue
			}
			if errors.Is(err, cache.ErrDamaged) {
				r.emit(Event{Addr: inst.Addr, Action: plans.Restore, Phase: PhaseWarning,
					Err: fmt.Errorf("the cached copy of output %d was changed (%v); downloading it again", o.Index, err)})
			} else if !errors.Is(err, cache.ErrMissing) {
				return fmt.Errorf("restoring output %d of %s from the cache: %w", o.Index, inst.Addr, err)
			}
		}
		// Evicted, changed (or never kept): the object store, when it
		// holds the bytes, costs the provider nothing.
		if ok, err := r.getStored(ctx, inst.Addr, o, stage, "it is downloaded again by creation id"); err != nil {
			return fmt.Errorf("restoring output %d of %s: %w; nothing was changed: remove that object from the store, and the next apply downloads the file from the provider", o.Index, inst.Addr, err)
		} else if ok {
			staged[i] = stage
			o.Path = path.Join(inst.Dir, name)
			continue
		}
		// The service gives fresh URLs for the creation, and no new
		// generation.
		p, err := r.providerFor(entry.Endpoint)
		if err != nil {
			return fmt.Errorf("restoring %s: the cache no longer holds output %d, and %v; nothing was changed: run plan again", inst.Addr, o.Index, err)
		}
		if fresh == nil {
			fresh, err = p.Result(ctx, provider.Job{ID: entry.CreationID, Kind: entry.Addr.Resource.Kind, Target: entry.Endpoint.Target(), Handle: entry.Handle})
			if err != nil {
				return fmt.Errorf("restoring %s: fetching creation %s: %w; nothing was changed", inst.Addr, entry.CreationID, r.timedOut(ctx, err))
			}
		}
		url, err := r.restoreURL(ctx, entry, fresh, o.Index)
		if err != nil {
			return fmt.Errorf("restoring %s: %w; nothing was changed", inst.Addr, err)
		}
		d, err := p.Download(ctx, url, dir, ".restore-"+strconv.Itoa(o.Index))
		if err != nil {
			return fmt.Errorf("restoring output %d of %s: %w; nothing was changed", o.Index, inst.Addr, r.timedOut(ctx, err))
		}
		staged[i] = d.Path
		if d.SHA256 != o.SHA256 {
			return fmt.Errorf("restoring %s: output %d downloaded again from creation %s has sha256 %s, not the recorded %s; nothing was changed (generate it anew with -replace=%s)",
				inst.Addr, o.Index, entry.CreationID, d.SHA256, o.SHA256, inst.Addr.Shell())
		}
		name = strconv.Itoa(o.Index) + filepath.Ext(d.Path)
		o.Path = path.Join(inst.Dir, name)
	}

	// Every file is here and checked: the files of the instance's
	// current generation go to the cache, and the restored ones into
	// place.
	r.keepFiles(old)
	indexes := make([]int, len(rec.Outputs))
	for i, o := range rec.Outputs {
		indexes[i] = o.Index
	}
	r.keepStrangers(inst.Addr, inst.Dir, indexes, old)
	for i := range rec.Outputs {
		o := &rec.Outputs[i]
		final := filepath.Join(e.Dir, filepath.FromSlash(o.Path))
		from := path.Join(inst.Dir, filepath.Base(staged[i]))
		if err := renameFile(e.Dir, from, o.Path); err != nil {
			return fmt.Errorf("restoring %s: %w", inst.Addr, err)
		}
		staged[i] = ""
		if fi, err := os.Stat(final); err == nil {
			o.Size, o.ModTime = fi.Size(), fi.ModTime()
		}
	}
	if err := e.Store.Batch(func(tx *statefile.Tx) error {
		if err := tx.Record(&rec); err != nil {
			return err
		}
		return tx.Protect(inst.Addr, inst.Resource.PreventDestroy)
	}); err != nil {
		return fmt.Errorf("recording %s: %w", inst.Addr, err)
	}
	if old != nil {
		r.removeStale(old, &rec)
	}
	r.upload(inst.Addr, &rec)
	// The history's files are the ones it was made with; a different
	// watermark_free wish is the update that fetches the other file.
	if rec.Addr.Resource.Kind == addrs.Video && rec.WatermarkFree != inst.WatermarkFree {
		if err := r.update(inst, &plans.Change{Addr: inst.Addr, Action: plans.Update}); err != nil {
			return err
		}
	}
	r.record(&r.res.Restored, inst.Addr)
	r.emit(Event{Addr: inst.Addr, Action: plans.Restore, Phase: PhaseDone, GenerationID: rec.GenerationID, Files: len(rec.Outputs), Dir: rec.Dir, Reason: c.Reason})
	return nil
}

// restoreURL is where output index of a creation is downloaded from again.
func (r *applyRun) restoreURL(ctx context.Context, entry *statefile.Resource, det *provider.Result, index int) (string, error) {
	outs := outputsOf(det)
	for _, o := range outs {
		if o.Index != index {
			continue
		}
		if entry.Addr.Resource.Kind == addrs.Video && entry.WatermarkFree {
			p, err := r.providerFor(entry.Endpoint)
			if err != nil {
				return "", err
			}
			w, err := watermarkFreeURL(ctx, p, entry.CreationID)
			if err != nil {
				return "", fmt.Errorf("getting the watermark-free URL of creation %s: %w", entry.CreationID, err)
			}
			return w, nil
		}
		return o.MediaURL, nil
	}
	return "", fmt.Errorf("creation %s no longer lists output %d", entry.CreationID, index)
}

// keepJob follows job it.GenerationID, which an interrupted apply
// submitted for a request no longer declared for addr (settled, abandoned
// or forgotten), to its end, and files it in the history with its files in
// the cache: it was paid for, and declaring its request again restores it
// at no cost. dir is where the instance's files would go. It takes a
// generation slot while it follows the job, as any job followed does.
//
// A job that cannot be followed to its end (an interrupt, the timeout, a
// service out of reach) returns an error: the change must stop and keep
// the intent, so that the next apply follows the job again rather than
// forget a paid generation. A job the service says it does not have, or
// whose files cannot be had, is a warning; import can still adopt it.
func (r *applyRun) keepJob(addr addrs.Instance, dir string, it *statefile.Intent) error {
	if it == nil || it.GenerationID == "" {
		return nil
	}
	if it.Answer != nil {
		return r.keepAnswered(addr, dir, it)
	}
	p, err := r.providerFor(it.Endpoint)
	if err != nil {
		return fmt.Errorf("job %s, left by an interrupted apply, was not followed (%w); its intent is kept for the next apply", it.GenerationID, err)
	}
	id := it.GenerationID
	warn := func(err error) {
		r.emit(Event{Addr: addr, Phase: PhaseWarning, GenerationID: id,
			Err: fmt.Errorf("job %s, left by an interrupted apply, is not kept in the history: %w", id, err)})
	}
	ctx, release, done, err := r.slot(addr, it.Endpoint)
	if err != nil {
		return fmt.Errorf("job %s, left by an interrupted apply, was not followed (%w); its intent is kept for the next apply", id, err)
	}
	defer done()
	st, err := r.poll(ctx, it.Endpoint, addr, plans.Update, jobOf(it, addr.Resource.Kind), it.SubmittedAt)
	if err != nil {
		// Only the service saying it has no such job lets it go: an
		// interrupt, the timeout or a failure to reach the service keeps
		// the intent, to follow the job again.
		if se, ok := errors.AsType[*provider.Error](err); ok && (se.HTTPStatus == 404 || se.HTTPStatus == 410) {
			warn(err)
			return nil
		}
		return fmt.Errorf("job %s, left by an interrupted apply, was not followed to its end (%w); its intent is kept, and the next apply follows it again", id, r.timedOut(ctx, err))
	}
	release()
	entry := &statefile.Resource{Addr: addr, Endpoint: it.Endpoint, Fingerprint: it.Fingerprint, Request: it.Request,
		GenerationID: id, CreationID: id, Handle: it.Handle, Status: st.Raw, Dir: dir}
	if st.State == provider.Failed {
		entry.Status, entry.Error = plans.StatusFailed, "the service reported the generation failed"
	} else {
		det, err := p.Result(ctx, jobOf(it, addr.Resource.Kind))
		if err != nil {
			warn(r.timedOut(ctx, err))
			return nil
		}
		entry.Detail, entry.Status = det.Detail, plans.StatusSucceed
		entry.Version, entry.Usage = det.Version, det.Usage
		entry.Outputs = outputsOf(det)
		// No request yields more than the endpoint's most outputs; what
		// a service lists beyond them is not fetched.
		if most := mostOutputs(it.Endpoint); len(entry.Outputs) > most {
			entry.Outputs = entry.Outputs[:most]
		}
		c := r.cacheFor()
		for i := range entry.Outputs {
			o := &entry.Outputs[i]
			if c == nil {
				break
			}
			if err := os.MkdirAll(c.Dir(), 0o700); err != nil {
				warn(err)
				return nil
			}
			d, err := p.Download(ctx, o.MediaURL, c.Dir(), fmt.Sprintf("tmp-%s-%d", id, o.Index))
			if err != nil {
				// Without its hash the output cannot be checked, so the
				// generation is kept, but not restorable.
				r.emit(Event{Addr: addr, Phase: PhaseWarning, GenerationID: id,
					Err: fmt.Errorf("downloading output %d of job %s into the cache: %w; the history keeps the job, without its files", o.Index, id, err)})
				continue
			}
			if err := c.Adopt(d.Path, d.SHA256); err != nil {
				warn(err)
				return nil
			}
			o.SHA256, o.Size, o.ContentType = d.SHA256, d.Size, d.ContentType
			o.Path = path.Join(dir, strconv.Itoa(o.Index)+filepath.Ext(d.Path))
			// The store keeps it too: the provider's link expires, and
			// a teammate's restore has no other place to get it.
			if cached, ok := c.Path(o.SHA256); ok && r.e.Blobs != nil {
				o.Stored = r.put(addr, id, o, cached)
			}
		}
	}
	if err := r.commit(func(tx *statefile.Tx) error { return tx.RecordHistory(entry) }); err != nil {
		warn(err)
		return nil
	}
	r.emit(Event{Addr: addr, Phase: PhaseWarning, GenerationID: id,
		Err: fmt.Errorf("job %s, left by an interrupted apply, ended %s and is kept in the history: declaring its request again restores it at no cost", id, entry.Status)})
	return nil
}

// interruptedJob is the intent at addr when the change leaves its job
// undeclared (Reason.KeptJob), read again from the state: nil otherwise.
func (r *applyRun) interruptedJob(addr addrs.Instance, why *plans.Reason) *statefile.Intent {
	id := why.KeptJob()
	if id == "" {
		return nil
	}
	it, err := r.e.Store.Intent(addr)
	if err != nil || it == nil || it.GenerationID != id {
		return nil
	}
	return it
}

// mostOutputs is the most outputs one request to ep yields: a listed
// model's (or endpoint's) most images, and for a model the tables do not
// list (whose input may ask for many with its own count fields)
// unlistedMostOutputs.
func mostOutputs(ep addrs.Endpoint) int {
	p := catalog.Lookup(ep.Provider())
	if p == nil {
		return 1
	}
	if !p.Listed(ep.Target()) {
		return unlistedMostOutputs
	}
	return int(p.Caps(ep.Target()).MostImages())
}

// unlistedMostOutputs bounds the files kept of one job of a model the
// tables do not list, beyond those its request asked for.
const unlistedMostOutputs = 64
