package reconcile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/cache"
	"github.com/genform/genform/internal/service"
	"github.com/genform/genform/internal/workdir"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// Service is what applying needs of the generation service. *service.Client
// implements it. Implementations must be safe for concurrent use.
type Service interface {
	Create(ctx context.Context, endpoint addrs.Endpoint, body []byte) (string, error)
	Status(ctx context.Context, creationID string) (service.Status, error)
	Detail(ctx context.Context, creationID string) (*service.Creation, error)
	WatermarkFreeURL(ctx context.Context, creationID string) (*service.WatermarkFreeURL, error)
	Download(ctx context.Context, mediaURL, dir, base string) (*service.Downloaded, error)
	CheckCredentials(ctx context.Context) error
}

// Phase is a step of one instance's apply, reported in Events.
type Phase uint8

// The phases an Event reports.
const (
	PhaseSubmitting  Phase = iota + 1 // the intent is recorded; the create request is being sent
	PhaseSubmitted                    // the job's id is recorded (Resumed: an earlier apply's job)
	PhaseRunning                      // the service reported Status and Progress
	PhaseDownloading                  // the outputs are being downloaded
	PhaseDone                         // the change is made and recorded
	PhaseFailed                       // the change failed with Err
	PhaseSkipped                      // not attempted, because what it depends on failed (Err)
	PhaseInterrupted                  // stopped by the interrupt; a rerun resumes it
	PhaseWarning                      // something worth telling, Err, that does not fail the change
	PhaseRetrying                     // a request failed in a way that may pass; Retry says how it is retried
)

var phaseNames = [...]string{
	PhaseSubmitting:  "submitting",
	PhaseSubmitted:   "submitted",
	PhaseRunning:     "running",
	PhaseDownloading: "downloading",
	PhaseDone:        "done",
	PhaseFailed:      "failed",
	PhaseSkipped:     "skipped",
	PhaseInterrupted: "interrupted",
	PhaseWarning:     "warning",
	PhaseRetrying:    "retrying",
}

// String is the phase's stable name.
func (p Phase) String() string {
	if p >= PhaseSubmitting && int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return fmt.Sprintf("Phase(%d)", uint8(p))
}

// Event reports progress of one instance. Events are delivered from many
// goroutines; the callback must be safe for concurrent use and quick.
type Event struct {
	Time   time.Time
	Addr   addrs.Instance
	Action plans.Action
	Phase  Phase
	// Status is the service's raw status and Progress its progress
	// (PhaseRunning); KnownStatus is false for a status the service does
	// not document, which is treated as running.
	Status      string
	Progress    float64
	KnownStatus bool
	// GenerationID is the job concerned, when there is one.
	GenerationID string
	// Resumed marks the PhaseSubmitted of a job an earlier apply submitted.
	Resumed bool
	// Files and Dir say what a finished generation or update left on disk
	// (PhaseDone).
	Files int
	Dir   string
	// PrevAddr is where a finished move came from (PhaseDone).
	PrevAddr addrs.Instance
	// Reason is the change's reason (PhaseDone of an update).
	Reason *plans.Reason
	// Err is why a change failed or was skipped, or the warning.
	Err error
	// Retry is the failed request and when it is sent again (PhaseRetrying).
	Retry *service.RetryInfo
}

// Engine applies plans.
type Engine struct {
	Config    *config.Config
	Store     *statefile.Store
	Service   Service
	ServiceID string
	// Parallelism bounds the generations in flight at once.
	Parallelism int
	// PollInterval is the longest wait between two status polls of a job.
	PollInterval time.Duration
	// Timeout bounds one generation from end to end: its create request,
	// every poll and retry, the detail and the downloads, together; past
	// it the job is left resumable (its id recorded, or, when the create
	// request itself got no answer, its intent kept with a warning). It
	// also bounds the check of the service before the first submission.
	// Zero means 30 minutes.
	Timeout time.Duration
	// Dir is the working directory output paths are relative to.
	Dir string
	// Events receives progress; nil discards it.
	Events func(Event)
}

// Failure is one instance that did not reach its planned state.
type Failure struct {
	Addr addrs.Instance
	Err  error
}

// Job is a generation left running on the service.
type Job struct {
	Addr         addrs.Instance
	GenerationID string
}

