package reconcile

import (
	"encoding/json"
	"fmt"
	"runtime"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"golang.org/x/sync/errgroup"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/cache"
	"github.com/genform/genform/internal/workdir"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// PlanInput is what planning reads.
type PlanInput struct {
	Config *config.Config
	// State is a snapshot of the state; nil when there is no state file yet.
	State *statefile.Snapshot
	// Service is the service identity that enters fingerprints.
	Service string
	// Targets limits the plan to these addresses and what they depend on.
	Targets []addrs.Instance
	// Replace forces these instances to be generated anew.
	Replace []addrs.Instance
	// Refresh checks output files on disk (size and mtime, hashing only
	// files whose size or mtime changed).
	Refresh bool
	// Dir is the working directory output paths are relative to ("" for
	// the current directory).
	Dir string
	// History finds earlier generations of a request, to restore them
	// rather than generate anew; nil plans without the history.
	History History
}

// History is what planning reads of the state's history.
// *statefile.Store implements it.
type History interface {
	// Generations returns the history's entries for the request whose
	// fingerprint is fp, the most recently made first.
	Generations(fp string) ([]*statefile.Resource, error)
}

// WorkspaceHistory is a History that reads several workspaces' states,
// and says which one recorded an entry: "" for the plan's own.
type WorkspaceHistory interface {
	History
	WorkspaceOf(e *statefile.Resource) string
}

type planner struct {
	in      PlanInput
	state   *statefile.Snapshot
	plan    *plans.Plan
	diags   hcl.Diagnostics
	changed map[addrs.Resource]bool // resources with a generating change
	replace map[addrs.Instance]bool
	used    map[addrs.Instance]bool // replace addresses that matched an instance
	// orphans indexes records that left the configuration by fingerprint,
	// so a create of the same request becomes a move.
	orphans map[string][]*statefile.Resource
	claimed map[addrs.Instance]bool // orphan addresses taken by a move
	// recorded are the state's addresses in order; planned[i] is set once
	// recorded[i] is planned as a declared instance; byRes is where each
	// resource's addresses are in recorded, which holds them side by side.
	// (A slice, not a set of every address: a large no-op plan would hold
	// one more map of all its instances; and a span, not a list of
	// indexes, which would be an allocation for each resource.)
	recorded []addrs.Instance
	planned  []bool
	byRes    map[addrs.Resource]span
	// intentDone holds the addresses of intents a change already covers.
	intentDone map[addrs.Instance]bool
	// prevService is the state's service when it differs from the one
	// planned for (a switch the user asked for).
	prevService string
	// held are the generation ids the state's records hold, and claimed
	// those this plan restores: a generation has one holder at a time.
	// held is filled at the first history lookup.
	held, claimedGen map[string]bool
	// cache is the local cache restores take files from.
	cache *cache.Cache
	// block is what is left of the block newChange cuts Changes from.
	block []plans.Change
	// inCache reports whether the local cache holds a file's bytes, for
	// decideLocal: made once per plan, as a method value allocates and
	// the cache's path is resolved against the working directory.
	inCache func(sha string) bool
	// moves is what the moved blocks did to the state; nil when the
	// configuration has none.
	moves *moves
}

// MakePlan compares the configuration with the state and the files on disk.
func MakePlan(in PlanInput) (*plans.Plan, hcl.Diagnostics) {
	st := in.State
	if st == nil {
		st = &statefile.Snapshot{}
	}
	p := &planner{
		in:         in,
		state:      st,
		changed:    map[addrs.Resource]bool{},
		replace:    map[addrs.Instance]bool{},
		used:       map[addrs.Instance]bool{},
		orphans:    map[string][]*statefile.Resource{},
		claimed:    map[addrs.Instance]bool{},
		byRes:      make(map[addrs.Resource]span, len(in.Config.Resources)),
		intentDone: map[addrs.Instance]bool{},
		plan: &plans.Plan{
			Service:    in.Service,
			Lineage:    st.Meta.Lineage,
			Serial:     st.Meta.Serial,
			ConfigHash: in.Config.Hash,
			Targets:    in.Targets,
			Replace:    in.Replace,
			Prices:     in.Config.Service.Prices,
		},
	}
	for _, a := range in.Replace {
		p.replace[a] = true
	}
	if in.History != nil && in.Config.Settings.Restore {
		p.cache = workdir.CacheOf(in.Config, in.Dir)
		p.inCache = p.cache.Has
	} else {
		p.in.History = nil
		p.inCache = workdir.CacheOf(in.Config, in.Dir).Has
	}
	if st.Meta.Service != "" && st.Meta.Service != in.Service {
		p.prevService = st.Meta.Service
	}
	cfg := in.Config
	if len(cfg.Moved) > 0 {
		st = p.applyMoves(st)
		p.state = st
	}

	// Records of resources no longer declared can be claimed by a rename.
	p.recorded = addrs.SortedKeys(st.Resources)
	p.planned = make([]bool, len(p.recorded))
	for i := 0; i < len(p.recorded); {
		res := p.recorded[i].Resource
		j := i + 1
		for j < len(p.recorded) && p.recorded[j].Resource == res {
			j++
		}
		p.byRes[res] = span{lo: i, hi: j}
		for ; cfg.Resource(res) == nil && i < j; i++ {
			p.addOrphan(st.Resources[p.recorded[i]])
		}
		i = j
	}

	// The scope holds a value for each resource something refers to:
	// room for every resource would be a map of them all, held empty
	// through the plan.
	nReferenced := 0
	for _, r := range cfg.Resources {
		if cfg.Referenced(r.Addr()) {
			nReferenced++
		}
	}
	scope := make(config.Scope, nReferenced)
	var pre []prepared // of resources from prepFrom on
	prepFrom := 0
	// A window at a time: the instances of every resource at once would
	// hold all their cty values for the whole walk. The next window is
	// prepared while this one is walked, so the cores that prepare does
	// not need for the walk are not idle. prepare reads only the
	// configuration and the snapshot, which the walk does not change.
	prepareFrom := func(k int) <-chan []prepared {
		ch := make(chan []prepared, 1)
		go func() { ch <- p.prepare(cfg.Resources[k:min(k+prepareWindow, len(cfg.Resources))]) }()
		return ch
	}
	next := prepareFrom(0)
	for k, r := range cfg.Resources {
		if k-prepFrom == len(pre) {
			prepFrom = k
			pre = <-next
			if k+len(pre) < len(cfg.Resources) {
				next = prepareFrom(k + len(pre))
			}
		}
		pr := &pre[k-prepFrom]
		if pr.large {
			p.planInWindows(r)
			*pr = prepared{}
			continue
		}
		insts, facts := pr.insts, pr.facts
		if !pr.done {
			var diags hcl.Diagnostics
			insts, diags = cfg.Expand(r, scope)
			p.diags = append(p.diags, diags...)
			if diags.HasErrors() {
				continue
			}
			facts = p.facts(insts)
		}
		// Instances of this resource that its expansion no longer yields
		// (count lowered, for_each key removed) may be claimed too.
		p.markYielded(r, len(insts), func(j int) addrs.Instance { return insts[j].Addr })
		// Only what something refers to needs a value in the scope; for a
		// large configuration that is few of its resources.
		referenced := cfg.Referenced(r.Addr())
		var values map[addrs.Instance]cty.Value
		if referenced {
			values = make(map[addrs.Instance]cty.Value, len(insts))
		}
		for j, inst := range insts {
			c, rec, dir := p.planInstance(r, inst, facts[j])
			p.add(c)
			if referenced {
				v := config.UnknownInstance()
				if rec != nil {
					v = plans.RecordValue(p.in.Dir, rec, dir)
				}
				values[inst.Addr] = v
			}
			if c.Action.Generates() || c.Action == plans.Resume {
				p.changed[r.Addr()] = true
			}
		}
		if referenced {
			scope[r.Addr()] = config.ResourceValue(r, insts, values)
		}
		*pr = prepared{}
	}

	if p.moves != nil {
		p.checkMoves()
	}
	// What is left in state and not declared is deleted. Every declared
	// instance has its change by now.
	for i, addr := range p.recorded {
		if p.planned[i] || p.claimed[addr] {
			continue
		}
		if p.moves != nil && !p.moves.from[addr].IsZero() {
			p.diags = append(p.diags, p.undeclaredMove(addr))
			continue
		}
		p.intentDone[addr] = true // forgetting the record forgets its intent
		rec := st.Resources[addr]
		if st.Protections[addr] {
			p.diags = append(p.diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Instance cannot be destroyed",
				Detail:   fmt.Sprintf("%s has lifecycle.prevent_destroy set (kept in the state), but it is no longer in the configuration, so the plan would delete its files. Put the block back, or lift the protection by declaring it with prevent_destroy = false and applying before removing it.", addr),
			})
		}
		why := &plans.Reason{Code: plans.ReasonRemoved}
		if it := st.Intents[addr]; it != nil {
			why.GenerationID = it.GenerationID
		}
		c := &plans.Change{Addr: addr, Action: plans.Delete, Model: plans.ModelOf(rec.Endpoint, nil), Reason: why, Before: beforeAttrs(rec)}
		if p.storing() {
			c.Store = plans.StoreOf(rec.Outputs)
		}
		p.add(c)
	}
	// Interrupted submissions of instances that left the configuration are
	// forgotten; the plan says so, because the job may have been paid for.
	for _, addr := range addrs.SortedKeys(st.Intents) {
		if p.intentDone[addr] {
			continue
		}
		it := st.Intents[addr]
		p.add(&plans.Change{Addr: addr, Action: plans.Delete, Model: plans.ModelOf(it.Endpoint, nil), Reason: &plans.Reason{Code: plans.ReasonRemovedIntent, GenerationID: it.GenerationID, Since: it.CreatedAt}})
	}
	for _, a := range in.Replace {
		if !p.used[a] {
			p.diags = append(p.diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid replace address",
				Detail:   fmt.Sprintf("-replace=%s matches no resource instance in the configuration; use an address listed by 'genform state list' or declared in the configuration, e.g. image.hero or image.hero[0].", a),
			})
		}
	}
	if len(in.Targets) > 0 {
		p.applyTargets()
	}
	p.checkModels()
	return p.plan, p.diags
}

