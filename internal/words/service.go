package words

import (
	"errors"
	"fmt"
	"time"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/catalog"
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