// Result is what an apply did. The address lists are in address order.
type Result struct {
	Generated, Resumed, Restored, Updated, Moved, Deleted []addrs.Instance
	Failed, Skipped                                       []Failure
	Running                                               []Job
	// Unrecorded are jobs the service accepted, and so paid for, whose ids
	// the state could not be made to hold (a full or read-only disk): the
	// user adopts each with genform import once the state can be written.
	Unrecorded []Job
	// Unfinished are jobs whose ids the state holds but whose results it
	// could not record: the next apply resumes them, paying nothing.
	Unfinished []Job
	// StateErr is why the state could not be written, when it could not:
	// from then on the apply submitted nothing new.
	StateErr    error
	Interrupted bool
	// Refused is the service's refusal of the token (it matches
	// service.ErrUnauthorized) that stopped the apply submitting; the
	// changes it cut short are neither failed nor skipped.
	Refused error
}

type applyRun struct {
	e       *Engine
	ctx     context.Context
	plan    *plans.Plan
	sem     chan struct{}
	mu      sync.Mutex
	res     *Result
	failed  map[addrs.Resource]string // resource -> why it failed
	running map[addrs.Instance]string // instance -> generation id of a job in flight
	// stateErr is set once a write to the state failed: nothing more is
	// submitted, since the next id might not be recorded either.
	stateErr error
	stop     context.CancelCauseFunc // ends ctx when the service refuses the token
	// cache keeps the files changes remove or overwrite (see cacheFor).
	cache     *cache.Cache
	cacheOnce sync.Once
}

// Apply carries out plan. Cancelling ctx is the first Ctrl-C: no new
// generation is submitted, requests already on the wire are allowed to
// record their answer, polling and downloads stop, and the jobs still running
// on the service are listed in the result so a rerun resumes them.
func (e *Engine) Apply(ctx context.Context, plan *plans.Plan) (*Result, error) {
	par := e.Parallelism
	if par < 1 {
		par = 1
	}
	r := &applyRun{
		e:       e,
		ctx:     ctx,
		plan:    plan,
		sem:     make(chan struct{}, par),
		res:     &Result{},
		failed:  map[addrs.Resource]string{},
		running: map[addrs.Instance]string{},
	}
	r.ctx, r.stop = context.WithCancelCause(ctx)
	defer r.stop(nil)
	if err := r.begin(); err != nil {
		return nil, err
	}
	changes := map[addrs.Instance]*plans.Change{}
	for _, c := range plan.Changes {
		changes[c.Addr] = c
	}

	// Moves first: they free the old addresses and put files in place for
	// what references them.
	for _, c := range plan.Changes {
		if c.Action == plans.Move {
			r.move(c)
		}
	}

	// Then the configuration's resources in dependency order, each as soon
	// as what it depends on is done.
	done := map[addrs.Resource]chan struct{}{}
	for _, res := range e.Config.Resources {
		done[res.Addr()] = make(chan struct{})
	}
	scope := config.Scope{}
	var scopeMu sync.Mutex
	var wg sync.WaitGroup
	for _, res := range e.Config.Resources {
		wg.Add(1)
		go func(res *config.Resource) {
			defer wg.Done()
			defer close(done[res.Addr()])
			for _, d := range res.Refs {
				if ch, ok := done[d]; ok {
					<-ch
				}
			}
			r.resource(res, changes, scope, &scopeMu)
		}(res)
	}
	wg.Wait()

	// Deletes last.
	for i := len(plan.Changes) - 1; i >= 0; i-- {
		if c := plan.Changes[i]; c.Action == plans.Delete {
			r.delete(c)
		}
	}

	r.pruneCache()
	r.res.Interrupted = ctx.Err() != nil
	r.res.StateErr = r.stateErr
	byJobAddr := func(a, b Job) int { return a.Addr.Compare(b.Addr) }
	slices.SortFunc(r.res.Unrecorded, byJobAddr)
	slices.SortFunc(r.res.Unfinished, byJobAddr)
	for addr, id := range r.running {
		r.res.Running = append(r.res.Running, Job{Addr: addr, GenerationID: id})
	}
	slices.SortFunc(r.res.Running, func(a, b Job) int { return a.Addr.Compare(b.Addr) })
	for _, l := range [][]addrs.Instance{r.res.Generated, r.res.Resumed, r.res.Restored, r.res.Updated, r.res.Moved, r.res.Deleted} {
		addrs.Sort(l)
	}
	byAddr := func(a, b Failure) int { return a.Addr.Compare(b.Addr) }
	slices.SortFunc(r.res.Failed, byAddr)
	slices.SortFunc(r.res.Skipped, byAddr)
	return r.res, nil
}

