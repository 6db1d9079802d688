package apply

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/blobstore"
	"github.com/genform/genform/internal/cache"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// This file holds the engine and one run of it: the order in which a
// plan's changes are carried out (moves, then the configuration's
// resources in dependency order, then deletes), what stops a change
// (a failure of what it depends on), and the Result.

// Generations finds generation gid of the request fp in a history; nil
// when it holds none.
type Generations interface {
	Generation(fp, gid string) (*statefile.Resource, error)
}

// Engine applies plans.
type Engine struct {
	Config *config.Config
	Store  *statefile.Store
	// Elsewhere finds a generation a plan restores that Store's history
	// does not hold: one recorded in another workspace's state. nil looks
	// in Store only.
	Elsewhere Generations
	// Providers are the providers the engine was given, by name (the
	// reference service under addrs.Reference): what makes each change's
	// generation is chosen by its endpoint's provider.
	Providers map[string]provider.Provider
	// Connect is called (once a run for each provider) for one the engine
	// was not given when a change needs it after all: a restore whose
	// cached copy turns out changed or gone downloads its files again by
	// creation id.
	Connect func(name string) (provider.Provider, error)
	// ServiceID is the reference service's identity: the state names it
	// once a generation was made there.
	ServiceID string
	// Limits are the live providers' own settings, by name; one not
	// listed, and the reference service, take Parallelism, PollInterval
	// and Timeout.
	Limits map[string]Limits
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
	// Blobs is the object store outputs are uploaded to and fetched from
	// first; nil when none is configured.
	Blobs *blobstore.Bucket
	// Events receives progress; nil discards it.
	Events func(Event)
}

// Limits bound the jobs of one provider: each provider has its own
// generation slots, waits and timeout.
type Limits struct {
	// Parallelism bounds its generations in flight at once: the ceiling
	// of its window, which starts at Start (0: at Parallelism), narrows
	// when the provider throttles and widens again on clean answers.
	Parallelism, Start int
	// PollInterval is the longest wait between two status polls of a job.
	PollInterval time.Duration
	// Timeout bounds one generation from end to end (see Engine.Timeout).
	Timeout time.Duration
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
	// Replaced are the generated (or resumed) instances whose generation
	// replaced one they held: its files left their place (kept in the
	// cache), which the summary counts with the deletions.
	Replaced []addrs.Instance
	// Uploaded are the updates that only uploaded files the object store
	// lacked (Updated are those that downloaded files again).
	Uploaded []addrs.Instance
	// Recovered are the instances whose create answer was lost (in this
	// apply or an earlier one) and whose job was found again by listing
	// the provider's jobs; each is also Generated or Resumed.
	Recovered       []addrs.Instance
	Failed, Skipped []Failure
	Running         []Job
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
	// provider.ErrUnauthorized), or a provider's cap reached (it matches
	// provider.ErrCapReached), that stopped the apply submitting; the
	// changes it cut short are neither failed nor skipped.
	Refused error
	// Unstored are the files the object store should hold and does not
	// (its upload failed): each file and its record are kept, and the
	// next apply uploads it.
	Unstored []Unstored
	// PossiblyPaid are the instances whose create request was sent
	// without genform learning its outcome, by this apply (its answer was
	// ambiguous) or an earlier one: the service may have made, and
	// charged for, each job. Nothing is sent for them until the user
	// adopts the creation (import) or pays again (-replace).
	PossiblyPaid []PossiblyPaid
}

// PossiblyPaid is a create request whose outcome genform does not know.
type PossiblyPaid struct {
	Addr addrs.Instance
	// Provider is the name of the provider it was sent to.
	Provider string
	// SentAt is when the request was sent.
	SentAt time.Time
	// Err is what came back instead of a job id, when this apply sent it;
	// nil for one an earlier apply sent.
	Err error
}

