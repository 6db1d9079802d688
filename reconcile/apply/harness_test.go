package apply

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/blobstore"
	"github.com/genform/genform/internal/configtest"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/reconcile"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
	"github.com/genform/genform/statefile/boltstate"
)

// fixture is a working directory with a configuration, written and
// loaded as genform reads it.
type fixture struct {
	t   testing.TB
	dir string
}

func newFixture(t *testing.T) *fixture {
	return &fixture{t: t, dir: t.TempDir()}
}

// write makes src the configuration, and loads it.
func (f *fixture) write(src string) *config.Config {
	f.t.Helper()
	return configtest.Load(f.t, f.dir, src)
}

// a parses an instance address for a test.
func a(s string) addrs.Instance {
	addr, err := addrs.ParseInstance(s)
	if err != nil {
		panic(err)
	}
	return addr
}

func actions(p *plans.Plan) map[string]plans.Action {
	m := map[string]plans.Action{}
	for _, c := range p.Changes {
		m[c.Addr.String()] = c.Action
	}
	return m
}

// applyDir is a working directory with a configuration and a real state
// file, changed only by planning and applying with a fakeService: what
// genform plan and apply do, against a scripted service.
type applyDir struct {
	stateDir
	svc *fakeService
	// parallelism and timeout are the engine's (2 and 10s when zero).
	parallelism int
	timeout     time.Duration
	// wrap, when set, stands in front of the fake service's provider.
	wrap func(provider.Provider) provider.Provider
	// blobs is the object store the engine keeps outputs in; nil for none.
	blobs *blobstore.Bucket

	mu     sync.Mutex
	events []Event
}

func newApplyDir(t testing.TB, svc *fakeService) *applyDir {
	t.Helper()
	dir := t.TempDir()
	return &applyDir{stateDir: stateDir{t: t, dir: dir, store: openState(t, dir, ".genform/state.db")}, svc: svc}
}

// convergedDir is a working directory against a new fakeService, with
// src, unless it is "", applied until it plans no change.
func convergedDir(t testing.TB, src string) (*fakeService, *applyDir) {
	t.Helper()
	svc := &fakeService{}
	w := newApplyDir(t, svc)
	if src != "" {
		w.converge(src)
	}
	return svc, w
}

// stateDir is a working directory with a configuration and a real state
// file: what applyDir and simDir build on.
type stateDir struct {
	t     testing.TB
	dir   string
	cfg   *config.Config
	store *statefile.Store
}