// resource expands one resource with its dependencies' recorded values and
// applies the changes of its instances.
func (r *applyRun) resource(res *config.Resource, changes map[addrs.Instance]*plans.Change, scope config.Scope, scopeMu *sync.Mutex) {
	e := r.e
	addr := res.Addr()
	var blocked []string
	r.mu.Lock()
	for _, d := range res.Refs {
		if why, ok := r.failed[d]; ok {
			blocked = append(blocked, fmt.Sprintf("%s (%s)", d, why))
		}
	}
	r.mu.Unlock()

	scopeMu.Lock()
	insts, diags := e.Config.Expand(res, scope)
	scopeMu.Unlock()

	var wg sync.WaitGroup
	for _, inst := range insts {
		c := changes[inst.Addr]
		if c == nil || c.Action == plans.NoOp || c.Action == plans.Move || c.Action == plans.Delete {
			continue
		}
		if len(blocked) > 0 {
			r.skip(c, fmt.Errorf("not applied because %s failed", joinList(blocked)))
			continue
		}
		if r.ctx.Err() != nil {
			continue
		}
		wg.Add(1)
		go func(inst *config.Instance, c *plans.Change) {
			defer wg.Done()
			var err error
			switch c.Action {
			case plans.Create, plans.Replace:
				err = r.generate(inst, c)
			case plans.Resume:
				err = r.resume(inst, c)
			case plans.Update:
				err = r.update(inst, c)
			case plans.Restore:
				err = r.restore(inst, c)
			}
			if err != nil {
				r.fail(c, err)
			}
		}(inst, c)
	}
	wg.Wait()
	if diags.HasErrors() {
		r.mu.Lock()
		r.failed[addr] = diags.Error()
		r.res.Failed = append(r.res.Failed, Failure{Addr: addr.Instance(addrs.NoKey), Err: diags})
		r.mu.Unlock()
	}

	// What references this resource sees its recorded values now.
	if !e.Config.Referenced(addr) {
		return
	}
	values := map[addrs.Instance]cty.Value{}
	for _, inst := range insts {
		rec, err := e.Store.Resource(inst.Addr)
		if err == nil && rec != nil && rec.Status == plans.StatusSucceed {
			values[inst.Addr] = plans.RecordValue(rec, rec.Dir)
		} else {
			values[inst.Addr] = config.UnknownInstance()
		}
	}
	scopeMu.Lock()
	scope[addr] = config.ResourceValue(res, insts, values)
	scopeMu.Unlock()
}

func joinList(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	s := items[0]
	for _, it := range items[1 : len(items)-1] {
		s += ", " + it
	}
	return s + " and " + items[len(items)-1]
}

func (r *applyRun) emit(ev Event) {
	if r.e.Events == nil {
		return
	}
	ev.Time = time.Now()
	r.e.Events(ev)
}

func (r *applyRun) fail(c *plans.Change, err error) {
	if r.refused(c, err) {
		return
	}
	if errors.Is(err, context.Canceled) && r.ctx.Err() != nil {
		r.emit(Event{Addr: c.Addr, Action: c.Action, Phase: PhaseInterrupted})
		return
	}
	r.mu.Lock()
	r.failed[c.Addr.Resource] = err.Error()
	r.res.Failed = append(r.res.Failed, Failure{Addr: c.Addr, Err: err})
	r.mu.Unlock()
	r.emit(Event{Addr: c.Addr, Action: c.Action, Phase: PhaseFailed, Err: err})
}

func (r *applyRun) skip(c *plans.Change, err error) {
	r.mu.Lock()
	r.failed[c.Addr.Resource] = "a dependency failed"
	r.res.Skipped = append(r.res.Skipped, Failure{Addr: c.Addr, Err: err})
	r.mu.Unlock()
	r.emit(Event{Addr: c.Addr, Action: c.Action, Phase: PhaseSkipped, Err: err})
}

func (r *applyRun) record(list *[]addrs.Instance, addr addrs.Instance) {
	r.mu.Lock()
	*list = append(*list, addr)
	r.mu.Unlock()
}

func (r *applyRun) setRunning(addr addrs.Instance, id string) {
	r.mu.Lock()
	if id == "" {
		delete(r.running, addr)
	} else {
		r.running[addr] = id
	}
	r.mu.Unlock()
}

// errStateUnwritable is wrapped by the refusal to submit once the state
// could not be written.
var errStateUnwritable = errors.New("the state cannot be written, so nothing more is submitted")

// stateFailed records that a write to the state failed.
func (r *applyRun) stateFailed(err error) {
	r.mu.Lock()
	if r.stateErr == nil {
		r.stateErr = err
	}
	r.mu.Unlock()
}

// commit writes a step of a paid job (its id, its record) to the state. A
// write that fails is tried again a few times over two seconds, since a
// full disk may be freed; if it still fails, nothing more is submitted.
func (r *applyRun) commit(fn func(tx *statefile.Tx) error) error {
	var err error
	for _, wait := range commitWaits {
		time.Sleep(wait)
		if err = r.e.Store.Batch(fn); err == nil {
			return nil
		}
	}
	r.stateFailed(err)
	return err
}

