package conformance_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/provider/providertest"
	"github.com/genform/genform/internal/simulator/simkit"
	"github.com/genform/genform/internal/simulator/simkit/simtest"
)

// latency is how long a simulated job runs unless a case says otherwise:
// short, so the suite is fast, and long enough to be seen running.
const latency = 40 * time.Millisecond

// env is one provider's adapter against its own simulator, served on the
// loopback for one subtest.
type env struct {
	*providertest.Harness
	t     *testing.T
	pc    providerCase
	p     provider.Provider
	url   string
	clock *clock
}

// start serves pc's simulator, configured by opts, on the loopback and
// builds its adapter sending key. The simulator accepts only pc.key; its
// jobs take latency unless opts sets one, and it reads the env's clock
// unless opts has one.
func start(t *testing.T, pc providerCase, opts simkit.Options, key string) *env {
	t.Helper()
	e := &env{t: t, pc: pc, clock: &clock{}}
	opts.Token = pc.key
	if opts.Latency == 0 {
		opts.Latency = latency
	}
	if opts.Now == nil {
		opts.Now = e.clock.Now
	}
	sim, err := pc.newSim(opts)
	if err != nil {
		t.Fatal(err)
	}
	if pc.weirdStatus != nil {
		sim = pc.weirdStatus(sim)
	}
	inst, err := simkit.Listen("127.0.0.1:0", sim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := inst.Close(); err != nil {
			t.Errorf("closing the simulator: %v", err)
		}
	})
	e.url = inst.URL
	if e.p, err = pc.newProvider(inst.URL, key); err != nil {
		t.Fatal(err)
	}
	e.Harness = providertest.New(t, e.p, key)
	return e
}

// jobs is the simulator's report, read over the loopback as a test
// driving a running simulator would (GET /_sim/jobs).
func (e *env) jobs() simkit.JobsReport {
	e.t.Helper()
	rep, err := simtest.Report(e.url)
	if err != nil {
		e.t.Fatalf("reading /_sim/jobs: %v", err)
	}
	return rep
}

// creates is the number of jobs the report counts as made, over every
// fingerprint.
func creates(rep simkit.JobsReport) int {
	n := 0
	for _, c := range rep.Creates {
		n += c
	}
	return n
}

// oneJob checks that the simulator made exactly one job, from one
// create of its request, and returns it.
func (e *env) oneJob(rep simkit.JobsReport) simkit.JobInfo {
	e.t.Helper()
	if len(rep.Jobs) != 1 || creates(rep) != 1 || rep.Creates[rep.Jobs[0].Fingerprint] != 1 {
		e.t.Fatalf("the simulator made %d jobs from %d creates (%v), want exactly one", len(rep.Jobs), creates(rep), rep.Creates)
	}
	return rep.Jobs[0]
}

// submit submits r, failing the test on an error.
func (e *env) submit(ctx context.Context, r provider.Request) provider.Job {
	e.t.Helper()
	j, err := e.P.Submit(ctx, r)
	if e.Keep(err) != nil {
		e.t.Fatalf("submit: %v", err)
	}
	if j.ID == "" || !provider.ValidID(j.ID) || j.Kind != r.Kind {
		e.t.Fatalf("submit returned job %+v for a request of %s", j, r.Kind)
	}
	return j
}

// last is the status a job ended with.
func last(seen []provider.Status) provider.Status { return seen[len(seen)-1] }

// result fetches the result of a job that is done, failing the test on
// an error or a result without outputs.
func (e *env) result(ctx context.Context, j provider.Job) *provider.Result {
	e.t.Helper()
	res, err := e.P.Result(ctx, j)
	if e.Keep(err) != nil {
		e.t.Fatalf("result of job %s: %v", j.ID, err)
	}
	if len(res.Outputs) == 0 {
		e.t.Fatalf("job %s lists no outputs: %s", j.ID, res.Detail)
	}
	return res
}

// done submits r, follows the job to its end, which must be Done, and
// returns its result.
func (e *env) done(ctx context.Context, r provider.Request) *provider.Result {
	e.t.Helper()
	j := e.submit(ctx, r)
	if st := last(e.Follow(j)); st.State != provider.Done {
		e.t.Fatalf("job %s ended %+v, want done", j.ID, st)
	}
	return e.result(ctx, j)
}

