package reconcile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/service"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// applyDir is a working directory with a configuration and a real state
// file, changed only by planning and applying with a fakeService: what
// genform plan and apply do, against a scripted service.
type applyDir struct {
	t     testing.TB
	dir   string
	cfg   *config.Config
	store *statefile.Store
	svc   *fakeService
	// parallelism and timeout are the engine's (2 and 10s when zero).
	parallelism int
	timeout     time.Duration

	mu     sync.Mutex
	events []Event
}

func newApplyDir(t testing.TB, svc *fakeService) *applyDir {
	t.Helper()
	dir := t.TempDir()
	st, err := statefile.Open(filepath.Join(dir, ".genform", "state.db"), statefile.Options{Create: true, Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &applyDir{t: t, dir: dir, store: st, svc: svc}
}

// configure makes src the configuration.
func (w *applyDir) configure(src string) {
	w.t.Helper()
	w.cfg = (&fixture{t: w.t, dir: w.dir}).write(src)
}

func (w *applyDir) snapshot() *statefile.Snapshot {
	w.t.Helper()
	snap, err := w.store.Snapshot()
	if err != nil {
		w.t.Fatal(err)
	}
	return snap
}

func (w *applyDir) input() PlanInput {
	return PlanInput{Config: w.cfg, State: w.snapshot(), Service: "simulator", Refresh: true, Dir: w.dir, History: w.store}
}

// plan makes src the configuration and plans it.
func (w *applyDir) plan(src string) *plans.Plan {
	w.t.Helper()
	w.configure(src)
	p, diags := MakePlan(w.input())
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
		Config: w.cfg, Store: w.store, Service: w.svc, ServiceID: "simulator",
		Parallelism: w.parallelism, PollInterval: time.Millisecond, Timeout: w.timeout, Dir: w.dir,
		Events: func(ev Event) {
			w.mu.Lock()
			w.events = append(w.events, ev)
			w.mu.Unlock()
		},
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

// instance is addr as the configuration declares it, expanded against
// the state.
func (w *applyDir) instance(addr string) *config.Instance {
	w.t.Helper()
	_, insts, _ := StateScope(w.cfg, w.snapshot())
	for _, inst := range insts {
		if inst.Addr.String() == addr {
			return inst
		}
	}
	w.t.Fatalf("%s is not declared", addr)
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

// TestApplyUpdate checks an update makes the files what the declaration
// and the record say, without generating: files move with dir, only what
// is missing or edited is fetched again, and watermark_free fetches every
// output from the other URL.
func TestApplyUpdate(t *testing.T) {
	artDir := strings.Replace(appleConfig, "image_number = 2", "image_number = 2\n  dir = \"art/apple\"", 1)
	wmFree := strings.Replace(wavesConfig, `"waves"`, "\"waves\"\n  watermark_free = true", 1)
	remove := func(rel string) func(*applyDir) {
		return func(w *applyDir) { os.Remove(filepath.Join(w.dir, rel)) }
	}
	tests := []struct {
		name          string
		before, after string
		disturb       func(*applyDir) // what happens to the files between the applies
		addr          string
		dir           string
		downloads     []string // URLs the update fetches
		watermarkURL  bool     // whether it asks for the watermark-free URL
		want          map[string]string
		gone          []string
	}{
		{
			name: "dir changed: the files move", before: appleConfig, after: artDir, addr: "image.a", dir: "art/apple",
			want: map[string]string{"art/apple/0.png": fakeMedia("job-1", 0, ".png"), "art/apple/1.png": fakeMedia("job-1", 1, ".png")},
			gone: []string{"generated/image/a", "generated/image"},
		},
		{
			name: "an output missing: only it is fetched", before: appleConfig, after: appleConfig, addr: "image.a", dir: "generated/image/a",
			disturb:   remove("generated/image/a/1.png"),
			downloads: []string{"http://fake.test/media/job-1/1.png"},
			want:      map[string]string{"generated/image/a/0.png": fakeMedia("job-1", 0, ".png"), "generated/image/a/1.png": fakeMedia("job-1", 1, ".png")},
		},
		{
			name: "an output edited: only it is fetched", before: appleConfig, after: appleConfig, addr: "image.a", dir: "generated/image/a",
			disturb: func(w *applyDir) {
				os.WriteFile(filepath.Join(w.dir, "generated/image/a/0.png"), []byte("scribbled over"), 0o644)
			},
			downloads: []string{"http://fake.test/media/job-1/0.png"},
			want:      map[string]string{"generated/image/a/0.png": fakeMedia("job-1", 0, ".png"), "generated/image/a/1.png": fakeMedia("job-1", 1, ".png")},
		},
		{
			name: "dir changed and an output missing: one moves, one is fetched", before: appleConfig, after: artDir, addr: "image.a", dir: "art/apple",
			disturb:   remove("generated/image/a/1.png"),
			downloads: []string{"http://fake.test/media/job-1/1.png"},
			want:      map[string]string{"art/apple/0.png": fakeMedia("job-1", 0, ".png"), "art/apple/1.png": fakeMedia("job-1", 1, ".png")},
			gone:      []string{"generated/image/a"},
		},
		{
			name: "watermark_free turned on: fetched from the watermark-free URL", before: wavesConfig, after: wmFree, addr: "video.v", dir: "generated/video/v",
			downloads: []string{"http://fake.test/nowm/job-1.mp4"}, watermarkURL: true,
			want: map[string]string{"generated/video/v/0.mp4": "content of http://fake.test/nowm/job-1.mp4"},
		},
		{
			name: "watermark_free turned off: the media URL again", before: wmFree, after: wavesConfig, addr: "video.v", dir: "generated/video/v",
			downloads: []string{"http://fake.test/media/job-1/0.mp4"},
			want:      map[string]string{"generated/video/v/0.mp4": fakeMedia("job-1", 0, ".mp4")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := &fakeService{}
			w := newApplyDir(t, svc)
			w.converge(tc.before)
			if tc.disturb != nil {
				tc.disturb(w)
			}
			p := w.plan(tc.after)
			if c := p.Change(a(tc.addr)); c.Action != plans.Update {
				t.Fatalf("plan: %s %+v, want an update", c.Action, c.Reason)
			}
			downloads, wm := len(svc.downloads), svc.count("WatermarkFreeURL")

			res := w.apply(context.Background(), p)
			// Files that only change directory count as moved.
			done, other := res.Updated, res.Moved
			if len(tc.downloads) == 0 && p.Change(a(tc.addr)).MovesOnly() {
				done, other = res.Moved, res.Updated
			}
			if addrList(done) != tc.addr || len(res.Generated)+len(res.Failed)+len(other) > 0 {
				t.Errorf("result %+v, want %s updated (or moved) and nothing else", res, tc.addr)
			}
			if n := svc.count("Create"); n != 1 {
				t.Errorf("%d create requests, want only the first apply's", n)
			}
			if got := svc.downloads[downloads:]; !slices.Equal(got, tc.downloads) {
				t.Errorf("the update fetched %q, want %q", got, tc.downloads)
			}
			wantWM := 0
			if tc.watermarkURL {
				wantWM = 1
			}
			if got := svc.count("WatermarkFreeURL") - wm; got != wantWM {
				t.Errorf("%d watermark-free URL requests, want %d", got, wantWM)
			}
			rec := w.snapshot().Resources[a(tc.addr)]
			if rec.Dir != tc.dir || rec.CreationID != "job-1" {
				t.Errorf("record dir %q job %q, want %q job-1", rec.Dir, rec.CreationID, tc.dir)
			}
			w.checkFiles(rec, tc.dir)
			for rel, content := range tc.want {
				if got := w.read(rel); got != content {
					t.Errorf("%s holds %q, want %q", rel, got, content)
				}
			}
			for _, rel := range tc.gone {
				if w.exists(rel) {
					t.Errorf("%s is still there", rel)
				}
			}
			if ev := w.last(tc.addr); ev.Phase != PhaseDone || ev.Files != len(rec.Outputs) || ev.Dir != tc.dir || ev.Reason.Code != plans.ReasonLocal {
				t.Errorf("last event %+v, want done with %d files in %s", ev, len(rec.Outputs), tc.dir)
			}
			if p := w.plan(tc.after); p.HasChanges() {
				t.Errorf("the plan after the update: %v", actions(p))
			}
		})
	}
}

// TestApplyMove checks a rename: the record, its protection and its files
// follow the new address, and nothing is generated or fetched.
func TestApplyMove(t *testing.T) {
	protected := strings.Replace(appleConfig, "image_number = 2", "image_number = 2\n  lifecycle {\n    prevent_destroy = true\n  }", 1)
	inArt := strings.Replace(appleConfig, "image_number = 2", "image_number = 2\n  dir = \"art\"", 1)
	tests := []struct {
		name          string
		before, after string
		dir           string
		protected     bool
		gone          string
	}{
		{name: "the files follow the address, with the protection", before: protected,
			after: strings.Replace(protected, `image "a"`, `image "apple"`, 1), dir: "generated/image/apple", protected: true, gone: "generated/image/a"},
		{name: "a dir of its own: the files stay", before: inArt,
			after: strings.Replace(inArt, `image "a"`, `image "apple"`, 1), dir: "art"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := &fakeService{}
			w := newApplyDir(t, svc)
			w.converge(tc.before)
			if got := w.snapshot().Protections[a("image.a")]; got != tc.protected {
				t.Fatalf("protection of image.a after the first apply: %v", got)
			}
			p := w.plan(tc.after)
			if c := p.Change(a("image.apple")); c.Action != plans.Move || c.PrevAddr != a("image.a") {
				t.Fatalf("plan: %s from %s, want a move from image.a", c.Action, c.PrevAddr)
			}
			downloads := len(svc.downloads)

			res := w.apply(context.Background(), p)
			if addrList(res.Moved) != "image.apple" || len(res.Generated)+len(res.Deleted)+len(res.Failed) > 0 {
				t.Errorf("result %+v, want image.apple moved and nothing else", res)
			}
			if svc.count("Create") != 1 || len(svc.downloads) != downloads {
				t.Errorf("%d creates, %d downloads: a move generates and fetches nothing", svc.count("Create"), len(svc.downloads)-downloads)
			}
			snap := w.snapshot()
			rec := snap.Resources[a("image.apple")]
			if rec == nil || rec.CreationID != "job-1" || rec.Dir != tc.dir {
				t.Fatalf("record at image.apple: %+v", rec)
			}
			if snap.Resources[a("image.a")] != nil || snap.Protections[a("image.a")] {
				t.Errorf("image.a is still in the state")
			}
			if snap.Protections[a("image.apple")] != tc.protected {
				t.Errorf("protection of image.apple: %v, want %v", snap.Protections[a("image.apple")], tc.protected)
			}
			w.checkFiles(rec, tc.dir)
			for _, o := range rec.Outputs {
				if got := w.read(o.Path); got != fakeMedia("job-1", o.Index, ".png") {
					t.Errorf("%s holds %q: not the generated file", o.Path, got)
				}
			}
			if tc.gone != "" && w.exists(tc.gone) {
				t.Errorf("%s is still there", tc.gone)
			}
			if ev := w.last("image.apple"); ev.Phase != PhaseDone || ev.PrevAddr != a("image.a") || ev.Files != 2 || ev.Dir != tc.dir {
				t.Errorf("last event %+v", ev)
			}
			if p := w.plan(tc.after); p.HasChanges() {
				t.Errorf("the plan after the move: %v", actions(p))
			}
		})
	}
}

// TestApplyDelete checks a delete removes the files of what left the
// configuration and forgets it, without a request to the service, and
// that an address with only an interrupted submission is forgotten too.
func TestApplyDelete(t *testing.T) {
	pear := appleConfig + `
image "b" {
  prompt       = "a green pear"
  image_number = 2
}
`
	tests := []struct {
		name   string
		before string
		// leftover records what an interrupted apply left, before the
		// configuration becomes appleConfig.
		leftover func(*applyDir)
		addr     string
		reason   plans.ReasonCode
		gone     []string
	}{
		{
			name: "a record and its intent", before: pear, addr: "image.b", reason: plans.ReasonRemoved,
			leftover: func(w *applyDir) { w.interrupted("image.b", "job-9") },
			gone:     []string{"generated/image/b/0.png", "generated/image/b/1.png", "generated/image/b"},
		},
		{
			name: "an intent alone", before: pear, addr: "image.b", reason: plans.ReasonRemovedIntent,
			leftover: func(w *applyDir) {
				if err := w.store.Update(func(tx *statefile.Tx) error {
					_, err := tx.Forget(a("image.b"))
					return err
				}); err != nil {
					w.t.Fatal(err)
				}
				w.interrupted("image.b", "job-9")
				os.RemoveAll(filepath.Join(w.dir, "generated/image/b"))
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := &fakeService{}
			w := newApplyDir(t, svc)
			w.converge(tc.before)
			tc.leftover(w)
			p := w.plan(appleConfig)
			if c := p.Change(a(tc.addr)); c.Action != plans.Delete || c.Reason.Code != tc.reason {
				t.Fatalf("plan: %s %s, want delete %s", c.Action, c.Reason.Code, tc.reason)
			}
			// Nothing is paid for or downloaded; the job of a forgotten
			// submission is asked after, to keep it in the history (job-9
			// is not one the service knows: it is not kept).
			calls := svc.count("Create") + svc.count("Detail") + svc.count("Download")

			res := w.apply(context.Background(), p)
			if addrList(res.Deleted) != tc.addr || len(res.Failed) > 0 {
				t.Errorf("deleted %q, failed %v; want %s deleted", addrList(res.Deleted), res.Failed, tc.addr)
			}
			if n := svc.count("Create") + svc.count("Detail") + svc.count("Download"); n != calls {
				t.Errorf("the delete made %d requests to the service", n-calls)
			}
			snap := w.snapshot()
			if snap.Resources[a(tc.addr)] != nil || snap.Intents[a(tc.addr)] != nil || snap.Protections[a(tc.addr)] {
				t.Errorf("%s is still in the state", tc.addr)
			}
			for _, rel := range tc.gone {
				if w.exists(rel) {
					t.Errorf("%s is still there", rel)
				}
			}
			if rec := snap.Resources[a("image.a")]; rec == nil {
				t.Error("image.a was deleted too")
			} else {
				w.checkFiles(rec, "generated/image/a")
			}
			if ev := w.last(tc.addr); ev.Phase != PhaseDone || ev.Action != plans.Delete {
				t.Errorf("last event %+v", ev)
			}
			if p := w.plan(appleConfig); p.HasChanges() {
				t.Errorf("the plan after the delete: %v", actions(p))
			}
		})
	}
}

// TestApplyResume checks the promise of the write-ahead intent: a job an
// interrupted apply submitted is polled and recorded, never paid for again.
func TestApplyResume(t *testing.T) {
	svc := &fakeService{}
	svc.addJob("job-7", addrs.Image, fakeJob{statuses: []string{"processing", "succeed"}, outputs: 2})
	w := newApplyDir(t, svc)
	w.configure(appleConfig)
	w.interrupted("image.a", "job-7")
	p := w.plan(appleConfig)
	if c := p.Change(a("image.a")); c.Action != plans.Resume || c.GenerationID != "job-7" {
		t.Fatalf("plan: %s %q, want resume job-7", c.Action, c.GenerationID)
	}

	res := w.apply(context.Background(), p)
	if addrList(res.Resumed) != "image.a" || len(res.Generated)+len(res.Failed) > 0 {
		t.Errorf("result %+v, want image.a resumed", res)
	}
	if n := svc.count("Create"); n != 0 {
		t.Errorf("%d create requests: the job was submitted again", n)
	}
	if n := svc.count("Status"); n != 2 {
		t.Errorf("%d status requests, want 2 (processing, succeed)", n)
	}
	snap := w.snapshot()
	rec := snap.Resources[a("image.a")]
	if rec == nil || rec.CreationID != "job-7" || rec.Status != plans.StatusSucceed || len(rec.Outputs) != 2 {
		t.Fatalf("record %+v", rec)
	}
	if snap.Intents[a("image.a")] != nil {
		t.Error("the intent is still there")
	}
	w.checkFiles(rec, "generated/image/a")
	if got := w.read("generated/image/a/1.png"); got != fakeMedia("job-7", 1, ".png") {
		t.Errorf("generated/image/a/1.png holds %q, want job-7's", got)
	}
	if p := w.plan(appleConfig); p.HasChanges() {
		t.Errorf("the plan after the resume: %v", actions(p))
	}
}

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

// TestApplySkipsWhatDependsOnAFailure: what is made from a resource that
// failed is not submitted (it would be made from nothing, or from the
// previous generation); what does not depend on it is.
func TestApplySkipsWhatDependsOnAFailure(t *testing.T) {
	tests := []struct {
		name string
		hero fakeJob
	}{
		{"the service refuses the create", fakeJob{createErr: &service.Error{HTTPStatus: 400, Message: "prompt rejected"}}},
		{"the job fails", fakeJob{statuses: []string{"processing", "failed"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := &fakeService{scripts: map[string]fakeJob{"a paper boat": tc.hero}}
			w := newApplyDir(t, svc)
			res := w.apply(context.Background(), w.plan(boatConfig))
			if failedAddrs(res.Failed) != "image.hero" || failedAddrs(res.Skipped) != "video.sail" || addrList(res.Generated) != "video.waves" {
				t.Fatalf("failed %q, skipped %q, generated %q", failedAddrs(res.Failed), failedAddrs(res.Skipped), addrList(res.Generated))
			}
			if err := res.Skipped[0].Err; !strings.Contains(err.Error(), "image.hero") {
				t.Errorf("the skip does not say what failed: %v", err)
			}
			for _, body := range svc.bodies {
				if strings.Contains(body, "the boat sails") {
					t.Errorf("video.sail was submitted: %s", body)
				}
			}
			snap := w.snapshot()
			if snap.Resources[a("video.sail")] != nil || snap.Intents[a("video.sail")] != nil {
				t.Error("video.sail is in the state")
			}
			if got := phasesOf(w.eventsOf("video.sail")); !slices.Equal(got, []Phase{PhaseSkipped}) {
				t.Errorf("video.sail events %v, want skipped alone", got)
			}
		})
	}
}

// TestApplyFailures checks what each failure of a first generation leaves
// in the state, and so what the next plan does: a job that failed is
// replaced; one whose outcome is not known is resumed; one whose files
// could not be fetched is kept and fetched again, never regenerated.
func TestApplyFailures(t *testing.T) {
	oneApple := strings.Replace(appleConfig, "image_number = 2", "image_number = 1", 1)
	wmFree := strings.Replace(wavesConfig, `"waves"`, "\"waves\"\n  watermark_free = true", 1)
	unavailable := &service.Error{HTTPStatus: 503, Message: "unavailable"}
	tests := []struct {
		name    string
		src     string
		job     fakeJob
		timeout time.Duration
		wantErr string
		// status is the record's ("" for none), intent the job id of the
		// intent left ("" for none).
		status  string
		intent  string
		running bool
		next    plans.Action
		reason  plans.ReasonCode
	}{
		{name: "the job fails", src: oneApple, job: fakeJob{statuses: []string{"processing", "failed"}},
			wantErr: "failed on the service", status: plans.StatusFailed, next: plans.Replace, reason: plans.ReasonFailed},
		{name: "the detail lists no outputs", src: oneApple, job: fakeJob{noOutputs: true},
			wantErr: "listed no outputs", intent: "job-1", next: plans.Resume, reason: plans.ReasonInterrupted},
		{name: "the detail cannot be fetched", src: oneApple, job: fakeJob{detailErr: unavailable},
			wantErr: "rerun apply to resume", intent: "job-1", next: plans.Resume, reason: plans.ReasonInterrupted},
		{name: "polling fails", src: oneApple, job: fakeJob{statusErr: unavailable},
			wantErr: "rerun apply to resume", intent: "job-1", running: true, next: plans.Resume, reason: plans.ReasonInterrupted},
		{name: "the job outlives the timeout", src: oneApple, job: fakeJob{statuses: []string{"processing"}}, timeout: 200 * time.Millisecond,
			wantErr: "still processing after", intent: "job-1", running: true, next: plans.Resume, reason: plans.ReasonInterrupted},
		{name: "the download fails", src: oneApple, job: fakeJob{downloadErr: unavailable},
			wantErr: "nothing is regenerated", status: plans.StatusSucceed, next: plans.Update, reason: plans.ReasonLocal},
		{name: "the watermark-free URL cannot be had", src: wmFree, job: fakeJob{wmErr: unavailable},
			wantErr: "watermark-free URL", status: plans.StatusSucceed, next: plans.Update, reason: plans.ReasonLocal},
		{name: "the service refuses the create", src: oneApple, job: fakeJob{createErr: &service.Error{HTTPStatus: 400, Message: "bad prompt"}},
			wantErr: "the service refused image.a: 400", next: plans.Create, reason: plans.ReasonNew},
		// A request that never left is not the service's refusal.
		{name: "the service cannot be reached", src: oneApple, job: fakeJob{createErr: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}},
			wantErr: "the request did not reach the service, so nothing was paid for", next: plans.Create, reason: plans.ReasonNew},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Every request body contains "": the script is every job's.
			svc := &fakeService{scripts: map[string]fakeJob{"": tc.job}}
			w := newApplyDir(t, svc)
			w.timeout = tc.timeout
			p := w.plan(tc.src)
			addr := p.Changes[0].Addr
			res := w.apply(context.Background(), p)
			if len(res.Failed) != 1 || len(res.Generated) > 0 {
				t.Fatalf("failed %v, generated %v: want one failure", res.Failed, res.Generated)
			}
			if err := res.Failed[0].Err.Error(); !strings.Contains(err, tc.wantErr) {
				t.Errorf("error %q does not say %q", err, tc.wantErr)
			}
			if ev := w.last(addr.String()); ev.Phase != PhaseFailed || ev.Err == nil {
				t.Errorf("last event %+v, want failed", ev)
			}
			var running []Job
			if tc.running {
				running = []Job{{Addr: addr, GenerationID: "job-1"}}
			}
			if !slices.Equal(res.Running, running) {
				t.Errorf("running %v, want %v", res.Running, running)
			}
			snap := w.snapshot()
			rec := snap.Resources[addr]
			switch {
			case tc.status == "" && rec != nil:
				t.Errorf("recorded %+v", rec)
			case tc.status != "" && (rec == nil || rec.Status != tc.status || rec.CreationID != "job-1"):
				t.Errorf("record %+v, want job-1 %s", rec, tc.status)
			case tc.status == plans.StatusFailed && (rec.Error == "" || len(rec.Outputs) > 0):
				t.Errorf("failed record %+v: want an error and no outputs", rec)
			case tc.status == plans.StatusSucceed && (len(rec.Outputs) != 1 || rec.Outputs[0].SHA256 != ""):
				t.Errorf("record %+v: want its output with no hash, to fetch again", rec)
			}
			switch it := snap.Intents[addr]; {
			case it == nil && tc.intent != "":
				t.Errorf("no intent left, want one with job %s", tc.intent)
			case it != nil && it.GenerationID != tc.intent:
				t.Errorf("an intent with job %q left, want %q", it.GenerationID, tc.intent)
			}

			p = w.plan(tc.src)
			if c := p.Change(addr); c.Action != tc.next || c.Reason.Code != tc.reason {
				t.Errorf("next plan: %s %s, want %s %s", c.Action, c.Reason.Code, tc.next, tc.reason)
			}
		})
	}
}

// TestApplyFailedReplaceKeepsThePreviousFiles: when the generation meant
// to replace one fails, the record keeps the one before, its request,
// files and hashes, with the failure beside it; declaring the old request
// again is a no-op, the failed one again a retry; when that one succeeds,
// the new files take their place.
func TestApplyFailedReplaceKeepsThePreviousFiles(t *testing.T) {
	svc := &fakeService{}
	w := newApplyDir(t, svc)
	w.converge(appleConfig)
	before := w.snapshot().Resources[a("image.a")]
	green := strings.Replace(appleConfig, "a red apple\"", "a green apple\"\n  dir = \"art/a\"", 1)
	svc.scripts = map[string]fakeJob{"green apple": {statuses: []string{"processing", "failed"}}}

	res := w.apply(context.Background(), w.plan(green))
	if failedAddrs(res.Failed) != "image.a" {
		t.Fatalf("failed %q, want image.a", failedAddrs(res.Failed))
	}
	snap := w.snapshot()
	rec := snap.Resources[a("image.a")]
	if rec.Status != plans.StatusSucceed || rec.CreationID != "job-1" || rec.Fingerprint != before.Fingerprint || string(rec.Request) != string(before.Request) {
		t.Errorf("record %s of %s, want the previous generation job-1 kept as it was", rec.Status, rec.CreationID)
	}
	if f := rec.Failure; f == nil || f.GenerationID != "job-2" || f.Error == "" || !strings.Contains(string(f.Request), "green apple") {
		t.Errorf("failure beside the record: %+v, want job-2 with the green request", f)
	}
	if rec.Dir != before.Dir || len(rec.Outputs) != 2 || rec.Outputs[1].Path != before.Outputs[1].Path || rec.Outputs[1].SHA256 != before.Outputs[1].SHA256 {
		t.Errorf("the failed record lost the previous files: dir %q, outputs %+v", rec.Dir, rec.Outputs)
	}
	w.checkFiles(rec, "generated/image/a")
	if got := w.read("generated/image/a/0.png"); got != fakeMedia("job-1", 0, ".png") || w.exists("art/a") {
		t.Errorf("the previous files changed: %q, art/a there: %v", got, w.exists("art/a"))
	}
	if snap.Intents[a("image.a")] != nil {
		t.Error("the intent is still there")
	}

	if p := w.plan(appleConfig); p.HasChanges() {
		t.Errorf("declaring the previous request again is not a no-op: %v", p.Changes[0].Action)
	}
	svc.scripts = nil
	p := w.plan(green)
	if c := p.Change(a("image.a")); c.Action != plans.Replace || c.Reason.Code != plans.ReasonFailed {
		t.Fatalf("next plan: %s %s, want replace failed", c.Action, c.Reason.Code)
	}
	if res := w.apply(context.Background(), p); addrList(res.Generated) != "image.a" {
		t.Fatalf("retry: generated %q, failed %v", addrList(res.Generated), res.Failed)
	}
	rec = w.snapshot().Resources[a("image.a")]
	w.checkFiles(rec, "art/a")
	if rec.CreationID != "job-3" || w.exists("generated/image/a") {
		t.Errorf("retry recorded %s; generated/image/a there: %v", rec.CreationID, w.exists("generated/image/a"))
	}
}

// TestApplyDownloadFailureIsFetchedAgain: a generation whose files could
// not be fetched is paid for; the next apply fetches them, and generates
// nothing.
func TestApplyDownloadFailureIsFetchedAgain(t *testing.T) {
	svc := &fakeService{scripts: map[string]fakeJob{"red apple": {downloadErr: &service.Error{HTTPStatus: 502}}}}
	w := newApplyDir(t, svc)
	if res := w.apply(context.Background(), w.plan(appleConfig)); failedAddrs(res.Failed) != "image.a" {
		t.Fatalf("failed %q, want image.a", failedAddrs(res.Failed))
	}
	p := w.plan(appleConfig)
	if c := p.Change(a("image.a")); c.Action != plans.Update || !slices.Equal(c.Redownload, []int{0, 1}) {
		t.Fatalf("next plan: %s redownload %v, want an update fetching both", c.Action, c.Redownload)
	}
	svc.rescript("job-1", func(j *fakeJob) { j.downloadErr = nil })
	res := w.apply(context.Background(), p)
	if addrList(res.Updated) != "image.a" || len(res.Failed) > 0 {
		t.Fatalf("updated %q, failed %v", addrList(res.Updated), res.Failed)
	}
	if n := svc.count("Create"); n != 1 {
		t.Errorf("%d create requests: the generation was paid for twice", n)
	}
	w.checkFiles(w.snapshot().Resources[a("image.a")], "generated/image/a")
	if p := w.plan(appleConfig); p.HasChanges() {
		t.Errorf("not converged: %v", actions(p))
	}
}

// TestApplyReplaceRemovesStaleFiles: a replace leaves only the new
// generation's files: fewer outputs remove the extra files, another dir
// removes the old one.
func TestApplyReplaceRemovesStaleFiles(t *testing.T) {
	tests := []struct {
		name  string
		after string
		dir   string
		gone  []string
	}{
		{"fewer outputs", strings.NewReplacer("red", "ripe", "image_number = 2", "image_number = 1").Replace(appleConfig),
			"generated/image/a", []string{"generated/image/a/1.png"}},
		{"another dir", strings.NewReplacer("red", "ripe", "image_number = 2", "image_number = 2\n  dir = \"art/a\"").Replace(appleConfig),
			"art/a", []string{"generated/image/a", "generated/image"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := &fakeService{}
			w := newApplyDir(t, svc)
			w.converge(appleConfig)
			res := w.converge(tc.after)
			if addrList(res.Generated) != "image.a" || w.snapshot().Resources[a("image.a")].CreationID != "job-2" {
				t.Fatalf("generated %q", addrList(res.Generated))
			}
			rec := w.snapshot().Resources[a("image.a")]
			w.checkFiles(rec, tc.dir)
			if got := w.read(rec.Outputs[0].Path); got != fakeMedia("job-2", 0, ".png") {
				t.Errorf("%s holds %q, want job-2's", rec.Outputs[0].Path, got)
			}
			for _, rel := range tc.gone {
				if w.exists(rel) {
					t.Errorf("%s is still there", rel)
				}
			}
		})
	}
}

// TestApplyCascade: a video made from an image that is replaced is
// replaced after it, from the new image.
func TestApplyCascade(t *testing.T) {
	svc := &fakeService{}
	w := newApplyDir(t, svc)
	w.converge(boatConfig)
	snap := w.snapshot()
	oldURL := snap.Resources[a("image.hero")].Outputs[0].MediaURL
	if !strings.Contains(string(snap.Resources[a("video.sail")].Request), oldURL) {
		t.Fatalf("video.sail was not made from %s: %s", oldURL, snap.Resources[a("video.sail")].Request)
	}
	wavesJob := snap.Resources[a("video.waves")].CreationID

	dusk := strings.Replace(boatConfig, "a paper boat", "a paper boat at dusk", 1)
	p := w.plan(dusk)
	if got := actions(p); got["image.hero"] != plans.Replace || got["video.sail"] != plans.Replace || got["video.waves"] != plans.NoOp {
		t.Fatalf("plan %v", got)
	}
	res := w.apply(context.Background(), p)
	if addrList(res.Generated) != "image.hero video.sail" || len(res.Failed) > 0 {
		t.Fatalf("generated %q, failed %v", addrList(res.Generated), res.Failed)
	}
	snap = w.snapshot()
	hero := snap.Resources[a("image.hero")]
	newURL := hero.Outputs[0].MediaURL
	if hero.CreationID != "job-4" || newURL == oldURL {
		t.Fatalf("image.hero is %s with %s", hero.CreationID, newURL)
	}
	sail := snap.Resources[a("video.sail")]
	if req := string(sail.Request); !strings.Contains(req, newURL) || strings.Contains(req, oldURL) {
		t.Errorf("video.sail's request %s, want it made from %s", req, newURL)
	}
	if sail.CreationID != "job-5" || svc.bodies[4] != string(sail.Request) {
		t.Errorf("video.sail is %s: it was not submitted after image.hero", sail.CreationID)
	}
	w.checkFiles(sail, "generated/video/sail")
	if snap.Resources[a("video.waves")].CreationID != wavesJob {
		t.Error("video.waves was generated again")
	}
	if p := w.plan(dusk); p.HasChanges() {
		t.Errorf("not converged: %v", actions(p))
	}
}

// TestApplyInterrupted: cancelling an apply after a create was answered
// keeps the job's id, submits nothing more, says the job is running, and
// the next apply resumes it without paying again.
func TestApplyInterrupted(t *testing.T) {
	const pair = `
image "a" {
  prompt       = "a red apple"
  image_number = 1
}
image "b" {
  prompt       = "a green pear"
  image_number = 1
}
`
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	svc := &fakeService{afterCreate: func(string) { cancel() }}
	w := newApplyDir(t, svc)
	w.parallelism = 1
	res := w.apply(ctx, w.plan(pair))
	if !res.Interrupted || len(res.Failed)+len(res.Generated) > 0 {
		t.Fatalf("result %+v, want interrupted with nothing failed or generated", res)
	}
	if n := svc.count("Create"); n != 1 {
		t.Fatalf("%d create requests after the interrupt, want 1", n)
	}
	if len(res.Running) != 1 || res.Running[0].GenerationID != "job-1" {
		t.Fatalf("running %v, want job-1", res.Running)
	}
	submitted := res.Running[0].Addr
	snap := w.snapshot()
	if it := snap.Intents[submitted]; it == nil || it.GenerationID != "job-1" || len(snap.Intents) != 1 || len(snap.Resources) != 0 {
		t.Fatalf("intents %v, resources %v: want job-1's intent alone", snap.Intents, snap.Resources)
	}
	if ev := w.last(submitted.String()); ev.Phase != PhaseInterrupted {
		t.Errorf("last event of %s: %+v, want interrupted", submitted, ev)
	}

	svc.afterCreate = nil
	p := w.plan(pair)
	if c := p.Change(submitted); c.Action != plans.Resume || c.GenerationID != "job-1" {
		t.Fatalf("next plan for %s: %s %q, want resume job-1", submitted, c.Action, c.GenerationID)
	}
	w.parallelism = 2
	res = w.apply(context.Background(), p)
	if addrList(res.Resumed) != submitted.String() || len(res.Generated) != 1 || res.Interrupted {
		t.Errorf("resumed %q, generated %q", addrList(res.Resumed), addrList(res.Generated))
	}
	if n := svc.count("Create"); n != 2 {
		t.Errorf("%d create requests in all, want 2: one per image", n)
	}
	if rec := w.snapshot().Resources[submitted]; rec == nil || rec.CreationID != "job-1" {
		t.Errorf("record of %s: %+v, want job-1", submitted, rec)
	}
}

// TestApplyDestroy checks a destroy plan: everything recorded is deleted
// and intents alone are forgotten; a protected instance is refused, and
// -target leaves it as it is.
func TestApplyDestroy(t *testing.T) {
	const fruit = `
image "a" {
  prompt       = "a red apple"
  image_number = 2
}
image "b" {
  prompt       = "a green pear"
  image_number = 1
  lifecycle {
    prevent_destroy = PROTECT
  }
}
video "v" {
  prompt = "waves"
}
image "c" {
  prompt = "a plum"
}
`
	tests := []struct {
		name    string
		protect bool
		targets []addrs.Instance
		refused string // the protected address the plan refuses
		deleted string
		kept    []string
	}{
		{name: "everything", deleted: "image.a image.b image.c video.v"},
		{name: "a protected instance is refused", protect: true, refused: "image.b"},
		{name: "targets leave the protected instance out", protect: true, targets: []addrs.Instance{a("image.a"), a("image.c")},
			deleted: "image.a image.c", kept: []string{"image.b", "video.v"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := &fakeService{}
			w := newApplyDir(t, svc)
			src := strings.Replace(fruit, "PROTECT", strconv.FormatBool(tc.protect), 1)
			// image.c was submitted by an apply that was interrupted.
			w.converge(src[:strings.Index(src, `image "c"`)])
			w.configure(src)
			w.interrupted("image.c", "job-9")

			in := w.input()
			in.Targets = tc.targets
			p, diags := MakeDestroyPlan(in)
			if tc.refused != "" {
				if !diags.HasErrors() || !strings.Contains(diags.Error(), tc.refused) || p.Change(a(tc.refused)) != nil {
					t.Fatalf("diagnostics %v, changes %v: want %s refused", diags, actions(p), tc.refused)
				}
				return
			}
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			res := w.apply(context.Background(), p)
			if addrList(res.Deleted) != tc.deleted || len(res.Failed) > 0 {
				t.Fatalf("deleted %q, failed %v; want %q", addrList(res.Deleted), res.Failed, tc.deleted)
			}
			snap := w.snapshot()
			for _, addr := range strings.Fields(tc.deleted) {
				if snap.Resources[a(addr)] != nil || snap.Intents[a(addr)] != nil || snap.Protections[a(addr)] {
					t.Errorf("%s is still in the state", addr)
				}
			}
			var keptFiles []string
			for _, addr := range tc.kept {
				rec := snap.Resources[a(addr)]
				if rec == nil {
					t.Fatalf("%s was destroyed", addr)
				}
				w.checkFiles(rec, rec.Dir)
				for _, o := range rec.Outputs {
					keptFiles = append(keptFiles, o.Path)
				}
			}
			if tc.protect && !snap.Protections[a("image.b")] {
				t.Error("image.b lost its protection")
			}
			slices.Sort(keptFiles)
			if got := w.files("generated"); !slices.Equal(got, keptFiles) {
				t.Errorf("files left %v, want %v", got, keptFiles)
			}
			if w.exists("generated/image/a") {
				t.Error("generated/image/a is still there")
			}
		})
	}
}

// TestApplyEvents checks what a watcher of an apply is told, in order, of
// one generation.
func TestApplyEvents(t *testing.T) {
	tests := []struct {
		name   string
		job    fakeJob
		resume bool
		phases []Phase
		// statuses and known are those of the running events.
		statuses []string
		known    []bool
		warning  string
	}{
		{
			name: "a generation", job: fakeJob{statuses: []string{"pending", "processing", "succeed"}, outputs: 2},
			phases:   []Phase{PhaseSubmitting, PhaseSubmitted, PhaseRunning, PhaseRunning, PhaseRunning, PhaseDownloading, PhaseDone},
			statuses: []string{"pending", "processing", "succeed"}, known: []bool{true, true, true},
		},
		{
			name: "a resume", resume: true, job: fakeJob{statuses: []string{"processing", "succeed"}, outputs: 2},
			phases:   []Phase{PhaseSubmitted, PhaseRunning, PhaseRunning, PhaseDownloading, PhaseDone},
			statuses: []string{"processing", "succeed"}, known: []bool{true, true},
		},
		{
			name: "an undocumented status is warned about once", job: fakeJob{statuses: []string{"queued_for_gpu", "queued_for_gpu", "succeed"}, outputs: 2},
			phases:   []Phase{PhaseSubmitting, PhaseSubmitted, PhaseWarning, PhaseRunning, PhaseRunning, PhaseRunning, PhaseDownloading, PhaseDone},
			statuses: []string{"queued_for_gpu", "queued_for_gpu", "succeed"}, known: []bool{false, false, true},
			warning: `unknown status "queued_for_gpu"`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Every request body contains "": the script is every job's.
			svc := &fakeService{scripts: map[string]fakeJob{"": tc.job}}
			w := newApplyDir(t, svc)
			id := "job-1"
			if tc.resume {
				id = "job-7"
				svc.addJob(id, addrs.Image, tc.job)
				w.configure(appleConfig)
				w.interrupted("image.a", id)
			}
			w.apply(context.Background(), w.plan(appleConfig))
			evs := w.eventsOf("image.a")
			if got := phasesOf(evs); !slices.Equal(got, tc.phases) {
				t.Fatalf("phases %v, want %v", got, tc.phases)
			}
			var statuses []string
			var known []bool
			action := plans.Create
			if tc.resume {
				action = plans.Resume
			}
			for _, ev := range evs {
				if ev.Time.IsZero() || ev.Action != action {
					t.Errorf("event %v: time %v, action %s", ev.Phase, ev.Time, ev.Action)
				}
				switch ev.Phase {
				case PhaseSubmitted:
					if ev.GenerationID != id || ev.Resumed != tc.resume {
						t.Errorf("submitted: job %q resumed %v, want %s %v", ev.GenerationID, ev.Resumed, id, tc.resume)
					}
				case PhaseRunning:
					statuses, known = append(statuses, ev.Status), append(known, ev.KnownStatus)
				case PhaseWarning:
					if ev.Err == nil || !strings.Contains(ev.Err.Error(), tc.warning) || ev.GenerationID != id {
						t.Errorf("warning %v, want it to say %s", ev.Err, tc.warning)
					}
				case PhaseDone:
					if ev.Files != 2 || ev.Dir != "generated/image/a" || ev.GenerationID != id {
						t.Errorf("done: %d files in %q of %q, want 2 in generated/image/a of %s", ev.Files, ev.Dir, ev.GenerationID, id)
					}
				}
			}
			if !slices.Equal(statuses, tc.statuses) || !slices.Equal(known, tc.known) {
				t.Errorf("running statuses %q known %v, want %q %v", statuses, known, tc.statuses, tc.known)
			}
		})
	}
}