// commitWaits are the waits before each try of commit: two seconds in
// all (a variable so that tests wait less).
var commitWaits = []time.Duration{0, 100 * time.Millisecond, 500 * time.Millisecond, 1500 * time.Millisecond}

// unrecorded notes a paid job whose result the state does not hold.
func (r *applyRun) unrecorded(addr addrs.Instance, id string, idKept bool) {
	r.mu.Lock()
	if idKept {
		r.res.Unfinished = append(r.res.Unfinished, Job{Addr: addr, GenerationID: id})
	} else {
		r.res.Unrecorded = append(r.res.Unrecorded, Job{Addr: addr, GenerationID: id})
	}
	r.mu.Unlock()
}

// acquire takes a generation slot; it fails when the apply is interrupted,
// or when the state could not be written.
func (r *applyRun) acquire() error {
	r.mu.Lock()
	serr := r.stateErr
	r.mu.Unlock()
	if serr != nil {
		return fmt.Errorf("%w (%v)", errStateUnwritable, serr)
	}
	select {
	case r.sem <- struct{}{}:
		if r.ctx.Err() != nil {
			<-r.sem
			return r.ctx.Err()
		}
		return nil
	case <-r.ctx.Done():
		return r.ctx.Err()
	}
}

// slot returns the release function of a generation slot just acquired;
// calling it more than once releases once. A job stops counting against
// parallelism as soon as the service reports it finished: detail and
// downloads are local work and must not hold the next job back.
func (r *applyRun) slot() func() {
	var once sync.Once
	return func() { once.Do(func() { <-r.sem }) }
}

// generate submits a new generation of inst, write-ahead: the intent is
// committed before the request leaves, the generation id as soon as it is
// known, and only then is the job polled.
func (r *applyRun) generate(inst *config.Instance, c *plans.Change) error {
	e := r.e
	if inst.Request == nil {
		return fmt.Errorf("the request of %s still depends on values that are not known; apply what it references first", inst.Addr)
	}
	// Refuse before paying for a generation whose files could not be kept.
	if err := workdir.CheckInside(e.Dir, inst.Dir); err != nil {
		return err
	}
	// An abandoned job is followed and kept before its intent is
	// replaced by the new one.
	if err := r.keepJob(inst.Addr, inst.Dir, r.interruptedJob(inst.Addr, c.Reason)); err != nil {
		return err
	}
	if err := r.acquire(); err != nil {
		return err
	}
	release := r.slot()
	defer release()
	ctx, cancel := r.generation(inst.Addr)
	defer cancel()
	fp := config.Fingerprint(e.ServiceID, inst.Endpoint, inst.Request)
	// A saved plan is checked against the configuration's hash, but a file
	// read by file() or a value from env() can change without changing it:
	// never submit a request other than the one the plan showed.
	if c.Fingerprint != "" && c.Fingerprint != fp {
		return fmt.Errorf("the request of %s is no longer the one the plan showed (a file or environment value it reads changed); nothing was submitted: run plan again", inst.Addr)
	}
	intent := &statefile.Intent{
		Addr:        inst.Addr,
		Endpoint:    inst.Endpoint,
		Fingerprint: fp,
		Request:     inst.Request,
		CreatedAt:   time.Now().UTC(),
	}
	if err := e.Store.Batch(func(tx *statefile.Tx) error {
		// The state names the service it is made with, from its first
		// submission on, in the same transaction.
		if err := tx.SetService(e.ServiceID); err != nil {
			return err
		}
		return tx.RecordIntent(intent)
	}); err != nil {
		// Nothing is paid for yet; the next submissions would fail alike.
		r.stateFailed(err)
		return fmt.Errorf("recording the intent to submit %s: %w; nothing was submitted", inst.Addr, err)
	}
	r.emit(Event{Addr: inst.Addr, Action: c.Action, Phase: PhaseSubmitting})

	// A create request already on the wire is allowed to finish after the
	// first Ctrl-C, so that its generation id is recorded rather than lost;
	// the generation's deadline still bounds it.
	deadline, _ := ctx.Deadline()
	if most := time.Now().Add(2 * time.Minute); most.Before(deadline) {
		deadline = most
	}
	cctx, ccancel := context.WithDeadlineCause(context.WithoutCancel(ctx), deadline, errGenerationTimeout)
	id, err := e.Service.Create(cctx, inst.Endpoint, inst.Request)
	if context.Cause(cctx) == errGenerationTimeout && err != nil {
		err = fmt.Errorf("%w (no answer within %s, the service timeout)", err, r.timeout())
	}
	ccancel()
	answered := time.Now()
	if err != nil {
		if errors.Is(err, service.ErrAmbiguousCreate) {
			return fmt.Errorf("submitting %s: %w; the service may have created the job, so the intent is kept and the next plan warns about it", inst.Addr, err)
		}
		if derr := e.Store.Batch(func(tx *statefile.Tx) error { return tx.ClearIntent(inst.Addr) }); derr != nil {
			return fmt.Errorf("submitting %s: %w (and clearing its intent: %v)", inst.Addr, err, derr)
		}
		if _, answered := errors.AsType[*service.Error](err); answered {
			return fmt.Errorf("the service refused %s: %w", inst.Addr, err)
		}
		// No answer, and the client knows the request was not sent (a
		// connection refused, a name not found): not a refusal.
		return fmt.Errorf("could not submit %s: %w; the request did not reach the service, so nothing was paid for", inst.Addr, err)
	}
	intent.GenerationID = id
	intent.SubmittedAt = answered.UTC()
	idKept := true
	if err := r.commit(func(tx *statefile.Tx) error { return tx.RecordIntent(intent) }); err != nil {
		// The job is paid for: its id is kept here and the job followed
		// to the end, where recording it is tried again.
		idKept = false
		r.emit(Event{Addr: inst.Addr, Action: c.Action, Phase: PhaseWarning, GenerationID: id,
			Err: fmt.Errorf("recording job %s in the state: %w; the job is followed, and its id kept until it can be recorded", id, err)})
	}
	r.emit(Event{Addr: inst.Addr, Action: c.Action, Phase: PhaseSubmitted, GenerationID: id})
	if err := r.finish(ctx, inst, c, intent, idKept, release); err != nil {
		return err
	}
	r.record(&r.res.Generated, inst.Addr)
	return nil
}

