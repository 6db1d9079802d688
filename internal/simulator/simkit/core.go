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

// Defaults are what an API sets that its simulator's Options leave
// open: its documented limits and lifetimes, which Options left at zero
// take, and the two ways its jobs may differ from the live providers'
// usual ones.
type Defaults struct {
	// Latency zero is DefaultLatency.
	Latency       time.Duration
	MaxConcurrent int
	RPM           int
	URLTTL        time.Duration
	// RefuseOverLimit makes a create past MaxConcurrent refused (Make
	// returns a *Busy), where the live providers queue it until a slot
	// frees up.
	RefuseOverLimit bool
	// Format, when set, is how the jobs are written to DataDir and read
	// back: an API whose job files are its own. Nil is Run's format.
	Format *JobFormat
}

// JobFormat is how a simulator keeps its jobs in DataDir when their
// files are its own: files written by an earlier version of it must
// still load, or a client could no longer find what it paid for.
type JobFormat struct {
	// Encode is the file of job r.
	Encode func(r *Run) ([]byte, error)
	// Decode is the job the file at path holds (b); its error stops the
	// simulator from starting rather than drop the job.
	Decode func(path string, b []byte) (*Run, error)
}

// runFormat is Run's own format: the run as compact JSON, so that its
// body stays byte for byte the body received, with a version.
var runFormat = JobFormat{
	Encode: func(r *Run) ([]byte, error) {
		return json.Marshal(runFile{Version: runFileVersion, Run: r})
	},
	Decode: func(path string, b []byte) (*Run, error) {
		var f runFile
		if err := json.Unmarshal(b, &f); err != nil {
			return nil, fmt.Errorf("decoding saved job %s: %w", path, err)
		}
		if f.Version != runFileVersion || f.Run == nil {
			return nil, fmt.Errorf("saved job %s has format version %d; this simulator reads version %d", path, f.Version, runFileVersion)
		}
		return f.Run, nil
	},
}

// BadBody is Make's refusal of a body it cannot fingerprint (a number
// beyond a float64's range): the client's error, not the simulator's.
type BadBody struct{ Err error }

func (e *BadBody) Error() string { return e.Err.Error() }

func (e *BadBody) Unwrap() error { return e.Err }

// Busy is Make's refusal of a create past the concurrency limit, under
// Defaults.RefuseOverLimit.
type Busy struct {
	// RetryAfter is in how many whole seconds (at least 1) the key's
	// first unfinished job finishes.
	RetryAfter int
}

func (b *Busy) Error() string {
	return fmt.Sprintf("too many unfinished jobs: the first finishes in %ds", b.RetryAfter)
}

// DefaultLatency is how long a job takes when neither Options nor the
// provider's Defaults say. No provider documents how long a generation
// takes, so the simulators share one short enough for a script to wait
// out.
const DefaultLatency = 2 * time.Second

// Refusal writes an error answer in a provider's own shape: status, its
// message, and a Retry-After in seconds when positive.
type Refusal func(w http.ResponseWriter, status int, msg string, retryAfter int)

