package providertest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/simulator/simkit"
)

// Harness follows an adapter's jobs in a test.
type Harness struct {
	T *testing.T
	P provider.Provider
	// Sim and Server are the simulator the adapter is built against and
	// the loopback server serving it, when Start built the harness.
	Sim    Sim
	Server *httptest.Server
	errs   []error
}

// Sim is a live provider's simulator as an adapter's tests drive it.
type Sim interface {
	http.Handler
	Jobs() simkit.JobsReport
}

// Adapter is a harness of an adapter of type P built against a
// simulator of type S, each as its own type.
type Adapter[S Sim, P provider.Provider] struct {
	*Harness
	Sim S
	P   P
}

// Start serves the simulator newSim builds from opts on the loopback for
// the length of t, and builds the adapter newAdapter makes for it,
// sending key k. The simulator accepts only simKey; its jobs take 60 ms
// unless opts set a latency. The harness, whose errors are checked not
// to hold k, follows the adapter.
func Start[S Sim, P provider.Provider](t *testing.T, opts simkit.Options, simKey, k string,
	newSim func(simkit.Options) (S, error), newAdapter func(provider.Config) (P, error)) *Adapter[S, P] {
	t.Helper()
	opts.Token = simKey
	if opts.Latency == 0 {
		opts.Latency = 60 * time.Millisecond
	}
	sim, err := newSim(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	p, err := newAdapter(provider.Config{BaseURL: srv.URL, Key: k})
	if err != nil {
		t.Fatal(err)
	}
	h := New(t, p, k)
	h.Sim, h.Server = sim, srv
	return &Adapter[S, P]{Harness: h, Sim: sim, P: p}
}

// Starter is Start with the simulator's key and the two constructors
// given once, for the tests of one adapter: the function they start
// each harness with, sending key k.
func Starter[S Sim, P provider.Provider](simKey string, newSim func(simkit.Options) (S, error), newAdapter func(provider.Config) (P, error)) func(t *testing.T, opts simkit.Options, k string) *Adapter[S, P] {
	return func(t *testing.T, opts simkit.Options, k string) *Adapter[S, P] {
		t.Helper()
		return Start(t, opts, simKey, k, newSim, newAdapter)
	}
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

// Ended follows the job until it ends and returns the status it ended
// with.
func (h *Harness) Ended(j provider.Job) provider.Status {
	h.T.Helper()
	seen := h.Follow(j)
	return seen[len(seen)-1]
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

// LiveAdapter is, when GENFORM_LIVE=1 and keyEnv are set, the adapter
// newProvider builds from the key in keyEnv, with its harness and a
// context of ten minutes, the key checked; it skips t otherwise. Nothing
// it starts runs in the suite: whoever holds a key runs it on purpose
// (see docs/providers.md), and pays for one image.
func LiveAdapter(t *testing.T, keyEnv string, newProvider func(provider.Config) (provider.Provider, error)) (context.Context, provider.Provider, *Harness) {
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
	t.Cleanup(cancel)
	if err := h.Keep(p.CheckCredentials(ctx)); err != nil {
		t.Fatalf("checking the key: %v", err)
	}
	return ctx, p, h
}

// Live runs one real, paid generation on provider r (its Live request)
// with its LiveAdapter: it submits once, follows the job to its end
// (polling every 2 s, for at most 10 minutes), fetches the result and
// downloads every output, checking that each is a file of its own with a
// hash.
func Live(t *testing.T, r *provider.Registration) {
	t.Helper()
	if r.Live == nil {
		t.Fatalf("provider %s has no live generation", r.Name())
	}
	ctx, p, h := LiveAdapter(t, r.Table.KeyEnv, r.New)
	job, err := p.Submit(ctx, *r.Live)
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