// resume polls a job an earlier apply submitted.
func (r *applyRun) resume(inst *config.Instance, c *plans.Change) error {
	e := r.e
	if err := r.acquire(); err != nil {
		return err
	}
	release := r.slot()
	defer release()
	ctx, cancel := r.generation(inst.Addr)
	defer cancel()
	var intent *statefile.Intent
	err := e.Store.Update(func(tx *statefile.Tx) error {
		var err error
		intent, err = tx.Intent(inst.Addr)
		return err
	})
	if err != nil {
		return fmt.Errorf("reading the intent of %s: %w", inst.Addr, err)
	}
	if intent == nil || intent.GenerationID == "" {
		return fmt.Errorf("%s has no recorded job to resume; run plan again", inst.Addr)
	}
	// A job is resumed only for the request it was submitted for: a
	// request the plan could not know (its inputs come from resources
	// made in this apply) may turn out to be another one now.
	if inst.Request != nil && config.Fingerprint(e.ServiceID, inst.Endpoint, inst.Request) != intent.Fingerprint {
		return fmt.Errorf("the request of %s is no longer the one job %s was submitted for, so the job is not resumed and nothing was submitted; run plan again: it shows what to generate", inst.Addr, intent.GenerationID)
	}
	r.emit(Event{Addr: inst.Addr, Action: c.Action, Phase: PhaseSubmitted, GenerationID: intent.GenerationID, Resumed: true})
	if err := r.finish(ctx, inst, c, intent, true, release); err != nil {
		return err
	}
	r.record(&r.res.Resumed, inst.Addr)
	return nil
}