// newChange returns a zeroed Change cut from a block of them. A plan holds
// a Change for every instance, no-ops included: a block is one allocation
// where a Change each would be one apiece, each rounded up to Go's size
// class (304 bytes allocated as 320) and marked by the collector on its
// own (TestChangesShareBlocks). A block lives as long as any of its
// Changes; the plan holds them all.
func (p *planner) newChange() *plans.Change {
	if len(p.block) == 0 {
		// From 16 to 256 as the plan grows: a small plan wastes little.
		p.block = make([]plans.Change, min(max(len(p.plan.Changes), 16), 256))
	}
	c := &p.block[0]
	p.block = p.block[1:]
	return c
}

// span is the indexes lo to hi-1 of a list.
type span struct{ lo, hi int }

func (p *planner) add(c *plans.Change) {
	p.plan.Changes = append(p.plan.Changes, c)
}

func (p *planner) addOrphan(rec *statefile.Resource) {
	if rec == nil || rec.Fingerprint == "" || rec.Status != plans.StatusSucceed {
		return
	}
	p.orphans[rec.Fingerprint] = append(p.orphans[rec.Fingerprint], rec)
}

// markYielded marks the records of r's n instances (addr(j) is the j-th
// address, in key order) as planned, and offers the records of instances
// r no longer yields (count lowered, for_each key removed) to be claimed
// by a rename. Both lists are in key order, so one walk finds them
// without a set of every instance.
func (p *planner) markYielded(r *config.Resource, n int, addr func(j int) addrs.Instance) {
	st := p.state
	recs := p.byRes[r.Addr()]
	i := recs.lo
	for j := 0; j < n; j++ {
		a := addr(j)
		for ; i < recs.hi && p.recorded[i].Compare(a) < 0; i++ {
			p.addOrphan(st.Resources[p.recorded[i]])
		}
		if i < recs.hi && p.recorded[i] == a {
			p.planned[i] = true
			i++
		}
	}
	for ; i < recs.hi; i++ {
		p.addOrphan(st.Resources[p.recorded[i]])
	}
}