// TestApplyRefusesPathsOutsideTheWorkdir: a directory replaced by a
// symbolic link leading outside the working directory is never written
// through or removed through, whatever the change; the state is left as
// it was and nothing is paid for.
func TestApplyRefusesPathsOutsideTheWorkdir(t *testing.T) {
	inOut := func(src, dir string) string {
		return strings.Replace(src, "image_number = 2", "image_number = 2\n  dir = \""+dir+"\"", 1)
	}
	pear := appleConfig + strings.NewReplacer(`"a"`, `"b"`, "red apple", "green pear").Replace(appleConfig)
	tests := []struct {
		name          string
		before, after string
		link          string // made a link to outside after the first apply
		addr          string
		action        plans.Action
	}{
		{name: "a create", after: inOut(appleConfig, "out/a"), link: "out", addr: "image.a", action: plans.Create},
		{name: "an update", before: appleConfig, after: inOut(appleConfig, "out/a"), link: "out", addr: "image.a", action: plans.Update},
		{name: "a move", before: appleConfig, after: strings.Replace(appleConfig, `"a"`, `"apple"`, 1), link: "generated/image/apple", addr: "image.apple", action: plans.Move},
		{name: "a delete", before: pear, after: appleConfig, link: "generated/image/b", addr: "image.b", action: plans.Delete},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := &fakeService{}
			w := newApplyDir(t, svc)
			if tc.before != "" {
				w.converge(tc.before)
			}
			outside := t.TempDir()
			// What is outside must stay: give the link the names of files
			// genform would remove.
			for _, name := range []string{"0.png", "1.png"} {
				os.WriteFile(filepath.Join(outside, name), []byte("not genform's"), 0o644)
			}
			link := filepath.Join(w.dir, filepath.FromSlash(tc.link))
			os.RemoveAll(link)
			os.MkdirAll(filepath.Dir(link), 0o755)
			if err := os.Symlink(outside, link); err != nil {
				t.Skip("no symbolic links here:", err)
			}
			p := w.plan(tc.after)
			if c := p.Change(a(tc.addr)); c.Action != tc.action {
				t.Fatalf("plan: %s, want %s", c.Action, tc.action)
			}
			before := w.snapshot()
			creates := svc.count("Create")

			res := w.apply(context.Background(), p)
			if failedAddrs(res.Failed) != tc.addr || !strings.Contains(res.Failed[0].Err.Error(), "outside the working directory") {
				t.Fatalf("failed %v, want %s refused", res.Failed, tc.addr)
			}
			if n := svc.count("Create"); n != creates {
				t.Errorf("%d create requests", n-creates)
			}
			after := w.snapshot()
			if !cmp.Equal(before.Resources, after.Resources) || !cmp.Equal(before.Intents, after.Intents) {
				t.Errorf("the state changed:\n%s", cmp.Diff(before.Resources, after.Resources))
			}
			entries, _ := os.ReadDir(outside)
			for _, e := range entries {
				if b, _ := os.ReadFile(filepath.Join(outside, e.Name())); string(b) != "not genform's" || len(entries) != 2 {
					t.Errorf("outside the working directory: %d files, %s holds %q", len(entries), e.Name(), b)
				}
			}
		})
	}
}