type applyRun struct {
	e      *Engine
	ctx    context.Context
	plan   *plans.Plan
	mu     sync.Mutex
	res    *Result
	failed map[addrs.Resource]string // resource -> why it failed
	// held are the resources with an instance possibly paid for: what
	// is made from them waits.
	held    map[addrs.Resource]addrs.Instance
	running map[addrs.Instance]string // instance -> generation id of a job in flight
	// unmoved are the changes whose record could not be moved to their
	// address first (moveAhead): they are not carried out. Written before
	// the resources are applied, only read after.
	unmoved map[addrs.Instance]bool
	// moved are the records moved (old address to new), whose history
	// follows them once every move is made (moveHistory).
	moved map[addrs.Instance]addrs.Instance
	// stateErr is set once a write to the state failed: nothing more is
	// submitted, since the next id might not be recorded either.
	stateErr error
	stop     context.CancelCauseFunc // ends ctx when the service refuses the token
	// cache keeps the files changes remove or overwrite (see cacheFor).
	cache     *cache.Cache
	cacheOnce sync.Once
	// lanes are the providers the run has used, by name (see lane).
	laneMu sync.Mutex
	lanes  map[string]*lane
	// store is what the run knows of the object store.
	store storeState
}

// lane is one provider as a run uses it: its connection, guarded, or why
// it could not be made, and its generation slots and limits.
type lane struct {
	name string
	lim  Limits
	win  *window
	once sync.Once
	p    provider.Provider
	err  error
}

// start begins a run of the engine: of a plan, for Apply, or of the steps
// Import and MoveRecord take on their own (plan is nil then). The run's
// context ends with ctx, or when stop is called (the service refusing the
// token stops a run); the caller calls stop once the run is over.
func (e *Engine) start(ctx context.Context, plan *plans.Plan) *applyRun {
	r := &applyRun{
		e:       e,
		plan:    plan,
		res:     &Result{},
		failed:  map[addrs.Resource]string{},
		held:    map[addrs.Resource]addrs.Instance{},
		running: map[addrs.Instance]string{},
		lanes:   map[string]*lane{},
	}
	r.ctx, r.stop = context.WithCancelCause(ctx)
	return r
}

// Apply carries out plan. Cancelling ctx is the first Ctrl-C: no new
// generation is submitted, requests already on the wire are allowed to
// record their answer, polling and downloads stop, and the jobs still running
// on the service are listed in the result so a rerun resumes them.
func (e *Engine) Apply(ctx context.Context, plan *plans.Plan) (*Result, error) {
	r := e.start(ctx, plan)
	defer r.stop(nil)
	if err := r.begin(); err != nil {
		return nil, err
	}
	changes := map[addrs.Instance]*plans.Change{}
	for _, c := range plan.Changes {
		if c.PossiblyPaid() {
			// A provider that lists its jobs may find it again.
			if c = r.recoverEarlier(c); c.PossiblyPaid() {
				r.possiblyPaid(c.Addr, c.Provider(), c.Reason.Since, nil)
			}
		}
		changes[c.Addr] = c
	}

	// Moves first: they free the old addresses and put files in place for
	// what references them. A change that does more than move (a moved
	// block's instance whose request changed too) has its record moved
	// first, and is carried out at its new address with the others.
	for _, c := range plan.Changes {
		switch {
		case c.Action == plans.Move:
			r.move(c)
		case !c.PrevAddr.IsZero() && c.Action != plans.Delete:
			r.moveAhead(c)
		}
	}
	r.moveHistory()

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
	for _, l := range [][]addrs.Instance{r.res.Generated, r.res.Resumed, r.res.Recovered, r.res.Restored, r.res.Updated, r.res.Uploaded, r.res.Moved, r.res.Deleted, r.res.Replaced} {
		addrs.Sort(l)
	}
	byAddr := func(a, b Failure) int { return a.Addr.Compare(b.Addr) }
	slices.SortFunc(r.res.Failed, byAddr)
	slices.SortFunc(r.res.Skipped, byAddr)
	slices.SortFunc(r.res.Unstored, func(a, b Unstored) int {
		if c := a.Addr.Compare(b.Addr); c != 0 {
			return c
		}
		return cmp.Compare(a.Path, b.Path)
	})
	slices.SortFunc(r.res.PossiblyPaid, func(a, b PossiblyPaid) int { return a.Addr.Compare(b.Addr) })
	return r.res, nil
}

