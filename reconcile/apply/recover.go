package apply

import (
	"context"
	"fmt"
	"time"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// This file holds finding again a job whose create answer was lost, on a
// provider that can list its jobs (provider.Recoverer): the job is then
// followed as any other, and nothing is paid twice. A provider that
// cannot list leaves the create possibly paid, for the user to decide.

// recoverWaits are the waits before each look for a lost job: a
// provider's list may show a job only a moment after it was made.
var recoverWaits = []time.Duration{0, 2 * time.Second, 5 * time.Second}

// recoverJob looks on p for the job a create of it made, sent at
// it.CreatedAt and lost by until. It returns the job when the provider
// finds exactly one and the state knows it under no other address; a
// failure to look is a warning, and the create stays possibly paid.
func (r *applyRun) recoverJob(ctx context.Context, p provider.Provider, addr addrs.Instance, action plans.Action, it *statefile.Intent, until time.Time) (provider.Job, bool) {
	rec, ok := p.(provider.Recoverer)
	if g, isGuarded := p.(guarded); isGuarded {
		_, ok = g.Provider.(provider.Recoverer)
	}
	if !ok {
		return provider.Job{}, false
	}
	req := provider.Request{Kind: addr.Resource.Kind, Target: it.Endpoint.Target(), Body: it.Request}
	for _, wait := range recoverWaits {
		select {
		case <-ctx.Done():
			return provider.Job{}, false
		case <-time.After(wait):
		}
		job, found, err := rec.Recover(ctx, req, it.CreatedAt, until)
		if err != nil {
			r.emit(Event{Addr: addr, Action: action, Phase: PhaseWarning,
				Err: fmt.Errorf("looking for the job of the lost create request: %w", err)})
			return provider.Job{}, false
		}
		if !found {
			continue
		}
		if other, known := r.knownJob(it.Fingerprint, job.ID); known {
			r.emit(Event{Addr: addr, Action: action, Phase: PhaseWarning, GenerationID: job.ID,
				Err: fmt.Errorf("the only job matching the lost create request is %s, which the state already holds for %s; it is not taken", job.ID, other)})
			return provider.Job{}, false
		}
		return job, true
	}
	return provider.Job{}, false
}

// knownJob reports the address the state holds job id under, if any: a
// job recorded, in flight, or kept in the history of the request whose
// fingerprint is fp is never adopted again.
func (r *applyRun) knownJob(fp, id string) (addrs.Instance, bool) {
	snap, err := r.e.Store.Snapshot()
	if err != nil {
		// Unsure: take it as known, so nothing is adopted twice.
		return addrs.Instance{}, true
	}
	for addr, rec := range snap.Resources {
		if rec.GenerationID == id || rec.CreationID == id {
			return addr, true
		}
	}
	for addr, it := range snap.Intents {
		if it.GenerationID == id {
			return addr, true
		}
	}
	e, err := r.e.Store.Generation(fp, id)
	if err != nil {
		return addrs.Instance{}, true
	}
	if e != nil {
		return e.Addr, true
	}
	return addrs.Instance{}, false
}

// recoverEarlier looks for the job of a create an earlier apply sent for
// c without learning its outcome. When it is found, its id is recorded
// in the intent and the change becomes the resume of that job; otherwise
// c stays as the plan made it, possibly paid.
func (r *applyRun) recoverEarlier(c *plans.Change) *plans.Change {
	it, err := r.e.Store.Intent(c.Addr)
	if err != nil || it == nil || it.GenerationID != "" {
		return c
	}
	p, err := r.providerFor(it.Endpoint)
	if err != nil {
		return c
	}
	ctx, cancel := r.generation(c.Addr, it.Endpoint)
	defer cancel()
	// The create was sent with at most the two minutes a create request
	// is given (see generate), past the generation's timeout at worst.
	job, ok := r.recoverJob(ctx, p, c.Addr, c.Action, it, it.CreatedAt.Add(r.lane(it.Endpoint).lim.Timeout))
	if !ok {
		return c
	}
	found := *it
	found.GenerationID, found.Handle, found.SubmittedAt = job.ID, job.Handle, time.Now().UTC()
	if err := r.commit(func(tx *statefile.Tx) error { return tx.RecordIntent(&found) }); err != nil {
		return c
	}
	r.emit(Event{Addr: c.Addr, Action: c.Action, Phase: PhaseWarning, GenerationID: job.ID,
		Err: fmt.Errorf("the create request an earlier apply sent got no answer; its job %s was found by listing the provider's jobs and is followed now, paying nothing more", job.ID)})
	r.record(&r.res.Recovered, c.Addr)
	resume := *c
	resume.Action, resume.GenerationID, resume.Reason = plans.Resume, job.ID, &plans.Reason{Code: plans.ReasonInterrupted, GenerationID: job.ID}
	return &resume
}