// finish waits for a submitted job, downloads its outputs and records it.
// release frees the job's generation slot once the service is done with it.
//
// idKept says whether the state holds the job's id (as an intent): when
// recording the result fails too, a job whose id is kept is resumed by the
// next apply, and one whose id is not must be adopted with genform import.
func (r *applyRun) finish(ctx context.Context, inst *config.Instance, c *plans.Change, intent *statefile.Intent, idKept bool, release func()) error {
	e := r.e
	id := intent.GenerationID
	// A job whose id the state does not hold is reported as unrecorded
	// unless its result is recorded, however finish ends (a failed poll,
	// an interrupt, a detail that cannot be read): nothing else knows it
	// was paid for.
	noted := false
	if !idKept {
		defer func() {
			if !noted {
				r.unrecorded(inst.Addr, id, false)
			}
		}()
	}
	r.setRunning(inst.Addr, id)
	st, err := r.poll(ctx, inst.Addr, c.Action, id, intent.SubmittedAt)
	release()
	if err != nil {
		if r.ctx.Err() != nil {
			return context.Canceled
		}
		return err
	}
	r.setRunning(inst.Addr, "")
	old, err := e.Store.Resource(inst.Addr)
	if err != nil {
		// The job is paid for whatever the state says: go on, and let
		// recording it say whether the state can be written.
		r.emit(Event{Addr: inst.Addr, Action: c.Action, Phase: PhaseWarning, GenerationID: id,
			Err: fmt.Errorf("reading the previous record: %w; its files are not removed", err)})
		old = nil
	}
	now := time.Now().UTC()
	rec := &statefile.Resource{
		Addr:          inst.Addr,
		Endpoint:      intent.Endpoint,
		Fingerprint:   intent.Fingerprint,
		Request:       intent.Request,
		GenerationID:  id,
		CreationID:    id,
		Status:        st.Raw,
		Dir:           inst.Dir,
		WatermarkFree: inst.WatermarkFree,
		Deps:          inst.Resource.Refs,
		CreatedAt:     now,
		UpdatedAt:     now,
	}
	if st.State == service.StateFailed {
		const failed = "the service reported the generation failed"
		if old != nil && old.Status == plans.StatusSucceed {
			// The record keeps the last good generation, its request,
			// files and hashes; the failure is kept beside it. Declaring
			// the old request again is then a no-op, and the failed one
			// again a retry.
			kept := *old
			kept.Failure = &statefile.Failure{Endpoint: intent.Endpoint, Fingerprint: intent.Fingerprint,
				Request: intent.Request, GenerationID: id, Error: failed, At: now}
			rec = &kept
		} else {
			rec.Status = plans.StatusFailed
			rec.Error = failed
		}
		if err := r.commit(func(tx *statefile.Tx) error {
			if err := tx.SetService(e.ServiceID); err != nil {
				return err
			}
			return tx.Record(rec)
		}); err != nil {
			noted = true
			r.unrecorded(inst.Addr, id, idKept)
			return fmt.Errorf("recording the failure of %s (job %s): %w", inst.Addr, id, err)
		}
		noted = true
		return fmt.Errorf("generation %s of %s failed on the service; fix the request (or retry) and apply again", id, inst.Addr)
	}

	det, err := e.Service.Detail(ctx, id)
	if err != nil {
		return fmt.Errorf("fetching the detail of %s (job %s): %w; rerun apply to resume", inst.Addr, id, r.timedOut(ctx, err))
	}
	rec.Detail = det.Raw
	rec.Status = plans.StatusSucceed
	rec.Outputs = outputsOf(inst.Resource.Kind, det)
	if len(rec.Outputs) == 0 {
		return fmt.Errorf("the service reported %s (job %s) succeeded but listed no outputs", inst.Addr, id)
	}
	// Outputs beyond what the request asked for are not paid for by this
	// request, and a service listing thousands must not fill the disk.
	if want := plans.MediaCount(inst); len(rec.Outputs) > want {
		r.emit(Event{Addr: inst.Addr, Action: c.Action, Phase: PhaseWarning, GenerationID: id,
			Err: fmt.Errorf("job %s lists %d outputs, but %d %s asked for; only the first %d %s downloaded", id, len(rec.Outputs), want, wasWere(want), want, wasWere(want))})
		rec.Outputs = rec.Outputs[:want]
	}
	r.emit(Event{Addr: inst.Addr, Action: c.Action, Phase: PhaseDownloading, GenerationID: id})
	// The files about to be overwritten or removed stay restorable.
	r.keepFiles(old)
	dlErr := r.downloadAll(ctx, rec, nil)
	// The generation is paid for and done: record it whatever the
	// downloads did, so a failed download is retried, never regenerated.
	if err := r.commit(func(tx *statefile.Tx) error {
		if err := tx.SetService(e.ServiceID); err != nil {
			return err
		}
		if err := tx.Record(rec); err != nil {
			return err
		}
		return tx.Protect(inst.Addr, inst.Resource.PreventDestroy)
	}); err != nil {
		noted = true
		r.unrecorded(inst.Addr, id, idKept)
		return fmt.Errorf("recording %s (job %s): %w", inst.Addr, id, err)
	}
	noted = true
	if old != nil {
		r.removeStale(old, rec)
	}
	if dlErr != nil {
		return fmt.Errorf("%w; the generation is recorded, rerun apply to download again (nothing is regenerated)", dlErr)
	}
	r.emit(Event{Addr: inst.Addr, Action: c.Action, Phase: PhaseDone, GenerationID: id, Files: len(rec.Outputs), Dir: rec.Dir})
	return nil
}

