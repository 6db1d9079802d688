// Package providertest is what the live providers' adapter tests share:
// a harness that keeps every error an adapter returns (to prove none
// holds the key), follows a job to its end, and a clock that makes a
// simulator's rate limit refuse every other request for one second. It
// holds no test of its own.
package providertest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/provider"
)

// Harness follows an adapter's jobs in a test.
type Harness struct {
	T    *testing.T
	P    provider.Provider
	errs []error
}

// New is a harness of p, whose errors are checked at the end of t not to
// hold key.
func New(t *testing.T, p provider.Provider, key string) *Harness {
	h := &Harness{T: t, P: p}
	t.Cleanup(func() {
		for _, err := range h.errs {
			if strings.Contains(err.Error(), key) {
				t.Errorf("an error holds the key: %v", err)
			}
		}
	})
	return h
}

// Keep records err and returns it.
func (h *Harness) Keep(err error) error {
	if err != nil {
		h.errs = append(h.errs, err)
	}
	return err
}

// Follow polls the job until it ends, returning every status seen.
func (h *Harness) Follow(j provider.Job) []provider.Status {
	h.T.Helper()
	var seen []provider.Status
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		st, err := h.P.Status(context.Background(), j)
		if h.Keep(err) != nil {
			h.T.Fatalf("status: %v", err)
		}
		seen = append(seen, st)
		if st.State != provider.Running {
			return seen
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.T.Fatalf("job %s never ended: %+v", j.ID, seen[len(seen)-1])
	return nil
}

// StepClock moves 59 seconds on every reading, so that with RPM 1 every
// other request is refused with a Retry-After of one second.
func StepClock() func() time.Time {
	t := time.Now()
	return func() time.Time {
		t = t.Add(59 * time.Second)
		return t
	}
}
