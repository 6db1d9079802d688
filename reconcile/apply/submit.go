package apply

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/catalog"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/workdir"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// This file holds the two ways a change gets a job on the service:
// submitting a new generation, write-ahead (generate), and taking back a
// job an interrupted apply submitted (resume); both within the
// generation slots that bound parallelism.

// acquire takes a generation slot of ep's provider and returns what frees
// it; it fails when the apply is interrupted, or when the state could not
// be written.
func (r *applyRun) acquire(ep addrs.Endpoint) (release func(), err error) {
	r.mu.Lock()
	serr := r.stateErr
	r.mu.Unlock()
	if serr != nil {
		return nil, fmt.Errorf("%w (%v)", errStateUnwritable, serr)
	}
	win := r.lane(ep).win
	if err := win.acquire(r.ctx); err != nil {
		return nil, err
	}
	// Calling release more than once releases once. A job stops counting
	// against parallelism as soon as the service reports it finished:
	// detail and downloads are local work and must not hold the next job
	// back.
	var once sync.Once
	return func() { once.Do(win.release) }, nil
}

// slot takes a generation slot of ep's provider for addr (acquire) and
// makes the generation's context (generation). release frees the slot
// early, once the provider reports the job finished; done ends the
// context and frees the slot if release has not.
func (r *applyRun) slot(addr addrs.Instance, ep addrs.Endpoint) (ctx context.Context, release, done func(), err error) {
	release, err = r.acquire(ep)
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := r.generation(addr, ep)
	return ctx, release, func() { cancel(); release() }, nil
}

