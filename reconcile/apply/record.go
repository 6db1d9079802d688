package apply

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"time"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// This file holds what a finished job leaves: its outputs downloaded and
// its record committed to the state, the previous generation's stale
// files removed, and, when the state cannot be written, the jobs paid for
// that it does not hold.

// finish waits for a submitted job, downloads its outputs and records it.
// release frees the job's generation slot once the service is done with it.
//
// idKept says whether the state holds the job's id (as an intent): when
// recording the result fails too, a job whose id is kept is resumed by the
// next apply, and one whose id is not must be adopted with genform import.
//
// answer is the result the answer to the create request carried, when
// this process sent it and it carried one (Job.Answer); the intent's
// Answer is what the state recorded of it, which a later apply finishes
// the instance from: neither is polled or fetched again.
func (r *applyRun) finish(ctx context.Context, inst *config.Instance, c *plans.Change, intent *statefile.Intent, idKept bool, release func(), answer *provider.Result) error {
	e := r.e
	id := intent.GenerationID
	// A job whose id the state does not hold is reported as unrecorded
	// unless its result is recorded, however finish ends (a failed poll,
	// an interrupt, a detail that cannot be read): nothing else knows it
	// was paid for.
	noted := false
	if !idKept {
		defer func() {
			if !noted {
				r.unrecorded(inst.Addr, id, false)
			}
		}()
	}
	job := jobOf(intent, inst.Resource.Kind)
	if answer == nil && intent.Answer != nil {
		answer = answered(intent.Answer)
	}
	var st provider.Status
	if answer != nil {
		// The answer was the job's end: there is nothing to wait for.
		release()
		st = provider.Status{Raw: plans.StatusSucceed, State: provider.Done, Known: true, Progress: 1}
	} else {
		r.setRunning(inst.Addr, id)
		var err error
		st, err = r.poll(ctx, intent.Endpoint, inst.Addr, c.Action, job, intent.SubmittedAt)
		release()
		if err != nil {
			if r.ctx.Err() != nil {
				return context.Canceled
			}
			return r.waitedForState(ctx, err)
		}
		r.setRunning(inst.Addr, "")
	}
	old, err := e.Store.Resource(inst.Addr)
	if errors.Is(err, statefile.ErrUnavailable) {
		// The state's database stopped answering, or its connection
		// ended: nothing can be recorded, and going on to the service
		// with what is left of the generation's time would blame it for
		// the wait. The job is left for the next apply to resume.
		r.stateFailed(err)
		noted = true
		r.unrecorded(inst.Addr, id, idKept)
		return fmt.Errorf("reading the state before recording %s (job %s): %w", inst.Addr, id, err)
	}
	if err != nil {
		// The job is paid for whatever the state says: go on, and let
		// recording it say whether the state can be written.
		r.emit(Event{Addr: inst.Addr, Action: c.Action, Phase: PhaseWarning, GenerationID: id,
			Err: fmt.Errorf("reading the previous record: %w; its files are not removed", err)})
		old = nil
	}
	now := time.Now().UTC()
	rec := &statefile.Resource{
		Addr:          inst.Addr,
		Endpoint:      intent.Endpoint,
		Fingerprint:   intent.Fingerprint,
		Request:       intent.Request,
		GenerationID:  id,
		CreationID:    id,
		Handle:        intent.Handle,
		Status:        st.Raw,
		Dir:           inst.Dir,
		WatermarkFree: inst.WatermarkFree,
		Deps:          inst.Resource.Refs,
		CreatedAt:     now,
		UpdatedAt:     now,
	}
	if st.State == provider.Failed {
		failed := "the service reported the generation failed"
		if st.Reason != "" {
			failed = st.Reason
		}
		if old != nil && old.Status == plans.StatusSucceed {
			// The record keeps the last good generation, its request,
			// files and hashes; the failure is kept beside it. Declaring
			// the old request again is then a no-op, and the failed one
			// again a retry (a refused one is never sent again).
			kept := *old
			kept.Failure = &statefile.Failure{Endpoint: intent.Endpoint, Fingerprint: intent.Fingerprint,
				Request: intent.Request, GenerationID: id, Error: failed, Refused: st.Refused, At: now}
			rec = &kept
		} else {
			rec.Status = plans.StatusFailed
			if st.Refused {
				rec.Status = plans.StatusRefused
			}
			rec.Error = failed
		}
		if err := r.commit(func(tx *statefile.Tx) error {
			if err := r.setService(tx, intent.Endpoint); err != nil {
				return err
			}
			return tx.Record(rec)
		}); err != nil {
			noted = true
			r.unrecorded(inst.Addr, id, idKept)
			return fmt.Errorf("recording the failure of %s (job %s): %w", inst.Addr, id, err)
		}
		noted = true
		if st.Refused {
			return fmt.Errorf("the provider refused generation %s of %s for its content: %s; genform does not send this request again: change it (the prompt, or the input) and apply again", id, inst.Addr, failed)
		}
		if st.Reason != "" {
			return fmt.Errorf("generation %s of %s failed on the service: %s; fix the request (or retry) and apply again", id, inst.Addr, st.Reason)
		}
		return fmt.Errorf("generation %s of %s failed on the service; fix the request (or retry) and apply again", id, inst.Addr)
	}

	det := answer
	if det == nil {
		p, err := r.providerFor(intent.Endpoint)
		if err != nil {
			return err
		}
		if det, err = p.Result(ctx, job); err != nil {
			return r.waitedForState(ctx, fmt.Errorf("fetching the detail of %s (job %s): %w; rerun apply to resume", inst.Addr, id, r.timedOut(ctx, err)))
		}
	}
	rec.Detail = det.Detail
	rec.Version, rec.Usage = det.Version, det.Usage
	rec.Status = plans.StatusSucceed
	rec.Outputs = outputsOf(det)
	// What the state recorded of an answer says where each inline
	// output's bytes are (the cache) and where they go: the files are
	// written from there.
	var kept []int // the outputs whose bytes the cache holds
	if a := intent.Answer; a != nil && len(a.Outputs) == len(rec.Outputs) {
		rec.Outputs = append([]statefile.Output(nil), a.Outputs...)
		for i := range rec.Outputs {
			if o := &rec.Outputs[i]; o.SHA256 != "" && o.Path != "" {
				o.Path = path.Join(inst.Dir, path.Base(o.Path))
				kept = append(kept, o.Index)
			}
		}
	}
	if len(rec.Outputs) == 0 {
		return fmt.Errorf("the service reported %s (job %s) succeeded but listed no outputs", inst.Addr, id)
	}
	// Outputs beyond what the request asked for may have been charged
	// for all the same: they are kept, with a warning. Only a number no
	// request can make is cut, so that a service listing thousands
	// cannot fill the disk.
	if want := plans.MediaCount(inst); len(rec.Outputs) > want {
		most := max(want, mostOutputs(intent.Endpoint))
		if len(rec.Outputs) <= most {
			r.emit(Event{Addr: inst.Addr, Action: c.Action, Phase: PhaseWarning, GenerationID: id,
				Err: fmt.Errorf("job %s lists %d outputs, but %d %s asked for; all %d are downloaded and recorded, since the provider may have charged for each", id, len(rec.Outputs), want, wasWere(want), len(rec.Outputs))})
		} else {
			r.emit(Event{Addr: inst.Addr, Action: c.Action, Phase: PhaseWarning, GenerationID: id,
				Err: fmt.Errorf("job %s lists %d outputs, but %d %s asked for and no request makes more than %d; only the first %d %s downloaded", id, len(rec.Outputs), want, wasWere(want), most, most, wasWere(most))})
			rec.Outputs = rec.Outputs[:most]
		}
	}
	r.emit(Event{Addr: inst.Addr, Action: c.Action, Phase: PhaseDownloading, GenerationID: id})
	// The files about to be overwritten or removed stay restorable:
	// the record's own, and any other the new ones are written over.
	r.keepFiles(old)
	which := map[int]bool{}
	indexes := make([]int, 0, len(rec.Outputs))
	for _, o := range rec.Outputs {
		which[o.Index] = true
		indexes = append(indexes, o.Index)
	}
	r.keepStrangers(inst.Addr, inst.Dir, indexes, old)
	var dlErr error
	if len(kept) > 0 {
		// An output the cache turns out not to hold is written from the
		// answer in memory, when this process has it; otherwise the next
		// plan finds it missing, and says what can be done.
		fromCache := map[int]bool{}
		for _, i := range kept {
			fromCache[i] = true
		}
		dlErr = r.fetchCached(rec, fromCache)
		for i := range rec.Outputs {
			if o := &rec.Outputs[i]; which[o.Index] && slices.Contains(kept, o.Index) && !fromCache[o.Index] {
				delete(which, o.Index)
				r.statOutput(o)
			}
		}
	}
	if len(which) > 0 {
		dlErr = errors.Join(dlErr, r.downloadAll(ctx, rec, which, det))
	}
	// The generation is paid for and done: record it whatever the
	// downloads did, so a failed download is retried, never regenerated.
	if err := r.commit(func(tx *statefile.Tx) error {
		if err := r.setService(tx, intent.Endpoint); err != nil {
			return err
		}
		if err := tx.Record(rec); err != nil {
			return err
		}
		return tx.Protect(inst.Addr, inst.Resource.PreventDestroy)
	}); err != nil {
		noted = true
		r.unrecorded(inst.Addr, id, idKept)
		return fmt.Errorf("recording %s (job %s): %w", inst.Addr, id, err)
	}
	noted = true
	if old != nil {
		r.removeStale(old, rec)
	}
	r.upload(inst.Addr, rec)
	if dlErr != nil {
		return fmt.Errorf("%w; the generation is recorded, rerun apply to download again (nothing is regenerated)", dlErr)
	}
	r.emit(Event{Addr: inst.Addr, Action: c.Action, Phase: PhaseDone, GenerationID: id, Files: len(rec.Outputs), Dir: rec.Dir})
	return nil
}

