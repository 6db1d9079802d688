package providertest

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/provider"
)

// The checks below are what every adapter's tests assert alike against
// its simulator; each takes the provider's own way of sending a create
// (submit, returning the adapter's error) and the harness Start built.

// RateLimitStorm checks, on a simulator started with RPM 1 and
// StepClock, that the adapter checks its key, then sends its create
// again only after the Retry-After of the 429 it met (a second), and
// that one job was made by one create.
func (h *Harness) RateLimitStorm(submit func() error) {
	h.T.Helper()
	if err := h.Keep(h.P.CheckCredentials(context.Background())); err != nil {
		h.T.Fatal(err)
	}
	began := time.Now()
	if err := submit(); err != nil {
		h.T.Fatal(err)
	}
	if time.Since(began) < 900*time.Millisecond {
		h.T.Errorf("the create was sent again after %s, before the Retry-After of 1s", time.Since(began))
	}
	rep := h.Sim.Jobs()
	if rep.Throttled == 0 || len(rep.Jobs) != 1 || rep.Creates[rep.Jobs[0].Fingerprint] != 1 {
		h.T.Errorf("report %+v: want a 429 and one job", rep)
	}
}

// SentOnce checks, on a simulator that loses the answer or answers 500,
// that the create's error is possibly paid and that it was sent once.
func (h *Harness) SentOnce(submit func() error) {
	h.T.Helper()
	if err := submit(); !provider.IsPossiblyPaid(err) {
		h.T.Fatalf("err = %v, want possibly paid", err)
	}
	if rep := h.Sim.Jobs(); rep.Requests != 1 {
		h.T.Errorf("the create was sent %d times, want once", rep.Requests)
	}
}

// ExpiredOutput checks that downloading url, an output whose lifetime
// on the simulator has passed, is answered 404.
func (h *Harness) ExpiredOutput(url string) {
	h.T.Helper()
	_, err := h.P.Download(context.Background(), url, h.T.TempDir(), "late")
	var se *apiclient.Error
	if !errors.As(h.Keep(err), &se) || se.HTTPStatus != 404 {
		h.T.Errorf("downloading an expired output: %v, want 404", err)
	}
}

// UnknownStatusFollowed checks the statuses of j, a job the simulator
// reports a status its provider does not document (raw) for a while:
// that status is running and shown as it is, and j is followed on to
// its end, done.
func (h *Harness) UnknownStatusFollowed(j provider.Job, raw string) {
	h.T.Helper()
	seen := h.Follow(j)
	odd := false
	for _, st := range seen {
		if !st.Known {
			odd = true
			if st.State != provider.Running || st.Raw != raw {
				h.T.Errorf("an unknown status is %+v, want running and shown as it is", st)
			}
		}
	}
	if !odd || seen[len(seen)-1].State != provider.Done {
		h.T.Errorf("statuses %+v: want an unknown one, followed to the end", seen)
	}
}

// Keys checks that good's adapter, sending the simulator's key, passes
// CheckCredentials, and that bad's, sending another, fails it with
// apiclient.ErrUnauthorized and has a create (submit, through bad) refused
// as one that made nothing. It returns that create's error.
func Keys(good, bad *Harness, submit func() error) error {
	good.T.Helper()
	if err := good.Keep(good.P.CheckCredentials(context.Background())); err != nil {
		good.T.Errorf("the right key: %v", err)
	}
	if err := bad.Keep(bad.P.CheckCredentials(context.Background())); !errors.Is(err, apiclient.ErrUnauthorized) {
		bad.T.Errorf("a wrong key: %v, want ErrUnauthorized", err)
	}
	err := submit()
	if err == nil || provider.IsPossiblyPaid(err) {
		bad.T.Errorf("a create with a refused key: %v, want a refusal that made nothing", err)
	}
	return err
}

// Failure is a job made to fail on a simulator: the prompt that makes
// it fail (it carries simkit.FailMarker or simkit.RefuseMarker), whether
// the provider's moderation refused it, and words the reason it ends
// with holds.
type Failure struct {
	Prompt  string
	Refused bool
	Reason  string
}

// Failures checks, for each of fs, that the job submit makes of its
// prompt ends failed, refused or not as it says, with a reason that
// holds its words; then, when each is not nil, it hands each job and
// the status it ended with to each, for what the provider's tests check
// besides (its result, its exact words).
func (h *Harness) Failures(fs []Failure, submit func(prompt string) (provider.Job, error), each func(f Failure, j provider.Job, last provider.Status)) {
	h.T.Helper()
	for _, f := range fs {
		j, err := submit(f.Prompt)
		if err != nil {
			h.T.Fatal(err)
		}
		last := h.Ended(j)
		if last.State != provider.Failed || last.Refused != f.Refused || !strings.Contains(last.Reason, f.Reason) {
			h.T.Errorf("%q ended %+v", f.Prompt, last)
		}
		if each != nil {
			each(f, j, last)
		}
	}
}
