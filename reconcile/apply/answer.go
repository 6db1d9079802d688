package apply

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/cache"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/workdir"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// This file holds what an apply does with an answer that carried the
// finished job (OpenAI's images come inline in the answer to the create
// request, once, and the provider keeps no copy): the bytes go to the
// local cache and the answer into the state with the job's id, in one
// step, before anything else; the files are then written from the cache,
// by this apply or, when it dies or cannot write them, by the next one.

// keepAnswer puts the inline outputs of res, the result the answer to
// addr's create request carried, into the local cache, and returns the
// answer as the state records it. An output whose bytes are not media,
// or that the cache cannot take (a full disk, a cache folder that leads
// out of the working directory), is recorded without a hash, with a
// warning: this apply still writes it from memory, as before the cache
// kept answers, but a later one cannot.
func (r *applyRun) keepAnswer(addr addrs.Instance, dir string, res *provider.Result) *statefile.Answer {
	a := &statefile.Answer{Version: res.Version, Usage: res.Usage, Detail: res.Detail}
	c := r.cacheFor()
	for _, o := range res.Outputs {
		out := statefile.Output{Index: o.Index, ID: o.ID, MediaURL: o.URL, ThumbnailURL: o.ThumbnailURL}
		if o.Data != nil {
			if err := r.keepInline(c, dir, o, &out); err != nil {
				r.emit(Event{Addr: addr, Phase: PhaseWarning,
					Err: fmt.Errorf("keeping output %d of the answer in the cache: %w; it is written from memory, and an apply that ends before it is written cannot write it again", o.Index, err)})
			}
		}
		a.Outputs = append(a.Outputs, out)
	}
	return a
}

// keepInline puts the bytes of o into c and fills in what out records of
// them: their hash, size and type, and the path they are written to in
// dir.
func (r *applyRun) keepInline(c *cache.Cache, dir string, o provider.Output, out *statefile.Output) error {
	mt, ext, err := provider.InlineMedia(o.Data, o.MediaType)
	if err != nil {
		return err
	}
	if c == nil {
		return errors.New("the cache cannot be used")
	}
	sha, err := c.Put(o.Data)
	if err != nil {
		return err
	}
	out.SHA256, out.Size, out.ContentType = sha, int64(len(o.Data)), mt
	out.Path = path.Join(dir, strconv.Itoa(o.Index)+"."+ext)
	return nil
}

// keepAnswered files in the history the job of it, an intent an
// interrupted apply recorded with its answer, whose request is no longer
// the one declared: its inline outputs' bytes are in the cache already,
// so nothing is asked of the provider. Declaring its request again then
// restores it at no cost. An output the answer gave only a link to (or
// whose bytes the cache could not take) is kept without its hash, so the
// generation is kept but not restorable.
func (r *applyRun) keepAnswered(addr addrs.Instance, dir string, it *statefile.Intent) error {
	id := it.GenerationID
	entry := &statefile.Resource{Addr: addr, Endpoint: it.Endpoint, Fingerprint: it.Fingerprint, Request: it.Request,
		GenerationID: id, CreationID: id, Handle: it.Handle, Status: plans.StatusSucceed, Dir: dir,
		Version: it.Answer.Version, Usage: it.Answer.Usage, Detail: it.Answer.Detail,
		Outputs: append([]statefile.Output(nil), it.Answer.Outputs...)}
	c := r.cacheFor()
	for i := range entry.Outputs {
		o := &entry.Outputs[i]
		if o.SHA256 == "" || c == nil || !c.Has(o.SHA256) {
			o.SHA256, o.Path = "", ""
			continue
		}
		o.Path = path.Join(dir, path.Base(o.Path))
		// The store keeps it too, for a teammate's restore.
		if cached, ok := c.Path(o.SHA256); ok && r.e.Blobs != nil {
			o.Stored = r.put(addr, id, o, cached)
		}
	}
	if err := r.commit(func(tx *statefile.Tx) error { return tx.RecordHistory(entry) }); err != nil {
		r.emit(Event{Addr: addr, Phase: PhaseWarning, GenerationID: id,
			Err: fmt.Errorf("job %s, left by an interrupted apply, is not kept in the history: %w", id, err)})
		return nil
	}
	r.emit(Event{Addr: addr, Phase: PhaseWarning, GenerationID: id,
		Err: fmt.Errorf("job %s, left by an interrupted apply, ended %s and is kept in the history: declaring its request again restores it at no cost", id, entry.Status)})
	return nil
}