// generate submits a new generation of inst, write-ahead: the intent is
// committed before the request leaves, the generation id as soon as it is
// known, and only then is the job polled.
func (r *applyRun) generate(inst *config.Instance, c *plans.Change) error {
	e := r.e
	if inst.Request == nil {
		return fmt.Errorf("the request of %s still depends on values that are not known; apply what it references first", inst.Addr)
	}
	// Refuse before paying for a generation whose files could not be kept.
	if err := workdir.CheckInside(e.Dir, inst.Dir); err != nil {
		return err
	}
	// An abandoned job is followed and kept before its intent is
	// replaced by the new one.
	if err := r.keepJob(inst.Addr, inst.Dir, r.interruptedJob(inst.Addr, c.Reason)); err != nil {
		return err
	}
	p, err := r.providerFor(inst.Endpoint)
	if err != nil {
		return fmt.Errorf("submitting %s: %w; nothing was submitted", inst.Addr, err)
	}
	// A cap reached stops new generations, not the jobs paid for.
	if err := r.capped(inst.Endpoint); err != nil {
		return err
	}
	ctx, release, done, err := r.slot(inst.Addr, inst.Endpoint)
	if err != nil {
		return err
	}
	defer done()
	if err := r.capped(inst.Endpoint); err != nil {
		return err
	}
	fp := inst.Fingerprint(e.ServiceID)
	// A saved plan is checked against the configuration's hash, but a file
	// read by file() or a value from env() can change without changing it:
	// never submit a request other than the one the plan showed.
	if c.Fingerprint != "" && c.Fingerprint != fp {
		return fmt.Errorf("the request of %s is no longer the one the plan showed (a file or environment value it reads changed); nothing was submitted: run plan again", inst.Addr)
	}
	intent := &statefile.Intent{
		Addr:        inst.Addr,
		Endpoint:    inst.Endpoint,
		Fingerprint: fp,
		Request:     inst.Request,
	}
	// The intent is recorded once the request is about to leave, after
	// its wait for the provider's request budget (a minute, on a provider
	// that allows a few creates a minute): a create still waiting when the
	// process dies, or when the apply is interrupted, was never sent, and
	// the next plan generates it as any other, with no warning that it
	// may have been paid for.
	recorded := false
	var recordErr error
	gate := &provider.CreateGate{
		// The first Ctrl-C and the generation's timeout end the wait.
		Waiting: ctx,
		Send: func() error {
			if recorded {
				return nil
			}
			if err := r.ctx.Err(); err != nil {
				return fmt.Errorf("%w: %w", provider.ErrNotSent, err)
			}
			intent.CreatedAt = time.Now().UTC()
			if err := e.Store.Batch(func(tx *statefile.Tx) error {
				// The state names the service it is made with, from its
				// first submission on, in the same transaction.
				if err := r.setService(tx, inst.Endpoint); err != nil {
					return err
				}
				return tx.RecordIntent(intent)
			}); err != nil {
				// Nothing is paid for yet; the next submissions would fail
				// alike.
				r.stateFailed(err)
				recordErr = fmt.Errorf("recording the intent to submit %s: %w; nothing was submitted", inst.Addr, err)
				return fmt.Errorf("%w: %w", provider.ErrNotSent, recordErr)
			}
			recorded = true
			return nil
		},
	}
	r.emit(Event{Addr: inst.Addr, Action: c.Action, Phase: PhaseSubmitting})

	// A create request already on the wire is allowed to finish after the
	// first Ctrl-C, so that its generation id is recorded rather than lost;
	// the generation's deadline still bounds it, and two minutes too but
	// on a provider that answers only once the work is done.
	deadline, _ := ctx.Deadline()
	if most := time.Now().Add(2 * time.Minute); most.Before(deadline) && !synchronous(inst.Endpoint) {
		deadline = most
	}
	cctx, ccancel := context.WithDeadlineCause(context.WithoutCancel(ctx), deadline, errGenerationTimeout)
	cctx = provider.WithCreateGate(cctx, gate)
	job, err := p.Submit(cctx, provider.Request{Kind: inst.Resource.Kind, Target: inst.Endpoint.Target(), Body: inst.Request})
	id := job.ID
	if context.Cause(cctx) == errGenerationTimeout && err != nil {
		err = fmt.Errorf("%w (no answer within %s, the service timeout)", err, r.lane(inst.Endpoint).lim.Timeout)
	}
	ccancel()
	answered := time.Now()
	if err == nil {
		r.lane(inst.Endpoint).win.ok()
	}
	if err != nil && provider.IsPossiblyPaid(err) {
		// A provider that lists its jobs may find it again.
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		if found, ok := r.recoverJob(rctx, p, inst.Addr, c.Action, intent, time.Now()); ok {
			r.emit(Event{Addr: inst.Addr, Action: c.Action, Phase: PhaseWarning, GenerationID: found.ID,
				Err: fmt.Errorf("the answer to the create request was lost (%v); its job %s was found by listing the provider's jobs, and is followed, paying nothing more", err, found.ID)})
			r.record(&r.res.Recovered, inst.Addr)
			job, id, err = found, found.ID, nil
		}
		rcancel()
	}
	if err != nil && errors.Is(err, provider.ErrNotSent) {
		// Stopped before it left: nothing was made or paid for.
		if recorded {
			// A 429 answered an attempt, then the wait for the next
			// ended.
			if derr := e.Store.Batch(func(tx *statefile.Tx) error { return tx.ClearIntent(inst.Addr) }); derr != nil {
				return fmt.Errorf("submitting %s: %w (and clearing its intent: %v)", inst.Addr, err, derr)
			}
		}
		switch {
		case recordErr != nil:
			return recordErr
		case r.ctx.Err() != nil:
			return context.Canceled
		}
		return fmt.Errorf("%s was not submitted: %w; nothing was paid for", inst.Addr, r.timedOut(ctx, err))
	}
	if err != nil {
		if errors.Is(err, provider.ErrPossiblyPaid) {
			// The job may exist, and be paid for: the intent stays, and
			// nothing is sent for it again until the user decides. It
			// counts as spent.
			if serr := r.commit(func(tx *statefile.Tx) error { return r.spend(tx, c) }); serr != nil {
				r.emit(Event{Addr: inst.Addr, Action: c.Action, Phase: PhaseWarning, Err: fmt.Errorf("recording what %s may have cost: %w", inst.Addr, serr)})
			}
			r.possiblyPaid(inst.Addr, inst.Endpoint.Provider(), intent.CreatedAt, err)
			return fmt.Errorf("submitting %s: %w; the service may have made, and charged for, the job, so genform keeps the intent and sends nothing more for it", inst.Addr, err)
		}
		if recorded {
			if derr := e.Store.Batch(func(tx *statefile.Tx) error { return tx.ClearIntent(inst.Addr) }); derr != nil {
				return fmt.Errorf("submitting %s: %w (and clearing its intent: %v)", inst.Addr, err, derr)
			}
		}
		if _, answered := errors.AsType[*provider.Error](err); answered {
			return fmt.Errorf("the service refused %s: %w", inst.Addr, err)
		}
		// No answer, and the client knows the request was not sent (a
		// connection refused, a name not found): not a refusal.
		return fmt.Errorf("could not submit %s: %w; the request did not reach the service, so nothing was paid for", inst.Addr, err)
	}
	intent.GenerationID = id
	intent.Handle = job.Handle
	intent.SubmittedAt = answered.UTC()
	if job.Answer != nil {
		// The answer is the job's result, and the provider keeps no
		// copy: its bytes go to the cache, and the answer is recorded
		// with the id, before anything else.
		intent.Answer = r.keepAnswer(inst.Addr, inst.Dir, job.Answer)
	}
	idKept := true
	if err := r.commit(func(tx *statefile.Tx) error {
		if err := tx.RecordIntent(intent); err != nil {
			return err
		}
		return r.spend(tx, c)
	}); err != nil {
		// The job is paid for: its id is kept here and the job followed
		// to the end, where recording it is tried again.
		idKept = false
		r.emit(Event{Addr: inst.Addr, Action: c.Action, Phase: PhaseWarning, GenerationID: id,
			Err: fmt.Errorf("recording job %s in the state: %w; the job is followed, and its id kept until it can be recorded", id, err)})
	}
	r.emit(Event{Addr: inst.Addr, Action: c.Action, Phase: PhaseSubmitted, GenerationID: id})
	if err := r.finish(ctx, inst, c, intent, idKept, release, job.Answer); err != nil {
		return err
	}
	r.record(&r.res.Generated, inst.Addr)
	if c.Action == plans.Replace {
		r.record(&r.res.Replaced, inst.Addr)
	}
	return nil
}