// providerFor is the provider that makes ep's generations, the one its
// endpoint names. One the engine was not given is connected through
// Engine.Connect the first
// time it is needed. Every call the run makes goes through the guard that
// stops it when the provider refuses the key (see guarded).
func (r *applyRun) providerFor(ep addrs.Endpoint) (provider.Provider, error) {
	l := r.lane(ep)
	l.once.Do(func() {
		l.p = r.e.Providers[l.name]
		if l.p == nil {
			if r.e.Connect != nil {
				l.p, l.err = r.e.Connect(l.name)
			} else {
				l.err = fmt.Errorf("%s is not connected", serviceName(ep))
			}
		}
		if l.err == nil {
			l.p = guarded{Provider: l.p, r: r, name: l.name}
		}
	})
	return l.p, l.err
}

// lane is the lane of ep's provider, made the first time it is asked for.
func (r *applyRun) lane(ep addrs.Endpoint) *lane {
	name := ep.Provider()
	r.laneMu.Lock()
	defer r.laneMu.Unlock()
	if l, ok := r.lanes[name]; ok {
		return l
	}
	lim := Limits{Parallelism: r.e.Parallelism, PollInterval: r.e.PollInterval, Timeout: r.e.Timeout}
	if own, ok := r.e.Limits[name]; ok {
		lim = own
	}
	if lim.PollInterval <= 0 {
		lim.PollInterval = 5 * time.Second
	}
	if lim.Timeout <= 0 {
		lim.Timeout = 30 * time.Minute
	}
	start := lim.Start
	if start <= 0 {
		start = lim.Parallelism
	}
	l := &lane{name: name, lim: lim, win: newWindow(start, lim.Parallelism)}
	r.lanes[name] = l
	return l
}

// setService records, in tx, the reference service as the one the
// state's generations are made with, when ep is one of its endpoints:
// a live provider's generations name their provider in their endpoint.
func (r *applyRun) setService(tx *statefile.Tx, ep addrs.Endpoint) error {
	if ep.Provider() != addrs.Reference {
		return nil
	}
	return tx.SetService(r.e.ServiceID)
}

// possiblyPaid notes that addr's create request, sent at sentAt, may have
// been paid for: what is made from it waits too.
func (r *applyRun) possiblyPaid(addr addrs.Instance, provider string, sentAt time.Time, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.res.PossiblyPaid = append(r.res.PossiblyPaid, PossiblyPaid{Addr: addr, Provider: provider, SentAt: sentAt, Err: err})
	if _, held := r.held[addr.Resource]; !held {
		r.held[addr.Resource] = addr
	}
}

// resource expands one resource with its dependencies' recorded values and
// applies the changes of its instances.
func (r *applyRun) resource(res *config.Resource, changes map[addrs.Instance]*plans.Change, scope config.Scope, scopeMu *sync.Mutex) {
	e := r.e
	addr := res.Addr()
	var blocked []string
	r.mu.Lock()
	for _, d := range res.Refs {
		if held, ok := r.held[d]; ok {
			blocked = append(blocked, fmt.Sprintf("%s may have been paid for and waits for your decision", held))
		} else if _, ok := r.failed[d]; ok {
			// Its error is reported with it, once.
			blocked = append(blocked, fmt.Sprintf("%s failed", d))
		}
	}
	r.mu.Unlock()

	scopeMu.Lock()
	insts, diags := e.Config.Expand(res, scope)
	scopeMu.Unlock()

	var wg sync.WaitGroup
	for _, inst := range insts {
		c := changes[inst.Addr]
		if c == nil || c.Action == plans.NoOp || c.Action == plans.Move || c.Action == plans.Delete || r.unmoved[c.Addr] {
			continue
		}
		// An update keeps its generation: it moves, downloads or uploads
		// its own files, which need nothing of what it is made from.
		if len(blocked) > 0 && c.Action != plans.Update {
			r.skip(c, fmt.Errorf("not applied because %s", joinList(blocked)))
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
			values[inst.Addr] = plans.RecordValue(e.Dir, rec, rec.Dir)
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