// planInWindows plans a large resource that refers to no other and that
// nothing refers to (a catalog's for_each) a window of instances at a
// time: its addresses first, for the records it no longer yields, then
// its instances, prepareWindow at a time, each window's facts on every
// core. All of its instances at once, with their cty values, would be
// most of the plan's memory.
func (p *planner) planInWindows(r *config.Resource) {
	cfg := p.in.Config
	addrList := cfg.InstanceAddrs(r)
	p.markYielded(r, len(addrList), func(j int) addrs.Instance { return addrList[j] })
	for lo := 0; lo < len(addrList); lo += prepareWindow {
		insts := cfg.ExpandRange(r, lo, min(lo+prepareWindow, len(addrList)))
		facts := p.facts(insts)
		for j, inst := range insts {
			c, _, _ := p.planInstance(r, inst, facts[j])
			p.add(c)
			if c.Action.Generates() || c.Action == plans.Resume {
				p.changed[r.Addr()] = true
			}
		}
	}
}

// prepared holds what planning a resource's instances reads that depends
// on nothing but each instance and its record; done is false for a
// resource whose instances depend on the resources it refers to, and
// large is set for one planInWindows plans.
type prepared struct {
	done, large bool
	insts       []*config.Instance
	facts       []instFacts
}

// instFacts is what planning an instance reads that facts computes for
// many instances at once: the request's fingerprint, and the state of the
// record's files on disk.
type instFacts struct {
	fingerprint string
	files       []workdir.FileState
	checked     bool // files holds a check of every output of the record
}