// TestApplyStalePlan: a plan applied after the state it was made from
// changed (by state rm, or another apply) fails the changes it no longer
// fits, asking for a new plan, and generates nothing in their place.
func TestApplyStalePlan(t *testing.T) {
	forget := func(addr string) func(*applyDir) {
		return func(w *applyDir) {
			if err := w.store.Update(func(tx *statefile.Tx) error {
				_, err := tx.Forget(a(addr))
				return err
			}); err != nil {
				w.t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name   string
		before string // applied first ("" for nothing)
		job    string // an interrupted job of image.a
		after  string
		change func(*applyDir) // what changes the state after the plan
		addr   string
		action plans.Action
	}{
		{name: "a move whose record left", before: appleConfig, after: strings.Replace(appleConfig, `"a"`, `"apple"`, 1),
			change: forget("image.a"), addr: "image.apple", action: plans.Move},
		{name: "an update whose record left", before: appleConfig, after: strings.Replace(appleConfig, "image_number = 2", "image_number = 2\n  dir = \"art\"", 1),
			change: forget("image.a"), addr: "image.a", action: plans.Update},
		{name: "a resume whose intent left", job: "job-7", after: appleConfig,
			change: forget("image.a"), addr: "image.a", action: plans.Resume},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := &fakeService{}
			w := newApplyDir(t, svc)
			if tc.before != "" {
				w.converge(tc.before)
			}
			if tc.job != "" {
				svc.addJob(tc.job, addrs.Image, fakeJob{})
				w.configure(tc.after)
				w.interrupted("image.a", tc.job)
			}
			p := w.plan(tc.after)
			if c := p.Change(a(tc.addr)); c.Action != tc.action {
				t.Fatalf("plan: %s, want %s", c.Action, tc.action)
			}
			tc.change(w)
			creates, polls := svc.count("Create"), svc.count("Status")
			res := w.apply(context.Background(), p)
			if failedAddrs(res.Failed) != tc.addr || !strings.Contains(res.Failed[0].Err.Error(), "run plan again") {
				t.Fatalf("failed %v, want %s to ask for a new plan", res.Failed, tc.addr)
			}
			if svc.count("Create") != creates || svc.count("Status") != polls {
				t.Error("the stale change made requests to the service")
			}
			if snap := w.snapshot(); snap.Resources[a(tc.addr)] != nil {
				t.Errorf("%s recorded: %+v", tc.addr, snap.Resources[a(tc.addr)])
			}
		})
	}
}