// outputsOf lists the files a result offers, as the state records them
// before they are downloaded.
func outputsOf(res *provider.Result) []statefile.Output {
	if len(res.Outputs) == 0 {
		return nil
	}
	outs := make([]statefile.Output, 0, len(res.Outputs))
	for _, o := range res.Outputs {
		outs = append(outs, statefile.Output{Index: o.Index, ID: o.ID, MediaURL: o.URL, ThumbnailURL: o.ThumbnailURL})
	}
	return outs
}

// jobOf is the job an intent records, making kind.
func jobOf(it *statefile.Intent, kind addrs.Kind) provider.Job {
	return provider.Job{ID: it.GenerationID, Kind: kind, Target: it.Endpoint.Target(), Handle: it.Handle}
}

func wasWere(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

// removeStale deletes files of the previous generation that the new one
// did not overwrite.
func (r *applyRun) removeStale(old, cur *statefile.Resource) {
	keep := map[string]bool{}
	for _, o := range cur.Outputs {
		keep[o.Path] = true
	}
	for _, o := range old.Outputs {
		if o.Path != "" && !keep[o.Path] {
			if err := removeFile(r.e.Dir, o.Path); err != nil {
				r.emit(Event{Addr: cur.Addr, Phase: PhaseWarning, Err: fmt.Errorf("removing %s, a file of the previous generation: %w", o.Path, err)})
			}
		}
	}
	if old.Dir != cur.Dir {
		pruneDirs(r.e.Dir, old.Dir, r.e.Config.Settings.OutputDir)
	}
}

// waitedForState is err, a generation's failure, unless its time ran out
// while the state's storage could not be reached (a database that stopped
// answering): then the time went waiting for the state, not for the
// service, and the state's error is the one to report.
func (r *applyRun) waitedForState(ctx context.Context, err error) error {
	r.mu.Lock()
	serr := r.stateErr
	r.mu.Unlock()
	if context.Cause(ctx) != errGenerationTimeout || !errors.Is(serr, statefile.ErrUnavailable) {
		return err
	}
	timeout, _ := ctx.Value(timeoutKey{}).(time.Duration)
	return fmt.Errorf("the state could not be reached, and the service timeout (%s) passed while genform waited for it: %w", timeout, serr)
}

// errStateUnwritable is wrapped by the refusal to submit once the state
// could not be written.
var errStateUnwritable = errors.New("the state cannot be written, so nothing more is submitted")

// stateFailed records that a write to the state failed.
func (r *applyRun) stateFailed(err error) {
	r.mu.Lock()
	if r.stateErr == nil {
		r.stateErr = err
	}
	r.mu.Unlock()
}

// commit writes a step of a paid job (its id, its record) to the state. A
// write that fails is tried again a few times over two seconds, since a
// full disk may be freed; if it still fails, nothing more is submitted.
func (r *applyRun) commit(fn func(tx *statefile.Tx) error) error {
	var err error
	for _, wait := range commitWaits {
		time.Sleep(wait)
		if err = r.e.Store.Batch(fn); err == nil {
			return nil
		}
	}
	r.stateFailed(err)
	return err
}

// commitWaits are the waits before each try of commit: two seconds in
// all (a variable so that tests wait less).
var commitWaits = []time.Duration{0, 100 * time.Millisecond, 500 * time.Millisecond, 1500 * time.Millisecond}

// unrecorded notes a paid job whose result the state does not hold.
func (r *applyRun) unrecorded(addr addrs.Instance, id string, idKept bool) {
	r.mu.Lock()
	if idKept {
		r.res.Unfinished = append(r.res.Unfinished, Job{Addr: addr, GenerationID: id})
	} else {
		r.res.Unrecorded = append(r.res.Unrecorded, Job{Addr: addr, GenerationID: id})
	}
	r.mu.Unlock()
}