// answered is the result an answer recorded in the state stands for: its
// outputs' links, without their bytes, which the cache holds.
func answered(a *statefile.Answer) *provider.Result {
	res := &provider.Result{Version: a.Version, Usage: a.Usage, Detail: a.Detail}
	for _, o := range a.Outputs {
		res.Outputs = append(res.Outputs, provider.Output{Index: o.Index, ID: o.ID, URL: o.MediaURL, ThumbnailURL: o.ThumbnailURL})
	}
	return res
}

// fetchCached writes the outputs of rec in which (by index) whose
// recorded bytes the local cache holds into their recorded paths, each
// checked against its sha256, and removes from which those it wrote.
// Bytes the cache does not hold, or holds changed, are left in which for
// the store or the provider. It never asks a provider anything.
func (r *applyRun) fetchCached(rec *statefile.Resource, which map[int]bool) error {
	c := r.cacheFor()
	if c == nil {
		return nil
	}
	var errs []error
	for i := range rec.Outputs {
		o := &rec.Outputs[i]
		if !which[o.Index] || o.Path == "" || !c.Has(o.SHA256) {
			continue
		}
		dir := path.Dir(o.Path)
		if err := workdir.CheckInside(r.e.Dir, dir); err != nil {
			return err
		}
		if err := makeDir(r.e.Dir, dir); err != nil {
			errs = append(errs, fmt.Errorf("writing output %d of %s from the cache: %w", o.Index, rec.Addr, err))
			continue
		}
		err := c.Restore(o.SHA256, filepath.Join(r.e.Dir, filepath.FromSlash(o.Path)))
		switch {
		case err == nil:
			delete(which, o.Index)
		case errors.Is(err, cache.ErrDamaged), errors.Is(err, cache.ErrMissing):
			r.emit(Event{Addr: rec.Addr, Phase: PhaseWarning, Err: fmt.Errorf("the cached copy of output %d could not be used (%v); it is fetched from elsewhere", o.Index, err)})
		default:
			errs = append(errs, fmt.Errorf("writing output %d of %s from the cache: %w", o.Index, rec.Addr, err))
		}
	}
	return errors.Join(errs...)
}

// pins says which cache entries the state still needs: the bytes of a
// recorded output whose file is missing or changed (an answer's file
// that could not be written above all), and of an answer an interrupted
// apply recorded, which nothing else holds. It reads the state once, the
// first time it is asked, since pruning asks only when it would remove
// something.
type pins struct {
	store *statefile.Store
	dir   string // the working directory the outputs' paths are in
	once  sync.Once
	// outputs are the recorded outputs by sha256; answers the shas of
	// the recorded answers.
	outputs map[string][]statefile.Output
	answers map[string]bool
	err     error
}

func (p *pins) pinned(sha string) bool {
	p.once.Do(func() {
		p.outputs, p.answers = map[string][]statefile.Output{}, map[string]bool{}
		snap, err := p.store.PlanSnapshot()
		if err != nil {
			p.err = err
			return
		}
		for _, rec := range snap.Resources {
			for _, o := range rec.Outputs {
				p.outputs[o.SHA256] = append(p.outputs[o.SHA256], o)
			}
		}
		for _, it := range snap.Intents {
			if it.Answer != nil {
				for _, o := range it.Answer.Outputs {
					p.answers[o.SHA256] = true
				}
			}
		}
	})
	// A state that cannot be read pins everything: nothing is pruned
	// that it might need.
	if p.err != nil || p.answers[sha] {
		return true
	}
	for _, o := range p.outputs[sha] {
		if workdir.CheckFile(p.dir, o) != workdir.FileOK {
			return true
		}
	}
	return false
}