// outputsOf lists the files a creation offers: one per image, or the video.
func outputsOf(kind addrs.Kind, det *service.Creation) []statefile.Output {
	var outs []statefile.Output
	if kind == addrs.Video {
		o := statefile.Output{Index: 0, MediaURL: det.VideoURL, ThumbnailURL: det.ThumbnailURL}
		if len(det.Outputs) > 0 {
			o.ID = det.Outputs[0].ID
			if o.MediaURL == "" {
				o.MediaURL = det.Outputs[0].MediaURL
			}
			if det.Outputs[0].ThumbnailURL != "" {
				o.ThumbnailURL = det.Outputs[0].ThumbnailURL
			}
		}
		if o.MediaURL == "" {
			return nil
		}
		return []statefile.Output{o}
	}
	for i, out := range det.Outputs {
		outs = append(outs, statefile.Output{Index: i, ID: out.ID, MediaURL: out.MediaURL, ThumbnailURL: out.ThumbnailURL})
	}
	return outs
}

// downloadAll fetches the outputs of rec (only those in which, when not
// nil) into rec.Dir, filling in path, size, mtime and hash. An output that
// could not be fetched keeps an empty hash, so the next plan re-downloads it.
//
// A file that cannot be written here (a full disk, a read-only file
// system) stops the downloads of rec: the next would fail alike.
func (r *applyRun) downloadAll(ctx context.Context, rec *statefile.Resource, which map[int]bool) error {
	e := r.e
	var errs []error
	var wmURL string
	stopped := false
	for i := range rec.Outputs {
		o := &rec.Outputs[i]
		if which != nil && !which[o.Index] {
			continue
		}
		if stopped {
			o.SHA256 = ""
			continue
		}
		url := o.MediaURL
		if rec.Addr.Resource.Kind == addrs.Video && rec.WatermarkFree {
			if wmURL == "" {
				w, err := e.Service.WatermarkFreeURL(ctx, rec.CreationID)
				if err != nil {
					errs = append(errs, fmt.Errorf("getting the watermark-free URL of %s: %w", rec.Addr, r.timedOut(ctx, err)))
					o.SHA256 = ""
					continue
				}
				wmURL = w.URL
			}
			url = wmURL
		}
		d, err := r.download(ctx, rec.Addr, url, rec.Dir, o.Index)
		if err != nil {
			o.SHA256 = ""
			errs = append(errs, fmt.Errorf("downloading output %d of %s: %w", o.Index, rec.Addr, r.timedOut(ctx, err)))
			var le *service.LocalError
			stopped = errors.As(err, &le) || ctx.Err() != nil
			continue
		}
		o.Path = d.path
		o.Size = d.size
		o.ModTime = d.mtime
		o.SHA256 = d.sha
		o.ContentType = d.contentType
	}
	return errors.Join(errs...)
}

type fetched struct {
	path, sha, contentType string
	size                   int64
	mtime                  time.Time
}

// download fetches one file into dir as <index>.<ext>. The client retries
// what is worth retrying (truncated transfers included).
func (r *applyRun) download(ctx context.Context, addr addrs.Instance, url, dir string, index int) (*fetched, error) {
	e := r.e
	if err := workdir.CheckInside(e.Dir, dir); err != nil {
		return nil, err
	}
	abs := filepath.Join(e.Dir, filepath.FromSlash(dir))
	d, err := e.Service.Download(ctx, url, abs, strconv.Itoa(index))
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(d.Path)
	if err != nil {
		return nil, err
	}
	rel := filepath.ToSlash(filepath.Join(dir, filepath.Base(d.Path)))
	return &fetched{path: rel, sha: d.SHA256, contentType: d.ContentType, size: d.Size, mtime: fi.ModTime()}, nil
}

// removeStale deletes files of the previous generation that the new one
// did not overwrite.
func (r *applyRun) removeStale(old, cur *statefile.Resource) {
	keep := map[string]bool{}
	for _, o := range cur.Outputs {
		keep[o.Path] = true
	}
	for _, o := range old.Outputs {
		if o.Path != "" && !keep[o.Path] {
			if err := removeFile(r.e.Dir, o.Path); err != nil {
				r.emit(Event{Addr: cur.Addr, Phase: PhaseWarning, Err: fmt.Errorf("removing %s, a file of the previous generation: %w", o.Path, err)})
			}
		}
	}
	if old.Dir != cur.Dir {
		pruneDirs(r.e.Dir, old.Dir, r.e.Config.Settings.OutputDir)
	}
}