// download downloads every output of res into a new directory, checking
// that each is a file of its own, non-empty, whose size and sha256 are
// the bytes on disk.
func (e *env) download(ctx context.Context, res *provider.Result) {
	e.t.Helper()
	dir := e.t.TempDir()
	seen := map[string]bool{}
	for _, o := range res.Outputs {
		d, err := e.P.Download(ctx, o.URL, dir, fmt.Sprintf("out%d", o.Index))
		if e.Keep(err) != nil {
			e.t.Fatalf("downloading output %d: %v", o.Index, err)
		}
		if filepath.Dir(d.Path) != dir || d.Size <= 0 || !sha256RE.MatchString(d.SHA256) {
			e.t.Fatalf("output %d downloaded as %+v, want a non-empty file in %s with a sha256", o.Index, d, dir)
		}
		b, err := os.ReadFile(d.Path)
		if err != nil {
			e.t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if int64(len(b)) != d.Size || hex.EncodeToString(sum[:]) != d.SHA256 {
			e.t.Errorf("output %d: %d bytes on disk with sha256 %x, reported %d bytes and %s", o.Index, len(b), sum, d.Size, d.SHA256)
		}
		if seen[d.Path] {
			e.t.Errorf("two outputs downloaded to %s", d.Path)
		}
		seen[d.Path] = true
	}
}

var sha256RE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// clock is a simulator's clock: the time, moved on by Advance, so a test
// can make URLs expire without waiting. Safe for concurrent use.
type clock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// lockedStepClock is providertest.StepClock, safe to read from the
// simulator's handlers at once.
func lockedStepClock() func() time.Time {
	step := providertest.StepClock()
	var mu sync.Mutex
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return step()
	}
}

// undocumentedStatus serves the reference simulator, which has no marker
// of its own for it, with one change: a job whose create body holds
// simkit.WeirdMarker reports, while the simulator says "processing", raw
// instead, a status the service does not document, as fal's and
// Replicate's simulators do for that marker. Every other request passes
// through untouched.
func undocumentedStatus(raw string) func(simkit.Handler) simkit.Handler {
	return func(sim simkit.Handler) simkit.Handler {
		return &oddStatus{Handler: sim, raw: raw, marked: map[string]bool{}}
	}
}

type oddStatus struct {
	simkit.Handler
	raw    string
	mu     sync.Mutex
	marked map[string]bool
}

var referenceStatusPath = regexp.MustCompile(`^/v1/jobs/([^/]+)/status$`)

func (o *oddStatus) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.Body != nil:
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if !bytes.Contains(body, []byte(simkit.WeirdMarker)) {
			break
		}
		rec := httptest.NewRecorder()
		o.Handler.ServeHTTP(rec, r)
		var a struct {
			Value struct {
				GenerationID string `json:"generation_id"`
			} `json:"value"`
		}
		if json.Unmarshal(rec.Body.Bytes(), &a) == nil && a.Value.GenerationID != "" {
			o.mu.Lock()
			o.marked[a.Value.GenerationID] = true
			o.mu.Unlock()
		}
		replay(w, rec, rec.Body.Bytes())
		return
	case r.Method == http.MethodGet:
		m := referenceStatusPath.FindStringSubmatch(r.URL.Path)
		o.mu.Lock()
		marked := m != nil && o.marked[m[1]]
		o.mu.Unlock()
		if !marked {
			break
		}
		rec := httptest.NewRecorder()
		o.Handler.ServeHTTP(rec, r)
		// The status is the value's; the envelope's own "status" is
		// "success".
		body := bytes.Replace(rec.Body.Bytes(), []byte(`"status":"processing"`), []byte(`"status":"`+o.raw+`"`), 1)
		replay(w, rec, body)
		return
	}
	o.Handler.ServeHTTP(w, r)
}

// replay writes what rec recorded, with body.
func replay(w http.ResponseWriter, rec *httptest.ResponseRecorder, body []byte) {
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.Header().Del("Content-Length")
	w.WriteHeader(rec.Code)
	w.Write(body) //nolint:errcheck // the client hung up
}
