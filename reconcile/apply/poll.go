package apply

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/reconcile/plans"
)

// This file holds following a job until the service reports it done:
// polling aimed at when the job should end, and the timeout that bounds a
// generation from its create request to its last download.

// poll waits for a job to finish. It starts fast and backs off to the poll
// interval, using the reported progress to aim the next poll at the moment
// the job should be done, so most jobs cost two or three status requests.
func (r *applyRun) poll(ctx context.Context, ep addrs.Endpoint, addr addrs.Instance, action plans.Action, job provider.Job, submitted time.Time) (provider.Status, error) {
	p, err := r.providerFor(ep)
	if err != nil {
		return provider.Status{}, err
	}
	id := job.ID
	lim := r.lane(ep).lim
	pi, timeout := lim.PollInterval, lim.Timeout
	// Waits count from the service's answer, not from when this apply
	// started watching: a resumed job may be nearly done already.
	start := time.Now()
	wait := min(pi, time.Second)
	first := wait
	if !submitted.IsZero() && time.Since(submitted) < timeout {
		first = max(wait-time.Since(submitted), 0)
	}
	// The last poll falls just before the generation's deadline, which
	// leaves it a moment to be answered.
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = start.Add(timeout)
	}
	reserve := min(timeout/10, time.Second)
	left := func() time.Duration { return time.Until(deadline) - reserve }
	first = max(min(first, left()), 0)
	timer := time.NewTimer(first)
	defer timer.Stop()
	lastRaw := ""
	for {
		select {
		case <-ctx.Done():
			if r.ctx.Err() != nil {
				return provider.Status{}, r.ctx.Err()
			}
			if lastRaw != "" {
				return provider.Status{}, fmt.Errorf("job %s of %s still %s after %s (the service timeout); it is recorded, rerun apply to resume it", id, addr, lastRaw, timeout)
			}
			return provider.Status{}, fmt.Errorf("job %s of %s is not finished after %s (the service timeout); it is recorded, rerun apply to resume it", id, addr, timeout)
		case <-timer.C:
		}
		st, err := p.Status(ctx, job)
		if err != nil {
			if r.ctx.Err() != nil {
				return st, r.ctx.Err()
			}
			if lastRaw != "" && context.Cause(ctx) == errGenerationTimeout {
				// The deadline came during the poll: what the job last
				// said is the news, not the request cut short.
				return st, fmt.Errorf("job %s of %s still %s after %s (the service timeout); it is recorded, rerun apply to resume it", id, addr, lastRaw, timeout)
			}
			return st, fmt.Errorf("polling %s (job %s): %w; the job is recorded, rerun apply to resume it", addr, id, r.timedOut(ctx, err))
		}
		if !st.Known && st.Raw != lastRaw {
			r.emit(Event{Addr: addr, Action: action, Phase: PhaseWarning, GenerationID: id,
				Err: fmt.Errorf("job %s reports unknown status %q; treating it as running", id, st.Raw)})
		}
		lastRaw = st.Raw
		if st.Throttled {
			r.lane(ep).win.throttled(0)
		}
		r.emit(Event{Addr: addr, Action: action, Phase: PhaseRunning, Status: st.Raw, KnownStatus: st.Known, Progress: st.Progress,
			JobDone: st.State == provider.Done, GenerationID: id})
		switch st.State {
		case provider.Done, provider.Failed:
			return st, nil
		}
		if left() <= 0 {
			return st, fmt.Errorf("job %s of %s still %s after %s (the service timeout); it is recorded, rerun apply to resume it", id, addr, st.Raw, timeout)
		}
		// Progress is the job's, so its age counts from submission.
		age := time.Since(start)
		if !submitted.IsZero() {
			age = time.Since(submitted)
		}
		wait = nextPoll(wait, age, st.Progress, pi)
		wait = max(min(wait, left()), 0)
		timer.Reset(wait)
	}
}

// nextPoll picks the wait before the next status request. While the job
// reports progress p after elapsed, it should be done near elapsed/p, so
// the next poll aims just past that; past full progress (post-processing)
// short waits follow; with no progress yet the wait doubles. The wait never
// exceeds the poll interval.
func nextPoll(prev, elapsed time.Duration, progress float64, interval time.Duration) time.Duration {
	var next time.Duration
	switch {
	case progress >= 1:
		next = elapsed / 12
	case progress > 0.02:
		next = time.Duration(float64(elapsed)/progress) - elapsed + 20*time.Millisecond
	default:
		next = prev * 2
	}
	return min(max(next, 50*time.Millisecond), interval)
}

// errGenerationTimeout is the cause of a generation's context when its
// timeout (Engine.Timeout) has passed.
var errGenerationTimeout = errors.New("the service timeout passed")

// generation is the context of every request one generation made on ep's
// provider makes, from its create request to its last download: they end
// together when the provider's timeout passes, so a service that hangs,
// answers never or drips its files cannot hold an apply past it.
func (r *applyRun) generation(addr addrs.Instance, ep addrs.Endpoint) (context.Context, context.CancelFunc) {
	l := r.lane(ep)
	timeout := l.lim.Timeout
	ctx := context.WithValue(r.on(addr), timeoutKey{}, timeout)
	// A 429 from the provider narrows its window and holds new
	// generations for the wait it asked.
	ctx = provider.WithRetryObserver(ctx, func(info provider.RetryInfo) {
		if info.HTTPStatus == http.StatusTooManyRequests {
			l.win.throttled(info.Wait)
		}
	})
	return context.WithTimeoutCause(ctx, timeout, errGenerationTimeout)
}

// timeoutKey carries a generation's timeout in its context, for timedOut.
type timeoutKey struct{}

// timedOut says so when err came from a generation's timeout.
func (r *applyRun) timedOut(ctx context.Context, err error) error {
	if err != nil && r.ctx.Err() == nil && context.Cause(ctx) == errGenerationTimeout {
		timeout, _ := ctx.Value(timeoutKey{}).(time.Duration)
		return fmt.Errorf("%w (stopped at the service timeout, %s)", err, timeout)
	}
	return err
}