// poll waits for a job to finish. It starts fast and backs off to the poll
// interval, using the reported progress to aim the next poll at the moment
// the job should be done, so most jobs cost two or three status requests.
func (r *applyRun) poll(ctx context.Context, addr addrs.Instance, action plans.Action, id string, submitted time.Time) (service.Status, error) {
	e := r.e
	pi := e.PollInterval
	if pi <= 0 {
		pi = 5 * time.Second
	}
	timeout := r.timeout()
	// Waits count from the service's answer, not from when this apply
	// started watching: a resumed job may be nearly done already.
	start := time.Now()
	wait := min(pi, time.Second)
	first := wait
	if !submitted.IsZero() && time.Since(submitted) < timeout {
		first = max(wait-time.Since(submitted), 0)
	}
	// The last poll falls just before the generation's deadline, which
	// leaves it a moment to be answered.
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = start.Add(timeout)
	}
	reserve := min(timeout/10, time.Second)
	left := func() time.Duration { return time.Until(deadline) - reserve }
	first = max(min(first, left()), 0)
	timer := time.NewTimer(first)
	defer timer.Stop()
	lastRaw := ""
	for {
		select {
		case <-ctx.Done():
			if r.ctx.Err() != nil {
				return service.Status{}, r.ctx.Err()
			}
			if lastRaw != "" {
				return service.Status{}, fmt.Errorf("job %s of %s still %s after %s (the service timeout); it is recorded, rerun apply to resume it", id, addr, lastRaw, timeout)
			}
			return service.Status{}, fmt.Errorf("job %s of %s is not finished after %s (the service timeout); it is recorded, rerun apply to resume it", id, addr, timeout)
		case <-timer.C:
		}
		st, err := e.Service.Status(ctx, id)
		if err != nil {
			if r.ctx.Err() != nil {
				return st, r.ctx.Err()
			}
			if lastRaw != "" && context.Cause(ctx) == errGenerationTimeout {
				// The deadline came during the poll: what the job last
				// said is the news, not the request cut short.
				return st, fmt.Errorf("job %s of %s still %s after %s (the service timeout); it is recorded, rerun apply to resume it", id, addr, lastRaw, timeout)
			}
			return st, fmt.Errorf("polling %s (job %s): %w; the job is recorded, rerun apply to resume it", addr, id, r.timedOut(ctx, err))
		}
		if !st.Known && st.Raw != lastRaw {
			r.emit(Event{Addr: addr, Action: action, Phase: PhaseWarning, GenerationID: id,
				Err: fmt.Errorf("job %s reports unknown status %q; treating it as running", id, st.Raw)})
		}
		lastRaw = st.Raw
		r.emit(Event{Addr: addr, Action: action, Phase: PhaseRunning, Status: st.Raw, KnownStatus: st.Known, Progress: st.Progress, GenerationID: id})
		switch st.State {
		case service.StateDone, service.StateFailed:
			return st, nil
		}
		if left() <= 0 {
			return st, fmt.Errorf("job %s of %s still %s after %s (the service timeout); it is recorded, rerun apply to resume it", id, addr, st.Raw, timeout)
		}
		// Progress is the job's, so its age counts from submission.
		age := time.Since(start)
		if !submitted.IsZero() {
			age = time.Since(submitted)
		}
		wait = nextPoll(wait, age, st.Progress, pi)
		wait = max(min(wait, left()), 0)
		timer.Reset(wait)
	}
}

// errGenerationTimeout is the cause of a generation's context when its
// timeout (Engine.Timeout) has passed.
var errGenerationTimeout = errors.New("the service timeout passed")

// timeout is Engine.Timeout, or its default.
func (r *applyRun) timeout() time.Duration {
	if r.e.Timeout > 0 {
		return r.e.Timeout
	}
	return 30 * time.Minute
}

// generation is the context of every request one generation makes, from
// its create request to its last download: they end together when the
// timeout passes, so a service that hangs, answers never or drips its
// files cannot hold an apply past it.
func (r *applyRun) generation(addr addrs.Instance) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(r.on(addr), r.timeout(), errGenerationTimeout)
}

// timedOut says so when err came from a generation's timeout.
func (r *applyRun) timedOut(ctx context.Context, err error) error {
	if err != nil && r.ctx.Err() == nil && context.Cause(ctx) == errGenerationTimeout {
		return fmt.Errorf("%w (stopped at the service timeout, %s)", err, r.timeout())
	}
	return err
}

func wasWere(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

// nextPoll picks the wait before the next status request. While the job
// reports progress p after elapsed, it should be done near elapsed/p, so
// the next poll aims just past that; past full progress (post-processing)
// short waits follow; with no progress yet the wait doubles. The wait never
// exceeds the poll interval.
func nextPoll(prev, elapsed time.Duration, progress float64, interval time.Duration) time.Duration {
	var next time.Duration
	switch {
	case progress >= 1:
		next = elapsed / 12
	case progress > 0.02:
		next = time.Duration(float64(elapsed)/progress) - elapsed + 20*time.Millisecond
	default:
		next = prev * 2
	}
	return min(max(next, 50*time.Millisecond), interval)
}
