package command

import (
	"errors"
	"fmt"
	"time"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/service"
	"github.com/genform/genform/reconcile/apply"
)

// This file writes what a person reads about the service as a whole rather
// than one change: an address where no service answers, a token it
// refuses, and the retries of requests that may yet pass.

// serviceAdvice is what the user can do about err when it is the service's
// as a whole; "" for any other error.
func serviceAdvice(err error) string {
	switch {
	case errors.Is(err, service.ErrUnreachable):
		return "Check GENFORM_BASE_URL (or base_url in the service block, which takes precedence), " +
			"that the service is running at that address, and the network in between."
	case errors.Is(err, service.ErrUnauthorized):
		return "Set GENFORM_TOKEN (or token in the service block, which takes precedence) " +
			"to a token the service accepts, then run the command again."
	}
	return ""
}

// serviceText says what failed when err is the service's as a whole,
// without the request that happened to find out: every other request
// would have failed the same way. tokenSet is false when no token was
// sent at all.
func serviceText(err error, tokenSet bool) string {
	var ue *service.UnreachableError
	if errors.As(err, &ue) {
		return ue.Error()
	}
	var se *service.Error
	if errors.Is(err, service.ErrUnauthorized) && errors.As(err, &se) {
		answer := *se
		answer.Op = ""
		if !tokenSet {
			return "the service wants a token and none is set: " + answer.Error()
		}
		return "the service refused the token: " + answer.Error()
	}
	return err.Error()
}

// serviceFailed prints err, which ended a command before it changed
// anything, once, with what to do about it when it is the service's as a
// whole; outcome says what was left undone ("nothing was submitted").
func serviceFailed(env *Env, ep endpoint, err error, outcome string) int {
	if advice := serviceAdvice(err); advice != "" {
		return env.Errorf("%s; %s. %s", serviceText(err, ep.Token != ""), outcome, advice)
	}
	return env.Errorf("%v", err)
}

// renderRefused ends the output of an apply the service's refusal of the
// token stopped: what was done, what failed on its own, the jobs a rerun
// resumes, and the refusal, once.
func renderRefused(env *Env, res *apply.Result, summary string) {
	w := env.Stdout
	fmt.Fprintf(w, "\n%s %s\n", colRed.Sprint(colBold.Sprint("Apply stopped: the service refused the token.")), summary)
	for _, f := range res.Failed {
		env.Errorf("%s: %v", f.Addr, f.Err)
	}
	for _, f := range res.Skipped {
		env.Errorf("%s: %v", f.Addr, f.Err)
	}
	if len(res.Running) > 0 {
		fmt.Fprintln(w, "These jobs were submitted before the refusal; their ids are recorded in the state and the next apply resumes them:")
		for _, j := range res.Running {
			fmt.Fprintf(w, "  - %s (job %s)\n", j.Addr, j.GenerationID)
		}
	}
	env.Errorf("%s; nothing more was submitted. %s", serviceText(res.Refused, true), serviceAdvice(res.Refused))
}

// addrText is an event's address, or "service" for the apply's own check
// of the service, which is no instance's.
func addrText(a addrs.Instance) string {
	if a.IsZero() {
		return "service"
	}
	return a.String()
}

// retryText is a retry as a progress line says it:
// "retrying in 2s (429 Too Many Requests, attempt 2)".
func retryText(r *service.RetryInfo) string {
	if r == nil {
		return "retrying"
	}
	wait := r.Wait.Round(100 * time.Millisecond)
	if wait == 0 {
		wait = r.Wait.Round(time.Millisecond)
	}
	return fmt.Sprintf("retrying in %s (%s, attempt %d)", wait, r.Reason(), r.Attempt)
}

// retryJSON is the retry of an apply -json progress line of phase
// "retrying".
type retryJSON struct {
	Operation   string  `json:"operation"`
	Attempt     int     `json:"attempt"`
	MaxAttempts int     `json:"max_attempts,omitempty"`
	HTTPStatus  int     `json:"http_status,omitempty"`
	Reason      string  `json:"reason"`
	WaitSeconds float64 `json:"wait_seconds"`
}

func newRetryJSON(r *service.RetryInfo) *retryJSON {
	if r == nil {
		return nil
	}
	return &retryJSON{
		Operation: r.Op, Attempt: r.Attempt, MaxAttempts: r.MaxAttempts,
		HTTPStatus: r.HTTPStatus, Reason: r.Reason(), WaitSeconds: r.Wait.Seconds(),
	}
}