// prepareWindow is how many resources prepare takes at a time.
var prepareWindow = 512 // a variable for tests

// prepare expands those of resources that refer to no other resource (Load
// computed their requests), fingerprints their requests and checks their
// recorded files: on every core, for this is most of a large no-op plan's
// work (an os.Stat per file, a sha256 per request), and none of it
// depends on another instance. The walk that follows is bookkeeping.
func (p *planner) prepare(resources []*config.Resource) []prepared {
	cfg := p.in.Config
	pre := make([]prepared, len(resources))
	for k, r := range resources {
		n, ok := cfg.Precomputed(r)
		switch {
		case ok && n > prepareWindow && !cfg.Referenced(r.Addr()):
			pre[k].large = true
		case ok:
			pre[k].done = true
		}
	}
	inChunks(len(pre), func(k int) {
		if pre[k].done {
			pre[k].insts, _ = cfg.Expand(resources[k], nil) // computed by Load: no diagnostics
		}
	})
	n := 0
	for k := range pre {
		n += len(pre[k].insts)
	}
	all := make([]*config.Instance, 0, n)
	for k := range pre {
		all = append(all, pre[k].insts...)
	}
	facts := p.facts(all)
	for k := range pre {
		pre[k].facts, facts = facts[:len(pre[k].insts)], facts[len(pre[k].insts):]
	}
	return pre
}

// facts computes the instFacts of insts, on every core.
func (p *planner) facts(insts []*config.Instance) []instFacts {
	out := make([]instFacts, len(insts))
	inChunks(len(insts), func(i int) {
		inst, f := insts[i], &out[i]
		if inst.Request != nil {
			f.fingerprint = inst.Fingerprint(p.in.Service)
		}
		if rec := p.state.Resources[inst.Addr]; p.in.Refresh && rec != nil && rec.WatermarkFree == inst.WatermarkFree {
			f.files = make([]workdir.FileState, len(rec.Outputs))
			for o := range rec.Outputs {
				f.files[o] = workdir.CheckFile(p.in.Dir, rec.Outputs[o])
			}
			f.checked = true
		}
	})
	return out
}

// inChunks calls f(0) ... f(n-1), in chunks on every core when n is large
// enough for that to pay.
func inChunks(n int, f func(i int)) {
	const chunk = 64
	workers := runtime.GOMAXPROCS(0)
	if n < 2*chunk || workers < 2 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var g errgroup.Group
	g.SetLimit(workers)
	for lo := 0; lo < n; lo += chunk {
		g.Go(func() error {
			for i := lo; i < min(lo+chunk, n); i++ {
				f(i)
			}
			return nil
		})
	}
	_ = g.Wait() // the calls return no error
}