func TestOutputsOf(t *testing.T) {
	tests := []struct {
		name string
		kind addrs.Kind
		det  service.Creation
		want []statefile.Output
	}{
		{name: "images: one output each", kind: addrs.Image,
			det:  service.Creation{Outputs: []service.CreationOutput{{ID: "o0", MediaURL: "u0", ThumbnailURL: "t0"}, {ID: "o1", MediaURL: "u1"}}},
			want: []statefile.Output{{Index: 0, ID: "o0", MediaURL: "u0", ThumbnailURL: "t0"}, {Index: 1, ID: "o1", MediaURL: "u1"}}},
		{name: "images: none", kind: addrs.Image},
		{name: "a video from video_url", kind: addrs.Video,
			det:  service.Creation{VideoURL: "v", ThumbnailURL: "t", Outputs: []service.CreationOutput{{ID: "o0", MediaURL: "other"}}},
			want: []statefile.Output{{ID: "o0", MediaURL: "v", ThumbnailURL: "t"}}},
		{name: "a video without video_url takes its output's URLs", kind: addrs.Video,
			det:  service.Creation{ThumbnailURL: "t", Outputs: []service.CreationOutput{{ID: "o0", MediaURL: "m", ThumbnailURL: "t0"}}},
			want: []statefile.Output{{ID: "o0", MediaURL: "m", ThumbnailURL: "t0"}}},
		{name: "a video with no URL has no output", kind: addrs.Video,
			det: service.Creation{ThumbnailURL: "t", Outputs: []service.CreationOutput{{ID: "o0"}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, outputsOf(tc.kind, &tc.det), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestJoinList(t *testing.T) {
	for _, tc := range []struct {
		items []string
		want  string
	}{
		{nil, ""},
		{[]string{"image.a"}, "image.a"},
		{[]string{"image.a", "image.b"}, "image.a and image.b"},
		{[]string{"image.a", "image.b", "video.c"}, "image.a, image.b and video.c"},
	} {
		if got := joinList(tc.items); got != tc.want {
			t.Errorf("joinList(%q) = %q, want %q", tc.items, got, tc.want)
		}
	}
}

// TestApplyLiftsPreventDestroy: the refusal to destroy a protected
// instance tells the user to set prevent_destroy = false and apply; after
// doing so, destroy and removing the block must go through.
func TestApplyLiftsPreventDestroy(t *testing.T) {
	protect := func(on string) string {
		return strings.Replace(appleConfig, "image_number = 2", "image_number = 2\n  lifecycle {\n    prevent_destroy = "+on+"\n  }", 1)
	}
	w := newApplyDir(t, &fakeService{})
	w.converge(protect("true"))
	w.converge(protect("false"))
	if w.snapshot().Protections[a("image.a")] {
		t.Error("the state still protects image.a after applying prevent_destroy = false")
	}
	if _, diags := MakeDestroyPlan(w.input()); diags.HasErrors() {
		t.Errorf("destroy: %v", diags)
	}
}

// TestApplyUnrecordedJobWhosePollFails: a job paid for whose id the state
// could not hold is in the result's unrecorded jobs even when following
// it fails before its result could be recorded, so that the user learns
// its id and can adopt it.
func TestApplyUnrecordedJobWhosePollFails(t *testing.T) {
	for _, tc := range []struct {
		name string
		job  fakeJob
	}{
		{"status", fakeJob{statusErr: errors.New("status: connection reset")}},
		{"detail", fakeJob{detailErr: errors.New("detail: connection reset")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			waits := commitWaits
			commitWaits = []time.Duration{0, time.Millisecond}
			t.Cleanup(func() { commitWaits = waits })
			svc := &fakeService{scripts: map[string]fakeJob{"a red apple": tc.job}}
			w := newApplyDir(t, svc)
			p := w.plan(strings.Replace(appleConfig, "image_number = 2", "image_number = 1", 1))
			svc.afterCreate = func(string) { w.store.Close() }
			res := w.apply(context.Background(), p)
			if res.StateErr == nil {
				t.Fatal("the result does not say the state could not be written")
			}
			if len(res.Unrecorded) != 1 || res.Unrecorded[0].Addr.String() != "image.a" || res.Unrecorded[0].GenerationID == "" {
				t.Errorf("unrecorded %v, want image.a's job", res.Unrecorded)
			}
			if len(res.Unfinished) != 0 {
				t.Errorf("unfinished %v: the state holds no id to resume", res.Unfinished)
			}
		})
	}
}

// TestApplyStateUnwritable: once the state cannot be written, a job the
// service accepted is still followed to its end, nothing more is
// submitted, and the jobs paid for and not recorded are in the result,
// for the user to adopt with genform import.
func TestApplyStateUnwritable(t *testing.T) {
	const two = `
image "a" {
  prompt       = "a red apple"
  image_number = 1
}
image "b" {
  prompt       = "a green pear"
  image_number = 1
  depends_on   = [image.a]
}
`
	waits := commitWaits
	commitWaits = []time.Duration{0, time.Millisecond}
	t.Cleanup(func() { commitWaits = waits })
	svc := &fakeService{}
	w := newApplyDir(t, svc)
	p := w.plan(two)
	// The disk fills up while the first create request is on the wire.
	svc.afterCreate = func(string) { w.store.Close() }
	res := w.apply(context.Background(), p)
	if res.StateErr == nil {
		t.Fatal("the result does not say the state could not be written")
	}
	if got := fmt.Sprint(res.Unrecorded); !strings.Contains(got, "image.a") || !strings.Contains(got, "job-1") {
		t.Errorf("unrecorded %v, want image.a's job-1", res.Unrecorded)
	}
	if n := svc.count("Create"); n != 1 {
		t.Errorf("%d create requests, want 1: nothing is submitted once the state cannot be written", n)
	}
	if n := svc.count("Status"); n == 0 {
		t.Error("the accepted job was not followed")
	}
	if !strings.Contains(fmt.Sprint(res.Failed, res.Skipped), "image.b") {
		t.Errorf("image.b was neither refused nor skipped: failed %v skipped %v", res.Failed, res.Skipped)
	}
}

// TestResumeRefusesAnotherRequest: a job is resumed only for the request
// it was submitted for.
func TestResumeRefusesAnotherRequest(t *testing.T) {
	svc := &fakeService{}
	w := newApplyDir(t, svc)
	w.configure(appleConfig)
	w.interrupted("image.a", "job-old")
	p := w.plan(appleConfig)
	if c := p.Change(a("image.a")); c.Action != plans.Resume {
		t.Fatalf("plan: %s, want resume", c.Action)
	}
	// The request turns out to be another at apply (as when its inputs
	// come from a resource generated in the same apply).
	w.configure(strings.Replace(appleConfig, "a red apple", "a red apple, later", 1))
	res := w.apply(context.Background(), p)
	if !strings.Contains(fmt.Sprint(res.Failed), "no longer the one job job-old was submitted for") {
		t.Errorf("failed %v, want the resume refused", res.Failed)
	}
	if n := svc.count("Create") + svc.count("Status"); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
	if it := w.snapshot().Intents[a("image.a")]; it == nil || it.GenerationID != "job-old" {
		t.Errorf("intent %+v, want job-old kept", it)
	}
}
