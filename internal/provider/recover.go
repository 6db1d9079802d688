package provider

import (
	"fmt"
	"time"
)

// ClockSkew widens the window a lost create is looked for in: a provider
// stamps created_at by its clock, genform's window is by this machine's.
const ClockSkew = time.Minute

// MaxListPages bounds the pages of a provider's job list a Recover reads.
const MaxListPages = 20

// Window is the time a Recoverer looks for the job of a lost create in:
// from when it was sent to when its answer was given up, widened by
// ClockSkew each side.
type Window struct{ From, To time.Time }

// WindowOf is the window of a create sent between since and until.
func WindowOf(since, until time.Time) Window {
	return Window{From: since.Add(-ClockSkew), To: until.Add(ClockSkew)}
}

// Place says where a job the provider stamped created (RFC 3339) falls:
// before the window, inside it, or neither (after it); ok is false for a
// stamp that does not parse, a job the search passes over.
func (w Window) Place(created string) (before, inside, ok bool) {
	t, err := time.Parse(time.RFC3339Nano, created)
	if err != nil {
		return false, false, false
	}
	if t.Before(w.From) {
		return true, false, true
	}
	return false, !t.After(w.To), true
}

// OnlyMatch is what a Recover found: no match is (zero, false, nil); one
// is that job, when id, its id, is an id; more than one is an error, as
// genform cannot tell which one is its own and the create stays possibly
// paid. noun names the provider's jobs ("prediction").
func OnlyMatch[T any](noun string, found []T, id func(T) string) (T, bool, error) {
	var zero T
	switch len(found) {
	case 0:
		return zero, false, nil
	case 1:
		if !ValidID(id(found[0])) {
			return zero, false, fmt.Errorf("recovering a %s: the matching %s's id is not an id", noun, noun)
		}
		return found[0], true, nil
	}
	return zero, false, fmt.Errorf("recovering a %s: %d %ss made in the window match the request; genform cannot tell which is its own", noun, len(found), noun)
}