// resume polls a job an earlier apply submitted.
func (r *applyRun) resume(inst *config.Instance, c *plans.Change) error {
	e := r.e
	ctx, release, done, err := r.slot(inst.Addr, inst.Endpoint)
	if err != nil {
		return err
	}
	defer done()
	var intent *statefile.Intent
	err = e.Store.Update(func(tx *statefile.Tx) error {
		var err error
		intent, err = tx.Intent(inst.Addr)
		return err
	})
	if err != nil {
		return fmt.Errorf("reading the intent of %s: %w", inst.Addr, err)
	}
	if intent == nil || intent.GenerationID == "" {
		return fmt.Errorf("%s has no recorded job to resume; run plan again", inst.Addr)
	}
	// A job is resumed only for the request it was submitted for: a
	// request the plan could not know (its inputs come from resources
	// made in this apply) may turn out to be another one now.
	if inst.Request != nil && inst.Fingerprint(e.ServiceID) != intent.Fingerprint {
		return fmt.Errorf("the request of %s is no longer the one job %s was submitted for, so the job is not resumed and nothing was submitted; run plan again: it shows what to generate", inst.Addr, intent.GenerationID)
	}
	r.emit(Event{Addr: inst.Addr, Action: c.Action, Phase: PhaseSubmitted, GenerationID: intent.GenerationID, Resumed: true})
	if err := r.finish(ctx, inst, c, intent, true, release, nil); err != nil {
		return err
	}
	r.record(&r.res.Resumed, inst.Addr)
	return nil
}

// synchronous reports whether ep's provider answers a create only once
// its work is done.
func synchronous(ep addrs.Endpoint) bool {
	p := catalog.Lookup(ep.Provider())
	return p != nil && p.Synchronous
}

// spend adds what c was estimated to cost, at the plan's prices, to what
// the state's workspace spent: a generation the service took (or may
// have), in the transaction that records it. An unpriced change adds
// nothing.
func (r *applyRun) spend(tx *statefile.Tx, c *plans.Change) error {
	if r.plan == nil {
		return nil
	}
	amount, ok := r.plan.CostOf(c)
	if !ok || amount <= 0 {
		return nil
	}
	return tx.AddSpent(r.plan.Currency(), int64(amount))
}
