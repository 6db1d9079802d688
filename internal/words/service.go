package words

import (
	"errors"
	"fmt"
	"time"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/catalog"
	"github.com/genform/genform/internal/operation/outcome"
	"github.com/genform/genform/internal/provider"
)

// ServiceAdvice is what the user can do about err when it is the service's
// as a whole; "" for any other error.
func ServiceAdvice(err error) string {
	if named, ok := errors.AsType[*provider.Named](err); ok {
		title, keyEnv := named.Provider, "its key variable"
		if p := catalog.Lookup(named.Provider); p != nil {
			title, keyEnv = p.Title, p.KeyEnv
		}
		switch {
		case errors.Is(err, provider.ErrCapReached):
			return fmt.Sprintf("The cap lifts on %s's schedule (a daily limit, the next day) or with a higher tier or more credit; then run apply again: it resumes the jobs already submitted and sends the rest, paying for nothing twice.", title)
		case errors.Is(err, provider.ErrUnreachable):
			return fmt.Sprintf("Check base_url in the provider %q block (unset, it is %s's own address), and the network in between.", named.Provider, title)
		case errors.Is(err, provider.ErrUnauthorized):
			return fmt.Sprintf("Set %s (or key in the provider %q block, which takes precedence) to a key %s accepts, then run the command again.", keyEnv, named.Provider, title)
		}
	}
	switch {
	case errors.Is(err, provider.ErrUnreachable):
		return "Check GENFORM_BASE_URL (or base_url in the service block, which takes precedence), " +
			"that the service is running at that address, and the network in between."
	case errors.Is(err, provider.ErrUnauthorized):
		return "Set GENFORM_TOKEN (or token in the service block, which takes precedence) " +
			"to a token the service accepts, then run the command again."
	}
	return ""
}

// ServiceError says what failed when err is the service's as a whole,
// without the request that happened to find out: every other request
// would have failed the same way. tokenSet is false when no token was
// sent at all.
func ServiceError(err error, tokenSet bool) string {
	var ue *provider.UnreachableError
	if errors.As(err, &ue) {
		return ue.Error()
	}
	if named, ok := errors.AsType[*provider.Named](err); ok && errors.Is(err, provider.ErrCapReached) {
		title := named.Provider
		if p := catalog.Lookup(named.Provider); p != nil {
			title = p.Title
		}
		return title + " says the account reached a cap: " + named.Err.Error()
	}
	var se *provider.Error
	if errors.Is(err, provider.ErrUnauthorized) && errors.As(err, &se) {
		answer := *se
		answer.Op = ""
		if named, ok := errors.AsType[*provider.Named](err); ok {
			title := named.Provider
			if p := catalog.Lookup(named.Provider); p != nil {
				title = p.Title
			}
			return title + " refused the key: " + answer.Error()
		}
		if !tokenSet {
			return "the service wants a token and none is set: " + answer.Error()
		}
		return "the service refused the token: " + answer.Error()
	}
	return err.Error()
}

// EventAddr is an event's address, or "service" for the apply's own check
// of the service, which is no instance's.
func EventAddr(a addrs.Instance) string {
	if a.IsZero() {
		return "service"
	}
	return a.String()
}

// Retry is a retry as a progress line says it:
// "retrying in 2s (429 Too Many Requests, attempt 2)".
func Retry(r *provider.RetryInfo) string {
	if r == nil {
		return "retrying"
	}
	wait := r.Wait.Round(100 * time.Millisecond)
	if wait == 0 {
		wait = r.Wait.Round(time.Millisecond)
	}
	return fmt.Sprintf("retrying in %s (%s, attempt %d)", wait, r.Reason(), r.Attempt)
}

// ServiceSentence names a service identity in a sentence.
func ServiceSentence(id string) string {
	if id == config.SimulatorService {
		return "the built-in simulator"
	}
	return "service " + id
}

// ServiceSwitch says that the state was made with the service recorded
// and the configuration uses another, naming where that one was set: the
// start of the warning, or the error, of a command that meets a state
// made elsewhere.
func ServiceSwitch(recorded string, configured outcome.Reference) string {
	uses := "the built-in simulator (GENFORM_BASE_URL and service.base_url are unset)"
	if !configured.Builtin() {
		uses = fmt.Sprintf("service %s (set by %s)", configured.BaseURL, configured.From)
	}
	return fmt.Sprintf("the state was made with %s, but this configuration uses %s", ServiceSentence(recorded), uses)
}

// sharedSimulator is the warning of a state shared in a database made
// with the built-in simulator: a team's day-one mistake, which shows only
// later as downloads that fail in every copy but one.
const sharedSimulator = "the state is shared (backend \"pg\"), but the service is the built-in simulator, whose jobs and files live in this working copy alone (.genform/simulator): another working copy cannot download or resume what this one made, nor this one what another made. Run one simulator for everyone (genform sim -addr=0.0.0.0:8787, and GENFORM_BASE_URL=http://HOST:8787 in every copy), or a live provider"

// OperationWarning says what an operation went on despite.
func OperationWarning(w outcome.Warning) string {
	switch w.Code {
	case outcome.SharedSimulator:
		return sharedSimulator
	case outcome.SwitchIgnored:
		return ServiceSwitch(w.Recorded, w.Configured) + "; destroy sends nothing to a service, so it deletes what the state records all the same."
	case outcome.SwitchImported:
		return fmt.Sprintf("%s; with -migrate-service the creation is imported from %s and the state will name it: plan then generates anew what was made with %s.",
			ServiceSwitch(w.Recorded, w.Configured), ServiceSentence(w.Configured.ID), ServiceSentence(w.Recorded))
	case outcome.SwitchMigrated:
		return fmt.Sprintf("%s; with -migrate-service everything made there is generated anew on %s, and the state will name it.",
			ServiceSwitch(w.Recorded, w.Configured), ServiceSentence(w.Configured.ID))
	}
	return fmt.Sprintf("warning %d", w.Code)
}
