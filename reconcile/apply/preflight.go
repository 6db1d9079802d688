package apply

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/reconcile/plans"
)

// This file holds what an apply does about the service as a whole rather
// than one change: the check before anything is paid for, and the stop
// when the service refuses the token.

// begin readies the apply's use of the service: the engine's service is
// wrapped so that a refusal of the token stops the apply the moment it is
// answered, and, before anything is submitted or polled, one request that
// creates nothing checks that the service can be reached and accepts the
// token. A plan that neither submits nor resumes a job pays for nothing
// and is not checked (a refused token still stops it, should it ask for a
// watermark-free link). The error ends the apply before any change.
func (r *applyRun) begin() error {
	// Every provider is checked, and every one that cannot be used is
	// named at once: two keys missing are one run to fix, not two.
	var errs []error
	for _, ep := range sendsJobs(r.plan) {
		p, err := r.providerFor(ep)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		// The check is bounded like a generation: a service that accepts
		// connections and never answers must not hold the apply.
		ctx, cancel := r.generation(addrs.Instance{}, ep)
		err = p.CheckCredentials(ctx)
		err = r.timedOut(ctx, err)
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("checking %s before submitting anything: %w", serviceName(ep), err))
		}
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	lines := make([]string, len(errs))
	for i, err := range errs {
		lines[i] = "  - " + err.Error()
	}
	return &multiError{errs: errs, text: fmt.Sprintf("%d providers cannot be used, and nothing was submitted:\n%s", len(errs), strings.Join(lines, "\n"))}
}

// multiError is the providers' errors of begin at once: it matches each
// (errors.Is, errors.As) and reads as their list.
type multiError struct {
	errs []error
	text string
}

func (m *multiError) Error() string   { return m.text }
func (m *multiError) Unwrap() []error { return m.errs }

// serviceName names ep's provider in messages: the reference service is
// "the service" (the one the service block configures).
func serviceName(ep addrs.Endpoint) string {
	if ep.Provider() == addrs.Reference {
		return "the service"
	}
	return "provider " + ep.Provider()
}

// sendsJobs lists, one endpoint for each, the providers plan submits a
// generation to or resumes a job on, in the order of its changes.
func sendsJobs(plan *plans.Plan) []addrs.Endpoint {
	var eps []addrs.Endpoint
	seen := map[string]bool{}
	for _, c := range plan.Changes {
		switch c.Action {
		case plans.Create, plans.Replace, plans.Resume:
			if !seen[c.Provider()] {
				seen[c.Provider()] = true
				// A change the reference service makes carries no
				// model: any of its endpoints names its provider.
				ep := addrs.Text2Image
				if c.Model != nil {
					ep = c.Model.Endpoint
				}
				eps = append(eps, ep)
			}
		}
	}
	return eps
}

// refusedBy stops the apply when err is the service's refusal of the
// token (401 or 403), which every other request would get too, or a
// provider's word that the account reached a cap no wait lifts (a daily
// limit), which every other create would meet. The first
// refusal stops it as an interrupt does: nothing more is submitted, a
// create already on the wire records its answer, and jobs already
// submitted are listed in Result.Running for the next apply to resume. It
// is the Result's Refused, reported once.
func (r *applyRun) refusedBy(err error) bool {
	if !errors.Is(err, provider.ErrUnauthorized) && !errors.Is(err, provider.ErrCapReached) {
		return false
	}
	r.mu.Lock()
	if r.res.Refused == nil {
		r.res.Refused = err
	}
	r.mu.Unlock()
	if errors.Is(err, provider.ErrUnauthorized) {
		// A key refused makes every call fail: the run stops.
		r.stop(err)
	}
	// A cap reached refuses new generations only: the jobs already paid
	// for are followed, downloaded and recorded, and nothing more is
	// submitted (acquire).
	return true
}

// capped is the cap reached on ep's provider, which stops new
// submissions to it, or nil.
func (r *applyRun) capped(ep addrs.Endpoint) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.res.Refused
	if err == nil || !errors.Is(err, provider.ErrCapReached) {
		return nil
	}
	if named, ok := errors.AsType[*provider.Named](err); ok && named.Provider != ep.Provider() {
		return nil
	}
	return err
}

// refused reports whether a change failed because the service refused the
// token; it is then reported interrupted rather than failed, the one cause
// being Result.Refused.
func (r *applyRun) refused(c *plans.Change, err error) bool {
	if !r.refusedBy(err) {
		return false
	}
	r.emit(Event{Addr: c.Addr, Action: c.Action, Phase: PhaseInterrupted})
	return true
}

// guarded is the service as one apply uses it. A refusal of the token
// stops the apply as soon as it is answered, not when the change it
// belongs to is reported: by then its generation slot may have gone to
// the next submission.
//
// Errors of a live provider as a whole carry its name (provider.Named),
// so that what is shown says which key or address to check.
type guarded struct {
	provider.Provider
	r    *applyRun
	name string
}

// check names err by the provider and stops the apply on a refused key.
func (g guarded) check(err error) error {
	err = provider.NameErr(g.name, err)
	g.r.refusedBy(err)
	return err
}

func (g guarded) Submit(ctx context.Context, req provider.Request) (provider.Job, error) {
	job, err := g.Provider.Submit(ctx, req)
	return job, g.check(err)
}

func (g guarded) Status(ctx context.Context, job provider.Job) (provider.Status, error) {
	st, err := g.Provider.Status(ctx, job)
	return st, g.check(err)
}

func (g guarded) Result(ctx context.Context, job provider.Job) (*provider.Result, error) {
	res, err := g.Provider.Result(ctx, job)
	return res, g.check(err)
}

func (g guarded) Download(ctx context.Context, url, dir, base string) (*provider.Downloaded, error) {
	d, err := g.Provider.Download(ctx, url, dir, base)
	return d, provider.NameErr(g.name, err)
}

func (g guarded) CheckCredentials(ctx context.Context) error {
	return provider.NameErr(g.name, g.Provider.CheckCredentials(ctx))
}

// WatermarkFreeURL keeps the provider's watermark-free files reachable
// through the guard, for one that has them.
func (g guarded) WatermarkFreeURL(ctx context.Context, creationID string) (string, error) {
	u, err := watermarkFreeURL(ctx, g.Provider, creationID)
	return u, g.check(err)
}

// Recover finds a lost job through the guard, for a provider that can.
func (g guarded) Recover(ctx context.Context, r provider.Request, since, until time.Time) (provider.Job, bool, error) {
	rec, ok := g.Provider.(provider.Recoverer)
	if !ok {
		return provider.Job{}, false, nil
	}
	job, found, err := rec.Recover(ctx, r, since, until)
	return job, found, g.check(err)
}