// planInstance decides the change of one instance (decideInstance), and
// marks it as a move when the moved blocks moved its record.
func (p *planner) planInstance(r *config.Resource, inst *config.Instance, known instFacts) (*plans.Change, *statefile.Resource, string) {
	c, rec, dir := p.decideInstance(r, inst, known)
	if p.moves != nil {
		p.noteMove(c)
	}
	return c, rec, dir
}

// decideInstance decides the change of one instance: it gathers the facts
// (known holds those the facts method computed, on every core), lets
// decide choose, and fills in what the views show. When the instance
// keeps a recorded generation, it also returns that record and the
// directory its files will be in, from which what refers to it takes its
// value; a nil record means its value is known only after apply.
func (p *planner) decideInstance(r *config.Resource, inst *config.Instance, known instFacts) (*plans.Change, *statefile.Resource, string) {
	st := p.state
	rec := st.Resources[inst.Addr]
	media, mediaDefault, uncounted := plans.CountOf(inst)
	c := p.newChange()
	*c = plans.Change{
		Addr:         inst.Addr,
		Media:        media,
		MediaDefault: mediaDefault,
		Seconds:      plans.VideoSeconds(inst),
		AtMost:       plans.AtMost(inst),
		Uncounted:    uncounted,
		Dir:          inst.Dir,
		Sensitive:    inst.Sensitive,
	}
	if inst.Endpoint.Provider() != addrs.Reference {
		c.Model = plans.ModelOf(inst.Endpoint, p.in.Config.PricesFor(inst.Endpoint))
	}
	if rec != nil && p.storing() {
		c.Store = plans.StoreOf(rec.Outputs)
	}
	f := facts{
		endpoint: inst.Endpoint,
		service:  p.in.Service,
		// The service of the state, when it is known and another.
		prevService: p.prevService,
		record:      rec,
		intent:      st.Intents[inst.Addr],
		ignore:      r.IgnoreChanges,
	}
	if f.intent != nil {
		p.intentDone[inst.Addr] = true
	}
	f.fingerprint = known.fingerprint
	c.Fingerprint = f.fingerprint
	if matches(p.replace, inst.Addr) {
		f.forced = true
		p.used[inst.Addr] = true
		p.used[inst.Addr.Resource.Instance(addrs.NoKey)] = true
	}
	if f.fingerprint == "" {
		for _, ref := range r.Refs {
			if p.changed[ref] {
				f.upstream = append(f.upstream, ref)
			}
		}
	}
	for _, t := range r.ReplaceTriggeredBy {
		if p.changed[t] {
			f.triggered = append(f.triggered, t)
		}
	}
	switch {
	case rec == nil && f.intent == nil && f.fingerprint != "":
		f.orphan = p.peekOrphan(f.fingerprint, r.Kind)
	case rec != nil && f.fingerprint == "" && len(f.ignore) > 0 && !plans.Failed(rec.Status),
		rec != nil && f.fingerprint != rec.Fingerprint && f.intent == nil && !f.forced && !plans.Failed(rec.Status):
		p.fillAttrs(c, rec, inst)
		f.diff = c.Attrs
	}
	// The history is read only where a generation would be made.
	if p.in.History != nil && f.fingerprint != "" && f.intent == nil && !f.forced && len(f.triggered) == 0 &&
		(rec == nil && f.orphan == nil || rec != nil && (rec.Fingerprint != f.fingerprint || plans.Failed(rec.Status))) {
		f.restorable = p.restorable(f.fingerprint, inst.Addr)
	}

	d := decide(f)
	c.Action = d.action
	if c.Model != nil && d.action.Generates() {
		// Only a generation is priced, and prices by the megapixel or
		// the resolution follow the size its request asks for.
		c.Model.Width, c.Model.Height, _ = inst.Pixels()
	}
	if d.reason.Code != plans.ReasonNone {
		why := d.reason // a copy: pointing into d would put every d on the heap
		c.Reason = &why
	}
	switch {
	case d.action == plans.Restore:
		p.claimedGen[f.restorable.GenerationID] = true
		c.GenerationID = f.restorable.GenerationID
		c.Reason.Cached = p.cached(f.restorable)
		c.Reason.Stored = p.storing() && plans.StoreOf(f.restorable.Outputs) == plans.StoreAll
		if w, ok := p.in.History.(WorkspaceHistory); ok {
			c.Reason.Workspace = w.WorkspaceOf(f.restorable)
		}
		p.fillAttrs(c, rec, inst)
		return c, f.restorable, inst.Dir
	case d.action == plans.Move:
		old := p.claimOrphan(f.orphan)
		c.PrevAddr = old.Addr
		if old.Dir != inst.Dir {
			c.Attrs = append(c.Attrs, plans.AttrChange{Name: "dir", Before: old.Dir, After: inst.Dir})
		}
		c.Before = beforeAttrs(old)
		return c, old, inst.Dir
	case d.action == plans.Resume:
		c.GenerationID = d.reason.GenerationID
		p.fillAttrs(c, rec, inst)
		return c, nil, ""
	case !d.keep:
		if f.diff == nil {
			p.fillAttrs(c, rec, inst)
		}
		if d.action == plans.Replace {
			p.checkProtected(r, inst, rec)
		}
		return c, nil, ""
	}

	// The generation is kept; the local side decides.
	c.Attrs = nil
	l := local{record: rec, dir: inst.Dir, watermarkFree: inst.WatermarkFree,
		protect: r.PreventDestroy, protected: st.Protections[inst.Addr]}
	if d.settle {
		l.settle = f.intent
	}
	if known.checked {
		l.files = known.files
	}
	l.store = p.storing()
	l.cached = p.inCache
	action, why, attrs, redownload := decideLocal(l)
	if action == plans.NoOp {
		return c, rec, rec.Dir
	}
	c.Action, c.Redownload = action, redownload
	c.Reason = new(plans.Reason)
	*c.Reason = why
	c.Attrs = attrs
	c.Before = beforeAttrs(rec)
	return c, rec, inst.Dir
}

