package simkit

import (
	"cmp"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Defaults are a live provider's documented limits and lifetimes, which
// Options left at zero take.
type Defaults struct {
	// Latency zero is DefaultLatency.
	Latency       time.Duration
	MaxConcurrent int
	RPM           int
	URLTTL        time.Duration
}

// DefaultLatency is how long a job takes when neither Options nor the
// provider's Defaults say. No provider documents how long a generation
// takes, so the simulators share one short enough for a script to wait
// out.
const DefaultLatency = 2 * time.Second

// Refusal writes an error answer in a provider's own shape: status, its
// message, and a Retry-After in seconds when positive.
type Refusal func(w http.ResponseWriter, status int, msg string, retryAfter int)

// Core is the state and the steps a live provider's simulator shares with
// the others: its jobs, the creates per fingerprint, the key check, the
// request rate, the queue behind the concurrency limit, injected errors,
// lost answers, persistence and media files. The provider's package
// keeps its paths, fields, statuses and error bodies. It is safe for
// concurrent use.
type Core struct {
	Opts Options
	now  func() time.Time

	limit *Limiter
	queue *Queue
	store *Store
	media *MediaCache

	errDraw, truncDraw, loseDraw *Draw

	mu        sync.Mutex
	runs      map[string]*Run
	creates   map[string]int
	requests  int
	throttled int
	downloads int
}

// NewCore is the core of a simulator configured by opts, the zero
// settings taken from d, with the jobs saved in opts.DataDir loaded.
func NewCore(opts Options, d Defaults) (*Core, error) {
	if err := opts.CheckRates(); err != nil {
		return nil, err
	}
	if opts.Latency <= 0 {
		opts.Latency = cmp.Or(d.Latency, DefaultLatency)
	}
	if opts.MaxConcurrent == 0 {
		opts.MaxConcurrent = d.MaxConcurrent
	}
	if opts.RPM == 0 {
		opts.RPM = d.RPM
	}
	if opts.URLTTL <= 0 {
		opts.URLTTL = d.URLTTL
	}
	c := &Core{
		Opts:      opts,
		now:       opts.Clock(),
		limit:     NewLimiter(opts.RPM),
		queue:     NewQueue(opts.MaxConcurrent),
		media:     NewMediaCache(MediaCacheSize),
		errDraw:   NewDraw(opts.Seed, StreamError),
		truncDraw: NewDraw(opts.Seed, StreamTruncate),
		loseDraw:  NewDraw(opts.Seed, StreamLose),
		runs:      map[string]*Run{},
		creates:   map[string]int{},
	}
	if opts.DataDir == "" {
		return c, nil
	}
	st, err := OpenStore(opts.DataDir)
	if err != nil {
		return nil, fmt.Errorf("simulator: %w", err)
	}
	c.store = st
	err = st.Load(func(path string, b []byte) error {
		var f runFile
		if err := json.Unmarshal(b, &f); err != nil {
			return fmt.Errorf("decoding saved job %s: %w", path, err)
		}
		if f.Version != runFileVersion || f.Run == nil {
			return fmt.Errorf("saved job %s has format version %d; this simulator reads version %d", path, f.Version, runFileVersion)
		}
		c.runs[f.ID] = f.Run
		c.creates[f.Fingerprint]++
		c.queue.Holds(f.TokenSHA256, f.FinishAt())
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("simulator: %w", err)
	}
	return c, nil
}

const runFileVersion = 1

type runFile struct {
	Version int `json:"version"`
	*Run
}

// Now is the core's clock.
func (c *Core) Now() time.Time { return c.now() }

// Gate runs the steps every API request takes before its endpoint, in
// this order: it is counted, its key (sent as "Authorization: scheme
// key") is checked, the request rate admits it, and ErrorRate may answer
// it 500 (sparing creates under ReadErrorsOnly). It returns the key's
// owner, or false once refuse has answered.
func (c *Core) Gate(w http.ResponseWriter, r *http.Request, scheme string, create bool, refuse Refusal) (string, bool) {
	c.mu.Lock()
	c.requests++
	c.mu.Unlock()
	key := KeyOf(r, scheme)
	switch {
	case key == "":
		refuse(w, http.StatusUnauthorized, "missing API key: send the header Authorization: "+scheme+" <key>", 0)
		return "", false
	case c.Opts.Token != "" && subtle.ConstantTimeCompare([]byte(key), []byte(c.Opts.Token)) != 1:
		refuse(w, http.StatusUnauthorized, "invalid API key", 0)
		return "", false
	}
	owner := Owner(key)
	if retryAfter, ok := c.limit.Admit(owner, c.now()); !ok {
		c.mu.Lock()
		c.throttled++
		c.mu.Unlock()
		refuse(w, http.StatusTooManyRequests, fmt.Sprintf("request was throttled: at most %d requests per minute", c.Opts.RPM), retryAfter)
		return "", false
	}
	if !(create && c.Opts.ReadErrorsOnly) && c.errDraw.Happens(c.Opts.ErrorRate) {
		refuse(w, http.StatusInternalServerError, "internal server error (injected by the simulator's error rate)", 0)
		return "", false
	}
	return owner, true
}

// Make records a new job: its fingerprint counted, its end decided
// (its prompt's markers, then FailRate), its start behind the queue, and
// the job saved before its id is handed out. r carries everything else.
func (c *Core) Make(r *Run) error {
	fp, err := Fingerprint(r.Endpoint, r.Body)
	if err != nil {
		return err
	}
	r.Fingerprint = fp
	end, weird := PromptEnd(r.Prompt)
	r.End, r.Weird = end, weird
	if r.Latency <= 0 {
		r.Latency = c.Opts.Latency
	}
	if strings.Contains(r.Prompt, SlowMarker) {
		r.Latency *= 20
	}
	r.StartAt = c.queue.Start(r.TokenSHA256, r.CreatedAt, r.Latency)
	c.mu.Lock()
	if r.End == Succeed && FailsAtRandom(c.Opts.Seed, c.Opts.FailRate, fp, c.creates[fp]) {
		r.End = Fail
	}
	c.runs[r.ID] = r
	c.creates[fp]++
	snapshot := *r
	c.mu.Unlock()
	if c.store == nil {
		return nil
	}
	if err := c.save(&snapshot); err != nil {
		c.mu.Lock()
		delete(c.runs, r.ID)
		c.creates[fp]--
		c.mu.Unlock()
		return err
	}
	return nil
}

// Lose reports whether the answer of the create just made is to be lost
// (LoseRate): the caller then drops the connection (Drop).
func (c *Core) Lose() bool { return c.loseDraw.Happens(c.Opts.LoseRate) }

// Get returns a copy of job id when owner owns it, counting a status or
// a detail request of it.
func (c *Core) Get(id, owner string, detail bool) (Run, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.runs[id]
	if !ok || r.TokenSHA256 != owner {
		return Run{}, false
	}
	if detail {
		r.DetailRequests++
	} else {
		r.StatusRequests++
	}
	r.dirty = true
	return *r, true
}

// Cancel sets the cancel time of job id of owner to now, when it has
// none, and returns a copy of it.
func (c *Core) Cancel(id, owner string, now time.Time) (Run, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.runs[id]
	if !ok || r.TokenSHA256 != owner {
		return Run{}, false
	}
	if r.CanceledAt.IsZero() {
		r.CanceledAt = now
		r.dirty = true
	}
	return *r, true
}

// List returns copies of owner's jobs, newest first.
func (c *Core) List(owner string) []Run {
	c.mu.Lock()
	var out []Run
	for _, r := range c.runs {
		if r.TokenSHA256 == owner {
			out = append(out, *r)
		}
	}
	c.mu.Unlock()
	slices.SortFunc(out, func(a, b Run) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	return out
}

// Expired reports whether the outputs of a job that finished at
// finished have expired at now (URLTTL).
func (c *Core) Expired(finished, now time.Time) bool {
	return !now.Before(finished.Add(c.Opts.URLTTL))
}

// ServeFile serves file i of job id, which needs no key (like the
// providers' CDN links): 404 before the job succeeded, for a file it has
// not, and once URLTTL has passed since it finished.
func (c *Core) ServeFile(w http.ResponseWriter, r *http.Request, id string, i int, notFound func(w http.ResponseWriter, msg string)) {
	now := c.now()
	c.mu.Lock()
	run, ok := c.runs[id]
	var snap Run
	if ok {
		snap = *run
	}
	c.mu.Unlock()
	if !ok {
		notFound(w, "no such file: "+r.URL.Path)
		return
	}
	if st, _, _ := snap.StageAt(now); st != Finished || snap.End != Succeed {
		notFound(w, "no such file: "+r.URL.Path)
		return
	}
	if c.Expired(snap.FinishAt(), now) {
		notFound(w, "the file has expired and was deleted: "+r.URL.Path)
		return
	}
	f, err := c.media.Get(fmt.Sprintf("%s/%d", id, i), func() (*Cached, error) {
		f, ok, err := snap.Render(snap.Model, i)
		if !ok {
			return nil, err
		}
		return f, err
	})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if f == nil {
		notFound(w, "no such file: "+r.URL.Path)
		return
	}
	c.mu.Lock()
	c.downloads++
	c.mu.Unlock()
	SendMedia(w, r, f, c.truncDraw, c.Opts.TruncateRate)
}

// Jobs is the report of GET /_sim/jobs, each job's status named by
// status from its stage and progress.
func (c *Core) Jobs(status func(r *Run, st Stage, progress float64) string) JobsReport {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	jobs := make([]JobInfo, 0, len(c.runs))
	for _, r := range c.runs {
		st, p, _ := r.StageAt(now)
		jobs = append(jobs, JobInfo{
			ID: r.ID, Endpoint: r.Endpoint, Body: r.Body, Status: status(r, st, p), Progress: p,
			CreatedAt: r.CreatedAt, Fingerprint: r.Fingerprint, Seed: r.Seed,
			StatusRequests: r.StatusRequests, DetailRequests: r.DetailRequests,
		})
	}
	return NewJobsReport(jobs, c.creates, c.requests, c.throttled, c.downloads)
}

// Close writes the request counters and cancellations of every job to
// DataDir. The simulator keeps answering afterwards.
func (c *Core) Close() error {
	if c.store == nil {
		return nil
	}
	return Flush(&c.mu, c.runs, func(r *Run) *bool { return &r.dirty }, c.save)
}

// save writes r to the data directory, compact so that its body stays
// byte for byte the body received.
func (c *Core) save(r *Run) error {
	b, err := json.Marshal(runFile{Version: runFileVersion, Run: r})
	if err != nil {
		return fmt.Errorf("encoding job %s: %w", r.ID, err)
	}
	return c.store.Write(r.ID, b)
}

// BaseURL is the scheme and host the client reached the server at, so
// the URLs a simulator hands out work through whatever address the
// client used.
func BaseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