// Core is the state and the steps every simulator shares: its jobs, the
// creates per fingerprint, the key check, the request rate, the
// concurrency limit (a queue, or a refusal), injected errors, lost
// answers, persistence and media files. The simulator's package keeps
// its paths, fields, statuses and error bodies. It is safe for
// concurrent use.
type Core struct {
	Opts Options
	now  func() time.Time

	limit  *Limiter
	queue  *Queue
	refuse bool // past the concurrency limit, refuse rather than queue
	store  *JobFiles
	format JobFormat
	media  *MediaCache

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
		refuse:    d.RefuseOverLimit,
		format:    runFormat,
		media:     NewMediaCache(MediaCacheSize),
		errDraw:   NewDraw(opts.Seed, StreamError),
		truncDraw: NewDraw(opts.Seed, StreamTruncate),
		loseDraw:  NewDraw(opts.Seed, StreamLose),
		runs:      map[string]*Run{},
		creates:   map[string]int{},
	}
	if d.Format != nil {
		c.format = *d.Format
	}
	if opts.DataDir == "" {
		return c, nil
	}
	st, err := OpenJobFiles(opts.DataDir)
	if err != nil {
		return nil, fmt.Errorf("simulator: %w", err)
	}
	c.store = st
	err = st.Load(func(path string, b []byte) error {
		r, err := c.format.Decode(path, b)
		if err != nil {
			return err
		}
		c.runs[r.ID] = r
		c.creates[r.Fingerprint]++
		c.queue.Holds(r.TokenSHA256, r.FinishAt())
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

// The messages of the gate's refusals. A wrong key is refused with
// WrongKey, a missing one with another message; an API may reword them
// (the two 401s are told apart by this one).
const WrongKey = "invalid API key"

// Gate runs the steps every API request takes before its endpoint, in
// this order: it is counted, its key (sent as "Authorization: scheme
// key") is checked, the request rate admits it, and ErrorRate may answer
// it 500 (sparing creates under ReadErrorsOnly). It returns the key's
// owner and the instant the request was admitted at (the clock is read
// once, by the rate's admission), or false once refuse has answered.
func (c *Core) Gate(w http.ResponseWriter, r *http.Request, scheme string, create bool, refuse Refusal) (string, time.Time, bool) {
	c.mu.Lock()
	c.requests++
	c.mu.Unlock()
	key := KeyOf(r, scheme)
	switch {
	case key == "":
		refuse(w, http.StatusUnauthorized, "missing API key: send the header Authorization: "+scheme+" <key>", 0)
		return "", time.Time{}, false
	case c.Opts.Token != "" && subtle.ConstantTimeCompare([]byte(key), []byte(c.Opts.Token)) != 1:
		refuse(w, http.StatusUnauthorized, WrongKey, 0)
		return "", time.Time{}, false
	}
	owner := Owner(key)
	now := c.now()
	if retryAfter, ok := c.limit.Admit(owner, now); !ok {
		c.mu.Lock()
		c.throttled++
		c.mu.Unlock()
		refuse(w, http.StatusTooManyRequests, fmt.Sprintf("request was throttled: at most %d requests per minute", c.Opts.RPM), retryAfter)
		return "", time.Time{}, false
	}
	if !(create && c.Opts.ReadErrorsOnly) && c.errDraw.Happens(c.Opts.ErrorRate) {
		refuse(w, http.StatusInternalServerError, "internal server error (injected by the simulator's error rate)", 0)
		return "", time.Time{}, false
	}
	return owner, now, true
}

// Make records a new job: its fingerprint counted (a *BadBody when
// there is none), its end decided
// (its prompt's markers, then FailRate), its start behind the queue (or,
// under RefuseOverLimit, at once or not at all: a *Busy), and the job
// saved before its id is handed out. r carries everything else. An End
// set before Make stands in place of the prompt's markers: an API whose
// markers are its own (the reference service's "[fail]" alone) decides
// it, and leaves Prompt empty.
func (c *Core) Make(r *Run) error {
	fp, err := Fingerprint(r.Endpoint, r.Body)
	if err != nil {
		return &BadBody{Err: err}
	}
	r.Fingerprint = fp
	if r.End == "" {
		r.End, r.Weird = PromptEnd(r.Prompt)
	}
	if r.Latency <= 0 {
		r.Latency = c.Opts.Latency
	}
	if strings.Contains(r.Prompt, SlowMarker) {
		r.Latency *= 20
	}
	if c.refuse {
		retryAfter, ok := c.queue.Take(r.TokenSHA256, r.CreatedAt, r.Latency)
		if !ok {
			c.mu.Lock()
			c.throttled++
			c.mu.Unlock()
			return &Busy{RetryAfter: retryAfter}
		}
		r.StartAt = r.CreatedAt
	} else {
		r.StartAt = c.queue.Start(r.TokenSHA256, r.CreatedAt, r.Latency)
	}
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
		c.queue.Release(r.TokenSHA256, r.FinishAt())
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

// Peek returns a copy of job id, whoever owns it, counting nothing: what
// a file link, which needs no key, names.
func (c *Core) Peek(id string) (Run, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.runs[id]
	if !ok {
		return Run{}, false
	}
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
	snap, ok := c.Peek(id)
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
	found, err := c.Send(w, r, fmt.Sprintf("%s/%d", id, i), func() (*Cached, error) {
		f, ok, err := snap.Render(snap.Model, i)
		if !ok {
			return nil, err
		}
		return f, err
	})
	switch {
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	case !found:
		notFound(w, "no such file: "+r.URL.Path)
	}
}

// Send serves the media file name, from the media cache or rendered by
// render on a miss, and counts the download; the TruncateRate share of
// downloads is cut short (SendMedia). found is false when render has no
// such file (it returns nil), and an error is render's: either way
// nothing is written, for the caller to answer in its API's words.
func (c *Core) Send(w http.ResponseWriter, r *http.Request, name string, render func() (*Cached, error)) (found bool, err error) {
	f, err := c.media.Get(name, render)
	if err != nil || f == nil {
		return false, err
	}
	c.mu.Lock()
	c.downloads++
	c.mu.Unlock()
	SendMedia(w, r, f, c.truncDraw, c.Opts.TruncateRate)
	return true, nil
}

// Phase is a job's status, in its API's words, and its progress (0..1)
// at now, as the jobs report gives them.
type Phase func(r *Run, now time.Time) (status string, progress float64)

// Jobs is the report of GET /_sim/jobs, each job's status and progress
// given by phase.
func (c *Core) Jobs(phase Phase) JobsReport {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	jobs := make([]JobInfo, 0, len(c.runs))
	for _, r := range c.runs {
		status, p := phase(r, now)
		jobs = append(jobs, JobInfo{
			ID: r.ID, Endpoint: r.Endpoint, Body: r.Body, Status: status, Progress: p,
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

// save writes r to the data directory in the simulator's format.
func (c *Core) save(r *Run) error {
	b, err := c.format.Encode(r)
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