// openState opens the state file at file (slash-separated) below dir,
// creating it, for the length of t.
func openState(t testing.TB, dir, file string) *statefile.Store {
	t.Helper()
	st, err := boltstate.Open(filepath.Join(dir, filepath.FromSlash(file)), statefile.Options{Create: true, Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// configure makes src the configuration.
func (w *applyDir) configure(src string) {
	w.t.Helper()
	w.cfg = (&fixture{t: w.t, dir: w.dir}).write(src)
}

func (d *stateDir) snapshot() *statefile.Snapshot {
	d.t.Helper()
	snap, err := d.store.Snapshot()
	if err != nil {
		d.t.Fatal(err)
	}
	return snap
}

func (w *applyDir) input() reconcile.PlanInput {
	return reconcile.PlanInput{Config: w.cfg, State: w.snapshot(), Service: "simulator", Refresh: true, Dir: w.dir, History: w.store}
}

// plan makes src the configuration and plans it.
func (w *applyDir) plan(src string) *plans.Plan {
	w.t.Helper()
	w.configure(src)
	p, diags := reconcile.MakePlan(w.input())
	if diags.HasErrors() {
		w.t.Fatalf("plan: %v", diags)
	}
	return p
}

// apply applies p with ctx, recording the events from scratch.
func (w *applyDir) apply(ctx context.Context, p *plans.Plan) *Result {
	w.t.Helper()
	w.mu.Lock()
	w.events = nil
	w.mu.Unlock()
	e := &Engine{
		Config: w.cfg, Store: w.store, Providers: referenceOnly(w.svc), ServiceID: "simulator",
		Parallelism: w.parallelism, PollInterval: time.Millisecond, Timeout: w.timeout, Dir: w.dir, Blobs: w.blobs,
		Events: func(ev Event) {
			w.mu.Lock()
			w.events = append(w.events, ev)
			w.mu.Unlock()
		},
	}
	if w.wrap != nil {
		e.Providers[addrs.Reference] = w.wrap(e.Providers[addrs.Reference])
	}
	if e.Parallelism == 0 {
		e.Parallelism = 2
	}
	if e.Timeout == 0 {
		e.Timeout = 10 * time.Second
	}
	res, err := e.Apply(ctx, p)
	if err != nil {
		w.t.Fatal(err)
	}
	return res
}

// converge plans and applies src, and fails the test unless every change
// was made and the next plan has nothing left to do.
func (w *applyDir) converge(src string) *Result {
	w.t.Helper()
	res := w.apply(context.Background(), w.plan(src))
	if len(res.Failed)+len(res.Skipped)+len(res.Running) > 0 {
		w.t.Fatalf("applying %s: failed %v, skipped %v, running %v", src, res.Failed, res.Skipped, res.Running)
	}
	if p := w.plan(src); p.HasChanges() {
		w.t.Fatalf("not converged after apply: %v", actions(p))
	}
	return res
}

// checkNoChanges checks that src plans no change over the state; what
// says when, in the error.
func (w *applyDir) checkNoChanges(src, what string) {
	w.t.Helper()
	if p := w.plan(src); p.HasChanges() {
		w.t.Errorf("%s: %v", what, actions(p))
	}
}

// instance is addr as the configuration declares it, expanded against
// the state.
func (d *stateDir) instance(addr string) *config.Instance {
	d.t.Helper()
	_, insts, _ := reconcile.StateScope(d.cfg, d.snapshot())
	for _, inst := range insts {
		if inst.Addr.String() == addr {
			return inst
		}
	}
	d.t.Fatalf("%s is not declared", addr)
	return nil
}

// interrupted records, as an apply stopped after the service answered
// would have, that addr's declared request was submitted as job id.
func (w *applyDir) interrupted(addr, id string) {
	w.t.Helper()
	inst := w.instance(addr)
	err := w.store.Update(func(tx *statefile.Tx) error {
		return tx.RecordIntent(&statefile.Intent{
			Addr: inst.Addr, Endpoint: inst.Endpoint, Request: inst.Request, GenerationID: id,
			Fingerprint: config.Fingerprint("simulator", inst.Endpoint, inst.Request),
		})
	})
	if err != nil {
		w.t.Fatal(err)
	}
}

// read is the content of the file at rel, "" when there is none.
func (w *applyDir) read(rel string) string {
	b, err := os.ReadFile(filepath.Join(w.dir, filepath.FromSlash(rel)))
	if err != nil {
		return ""
	}
	return string(b)
}

func (w *applyDir) exists(rel string) bool {
	_, err := os.Stat(filepath.Join(w.dir, filepath.FromSlash(rel)))
	return err == nil
}

// files lists the regular files under rel.
func (w *applyDir) files(rel string) []string {
	var list []string
	filepath.WalkDir(filepath.Join(w.dir, rel), func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			r, _ := filepath.Rel(w.dir, path)
			list = append(list, filepath.ToSlash(r))
		}
		return nil
	})
	return list
}

// checkFiles fails unless every output of rec is on disk under dir with
// the bytes the record's hash says.
func (w *applyDir) checkFiles(rec *statefile.Resource, dir string) {
	w.t.Helper()
	for _, o := range rec.Outputs {
		if !strings.HasPrefix(o.Path, dir+"/") {
			w.t.Errorf("%s output %d recorded at %s, want it in %s", rec.Addr, o.Index, o.Path, dir)
		}
		sum := sha256.Sum256([]byte(w.read(o.Path)))
		if !w.exists(o.Path) || hex.EncodeToString(sum[:]) != o.SHA256 {
			w.t.Errorf("%s output %d: %s is missing or not the recorded bytes", rec.Addr, o.Index, o.Path)
		}
	}
}

// eventsOf lists the events of addr in the order they were delivered.
func (w *applyDir) eventsOf(addr string) []Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	var list []Event
	for _, ev := range w.events {
		if ev.Addr.String() == addr {
			list = append(list, ev)
		}
	}
	return list
}

func phasesOf(evs []Event) []Phase {
	var list []Phase
	for _, ev := range evs {
		list = append(list, ev.Phase)
	}
	return list
}

// last is the last event of addr.
func (w *applyDir) last(addr string) Event {
	w.t.Helper()
	evs := w.eventsOf(addr)
	if len(evs) == 0 {
		w.t.Fatalf("no event for %s", addr)
	}
	return evs[len(evs)-1]
}

func addrList(l []addrs.Instance) string {
	s := make([]string, len(l))
	for i, a := range l {
		s[i] = a.String()
	}
	return strings.Join(s, " ")
}

func failedAddrs(l []Failure) string {
	s := make([]string, len(l))
	for i, f := range l {
		s[i] = f.Addr.String()
	}
	return strings.Join(s, " ")
}

// fakeMedia is what the fake service's download writes for output i of job.
func fakeMedia(job string, i int, ext string) string {
	return "content of http://fake.test/media/" + job + "/" + string(rune('0'+i)) + ext
}

// applyWith plans src in a fresh directory and applies it with svc.
func applyWith(t *testing.T, src string, svc provider.Provider) (*statefile.Store, *Result, string) {
	t.Helper()
	f := newFixture(t)
	cfg := f.write(src)
	st := openState(t, f.dir, ".genform/state.db")
	snap, _ := st.Snapshot()
	p, diags := reconcile.MakePlan(reconcile.PlanInput{Config: cfg, State: snap, Service: "simulator", Refresh: true, Dir: f.dir})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	eng := &Engine{Config: cfg, Store: st, Providers: referenceOnly(svc), ServiceID: "simulator", Parallelism: 2, PollInterval: time.Millisecond, Dir: f.dir}
	res, err := eng.Apply(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return st, res, f.dir
}

const oneImage = `
image "a" {
  prompt       = "a red apple"
  image_number = 1
}
`

const (
	appleConfig = `
image "a" {
  prompt       = "a red apple"
  image_number = 2
}
`
	wavesConfig = `
video "v" {
  prompt = "waves"
}
`
)

// boatConfig is an image, a video made from it and a video of its own.
const boatConfig = `
image "hero" {
  prompt       = "a paper boat"
  image_number = 1
}
video "sail" {
  source_image = image.hero.outputs[0].media_url
  prompt       = "the boat sails"
}
video "waves" {
  prompt = "waves"
}
`