func (p *planner) checkProtected(r *config.Resource, inst *config.Instance, rec *statefile.Resource) {
	if rec == nil || len(rec.Outputs) == 0 {
		return
	}
	// The declaration decides while the block is there; the protection
	// the state keeps is for when it is removed.
	if r.PreventDestroy {
		rng := r.DeclRange
		p.diags = append(p.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Instance cannot be destroyed",
			Detail:   fmt.Sprintf("%s has lifecycle.prevent_destroy set, but the plan would replace it (generate it anew), discarding its files. Undo the change, or set prevent_destroy = false and apply that first.", inst.Addr),
			Subject:  &rng,
		})
	}
}

// restorable finds a generation of the request fp in the history that
// no record holds and no other instance of this plan restores: the one
// addr held last when there is one (a count grown back gets its own
// files back), else the most recently made. A generation that failed,
// or whose files were never all hashed, cannot be restored.
func (p *planner) restorable(fp string, addr addrs.Instance) *statefile.Resource {
	entries, err := p.in.History.Generations(fp)
	if err != nil {
		p.diags = append(p.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unreadable history", Detail: err.Error()})
		p.in.History = nil
		return nil
	}
	if len(entries) == 0 {
		return nil
	}
	if p.held == nil {
		p.held = make(map[string]bool, len(p.state.Resources))
		for _, rec := range p.state.Resources {
			if rec.GenerationID != "" {
				p.held[rec.GenerationID] = true
			}
		}
		p.claimedGen = map[string]bool{}
	}
	var best *statefile.Resource
	for _, e := range entries {
		if e.Status != plans.StatusSucceed || e.Endpoint.Kind() != addr.Resource.Kind || len(e.Outputs) == 0 ||
			p.held[e.GenerationID] || p.claimedGen[e.GenerationID] || !allHashed(e) {
			continue
		}
		if e.Addr == addr {
			return e
		}
		if best == nil {
			best = e
		}
	}
	return best
}

func allHashed(e *statefile.Resource) bool {
	for _, o := range e.Outputs {
		if o.SHA256 == "" {
			return false
		}
	}
	return true
}

// storing reports whether an object store is configured.
func (p *planner) storing() bool { return p.in.Config.Settings.Store != nil }

// cached reports whether the local cache holds every file of e.
func (p *planner) cached(e *statefile.Resource) bool {
	for _, o := range e.Outputs {
		if !p.cache.Has(o.SHA256) {
			return false
		}
	}
	return true
}

// peekOrphan finds an unclaimed record of kind with fingerprint fp.
func (p *planner) peekOrphan(fp string, kind addrs.Kind) *statefile.Resource {
	for _, rec := range p.orphans[fp] {
		if rec.Addr.Resource.Kind == kind && !p.claimed[rec.Addr] {
			return rec
		}
	}
	return nil
}

// claimOrphan takes rec for a move, so no other instance claims it.
func (p *planner) claimOrphan(rec *statefile.Resource) *statefile.Resource {
	p.claimed[rec.Addr] = true
	list := p.orphans[rec.Fingerprint]
	if i := slices.Index(list, rec); i >= 0 {
		p.orphans[rec.Fingerprint] = append(list[:i:i], list[i+1:]...)
	}
	return rec
}

// beforeAttrs is the user-facing view of a recorded instance.
func beforeAttrs(rec *statefile.Resource) map[string]any {
	if rec == nil {
		return nil
	}
	m, err := config.FlattenRequest(rec.Endpoint, rec.Request)
	if err != nil || m == nil {
		m = map[string]any{}
	}
	m["dir"] = rec.Dir
	if rec.Addr.Resource.Kind == addrs.Video {
		m["watermark_free"] = rec.WatermarkFree
	}
	return m
}

// fillAttrs sets Before, After and Attrs: every declared attribute when
// there is no record, only the differing ones otherwise.
func (p *planner) fillAttrs(c *plans.Change, rec *statefile.Resource, inst *config.Instance) {
	attrs := inst.Attrs()
	after := make(map[string]any, len(attrs)+2)
	c.AfterUnknown = c.AfterUnknown[:0]
	for name, v := range attrs {
		if !v.IsWhollyKnown() {
			c.AfterUnknown = append(c.AfterUnknown, name)
			continue
		}
		if v.IsNull() {
			continue
		}
		after[name] = config.JSONValue(v)
	}
	after["dir"] = inst.Dir
	if inst.Resource.Kind == addrs.Video {
		after["watermark_free"] = inst.WatermarkFree
	}
	if len(c.AfterUnknown) == 0 {
		c.AfterUnknown = nil
	}
	slices.Sort(c.AfterUnknown)
	c.After = after
	c.Before = beforeAttrs(rec)
	c.Attrs = nil
	names := make([]string, 0, len(after)+len(c.AfterUnknown)+len(c.Before))
	for n := range after {
		names = append(names, n)
	}
	names = append(names, c.AfterUnknown...)
	for n := range c.Before {
		names = append(names, n)
	}
	config.SortAttrNames(names)
	names = slices.Compact(names)
	c.Attrs = make([]plans.AttrChange, 0, len(names))
	for _, n := range names {
		b, hadB := c.Before[n]
		a, hadA := after[n]
		switch {
		case slices.Contains(c.AfterUnknown, n):
			c.Attrs = append(c.Attrs, plans.AttrChange{Name: n, Before: b, Unknown: true})
		case rec == nil:
			if hadA {
				c.Attrs = append(c.Attrs, plans.AttrChange{Name: n, After: a})
			}
		case !hadA && !hadB:
		case !equalJSON(b, a):
			c.Attrs = append(c.Attrs, plans.AttrChange{Name: n, Before: b, After: a})
		}
	}
	if len(c.Attrs) == 0 {
		c.Attrs = nil
	}
}

// equalJSON compares two JSON-shaped values by their encoding. Both
// sides hold numbers as config.JSON writes them, so equal numbers are
// equal text.
func equalJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}
