// Package providertest is what the live providers' adapter tests share:
// a harness that keeps every error an adapter returns (to prove none
// holds the key), follows a job to its end, and a clock that makes a
// simulator's rate limit refuse every other request for one second. It
// holds no test of its own.
package providertest

import (
	"context"
	"fmt"
	"os"
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

// Live runs one real, paid generation of req on the provider new builds
// from the key in keyEnv, when GENFORM_LIVE=1 and keyEnv are set, and
// skips otherwise: it checks the key, submits once, follows the job to
// its end (polling every 2 s, for at most 10 minutes), fetches the result
// and downloads every output, checking that each is a file of its own
// with a hash. Nothing here runs in the suite: whoever holds a key runs
// it on purpose (see docs/providers.md), and pays for one image.
func Live(t *testing.T, keyEnv string, newProvider func(provider.Config) (provider.Provider, error), req provider.Request) {
	t.Helper()
	if os.Getenv("GENFORM_LIVE") != "1" {
		t.Skip("a live test: set GENFORM_LIVE=1 and " + keyEnv + " to run it, paying for one generation")
	}
	key := os.Getenv(keyEnv)
	if key == "" {
		t.Skip(keyEnv + " is not set")
	}
	p, err := newProvider(provider.Config{Key: key, UserAgent: "genform-live-test"})
	if err != nil {
		t.Fatal(err)
	}
	h := New(t, p, key)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := h.Keep(p.CheckCredentials(ctx)); err != nil {
		t.Fatalf("checking the key: %v", err)
	}
	job, err := p.Submit(ctx, req)
	if h.Keep(err) != nil {
		t.Fatalf("submitting (this may have been charged): %v", err)
	}
	t.Logf("job %s submitted", job.ID)
	for {
		st, err := p.Status(ctx, job)
		if h.Keep(err) != nil {
			t.Fatalf("status of job %s: %v", job.ID, err)
		}
		t.Logf("job %s: %s (%s)", job.ID, st.Raw, st.State)
		if st.State == provider.Failed {
			t.Fatalf("job %s failed: %s", job.ID, st.Reason)
		}
		if st.State == provider.Done {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("job %s did not end within 10 minutes", job.ID)
		case <-time.After(2 * time.Second):
		}
	}
	res, err := p.Result(ctx, job)
	if h.Keep(err) != nil {
		t.Fatalf("result of job %s: %v", job.ID, err)
	}
	if len(res.Outputs) == 0 {
		t.Fatalf("job %s lists no outputs: %s", job.ID, res.Detail)
	}
	dir := t.TempDir()
	for _, o := range res.Outputs {
		d, err := p.Download(ctx, o.URL, dir, fmt.Sprint(o.Index))
		if h.Keep(err) != nil {
			t.Fatalf("downloading output %d: %v", o.Index, err)
		}
		if d.Size == 0 || d.SHA256 == "" {
			t.Fatalf("output %d downloaded empty: %+v", o.Index, d)
		}
		t.Logf("output %d: %d bytes, %s, sha256 %s", o.Index, d.Size, d.ContentType, d.SHA256)
	}
}
