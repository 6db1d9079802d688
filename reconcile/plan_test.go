package reconcile

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/configtest"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// fixture is a working directory with a configuration, and a state made
// by "applying" an earlier configuration: records whose fingerprints are
// the ones planning computes, with output files on disk.
type fixture struct {
	t     testing.TB
	dir   string
	state *statefile.Snapshot
}

func newFixture(t *testing.T) *fixture {
	return &fixture{t: t, dir: t.TempDir(), state: &statefile.Snapshot{
		Resources: map[addrs.Instance]*statefile.Resource{}, Intents: map[addrs.Instance]*statefile.Intent{}, Protections: map[addrs.Instance]bool{},
	}}
}

func (f *fixture) write(src string) *config.Config {
	f.t.Helper()
	return configtest.Load(f.t, f.dir, src)
}

func (f *fixture) plan(cfg *config.Config, mod ...func(*PlanInput)) (*plans.Plan, string) {
	f.t.Helper()
	in := PlanInput{Config: cfg, State: f.state, Service: "simulator", Refresh: true, Dir: f.dir}
	for _, m := range mod {
		m(&in)
	}
	p, diags := MakePlan(in)
	var msgs []string
	for _, d := range diags {
		msgs = append(msgs, d.Summary+": "+d.Detail)
	}
	return p, strings.Join(msgs, "\n")
}

// applied records every generating change of src as done, with one file
// per output on disk.
func (f *fixture) applied(src string) {
	f.t.Helper()
	f.record(f.write(src))
}

// record records every generating change of cfg's plan as done, with one
// file per output on disk.
func (f *fixture) record(cfg *config.Config) {
	f.t.Helper()
	p, diags := f.plan(cfg)
	if diags != "" {
		f.t.Fatalf("planning: %s", diags)
	}
	requests := map[addrs.Instance][]byte{}
	endpoints := map[addrs.Instance]addrs.Endpoint{}
	for _, r := range cfg.Resources {
		insts, _ := cfg.Expand(r, config.Scope{})
		for _, inst := range insts {
			requests[inst.Addr], endpoints[inst.Addr] = inst.Request, inst.Endpoint
		}
	}
	for _, c := range p.Changes {
		if !c.Action.Generates() {
			continue
		}
		if c.Fingerprint == "" {
			f.t.Fatalf("applied() cannot record %s: its request depends on another resource; record it in two steps", c.Addr)
		}
		rec := &statefile.Resource{
			Addr: c.Addr, Endpoint: endpoints[c.Addr], Request: requests[c.Addr], Fingerprint: c.Fingerprint,
			GenerationID: "job-" + c.Addr.String(), CreationID: "job-" + c.Addr.String(), Status: plans.StatusSucceed, Dir: c.Dir,
		}
		for i := 0; i < c.Media; i++ {
			rel := filepath.ToSlash(filepath.Join(c.Dir, string(rune('0'+i))+".png"))
			abs := filepath.Join(f.dir, rel)
			os.MkdirAll(filepath.Dir(abs), 0o755)
			data := []byte("bytes of " + rel)
			if err := os.WriteFile(abs, data, 0o644); err != nil {
				f.t.Fatal(err)
			}
			fi, _ := os.Stat(abs)
			sum := sha256.Sum256(data)
			rec.Outputs = append(rec.Outputs, statefile.Output{Index: i, Path: rel, Size: fi.Size(), ModTime: fi.ModTime(),
				SHA256: hex.EncodeToString(sum[:]), MediaURL: "http://127.0.0.1/media/" + rel})
		}
		f.state.Resources[c.Addr] = rec
	}
}

func actions(p *plans.Plan) map[string]plans.Action {
	m := map[string]plans.Action{}
	for _, c := range p.Changes {
		m[c.Addr.String()] = c.Action
	}
	return m
}

const oneImage = `
image "a" {
  prompt       = "a red apple"
  image_number = 1
}
`

const twoImages = oneImage + `
image "b" {
  prompt       = "a green pear"
  image_number = 2
}
`

func TestPlanActions(t *testing.T) {
	t.Run("create from nothing", func(t *testing.T) {
		f := newFixture(t)
		p, d := f.plan(f.write(twoImages))
		if d != "" {
			t.Fatal(d)
		}
		if got := actions(p); got["image.a"] != plans.Create || got["image.b"] != plans.Create {
			t.Fatalf("actions %v", got)
		}
		s := p.Summary()
		if s.Generate != 2 || s.Images != 3 {
			t.Errorf("summary %+v, want 2 generations of 3 images", s)
		}
	})
	t.Run("no-op after apply, even with a default written out", func(t *testing.T) {
		f := newFixture(t)
		f.applied(twoImages)
		explicit := strings.Replace(twoImages, `image_number = 1`, "image_number = 1\n  seed = -1\n  aspect_ratio = \"16:9\"\n  is_public = false", 1)
		p, _ := f.plan(f.write(explicit))
		if p.HasChanges() {
			t.Fatalf("changes after apply: %v", actions(p))
		}
	})
	t.Run("prompt change replaces with a word-diffable reason", func(t *testing.T) {
		f := newFixture(t)
		f.applied(twoImages)
		p, _ := f.plan(f.write(strings.Replace(twoImages, "red apple", "yellow apple", 1)))
		c := p.Change(a("image.a"))
		if c.Action != plans.Replace || c.Reason.Code != plans.ReasonChanged || fmt.Sprint(c.Reason.Attrs) != "[prompt]" {
			t.Fatalf("image.a: %s %+v", c.Action, c.Reason)
		}
		if len(c.Attrs) != 1 || c.Attrs[0].Name != "prompt" || c.Attrs[0].After != "a yellow apple" {
			t.Errorf("attrs %+v", c.Attrs)
		}
		if p.Change(a("image.b")).Action != plans.NoOp {
			t.Errorf("image.b should be untouched")
		}
	})
	t.Run("ignore_changes keeps what was made", func(t *testing.T) {
		f := newFixture(t)
		f.applied(twoImages)
		src := strings.Replace(twoImages, "red apple\"\n  image_number = 1", "red apple, again\"\n  image_number = 1\n  lifecycle {\n    ignore_changes = [prompt]\n  }", 1)
		p, d := f.plan(f.write(src))
		if d != "" || p.Change(a("image.a")).Action != plans.NoOp {
			t.Fatalf("image.a %s (%s)", p.Change(a("image.a")).Action, d)
		}
	})
	t.Run("rename is a move", func(t *testing.T) {
		f := newFixture(t)
		f.applied(twoImages)
		p, _ := f.plan(f.write(strings.Replace(twoImages, `image "a"`, `image "apple"`, 1)))
		c := p.Change(a("image.apple"))
		if c.Action != plans.Move || c.PrevAddr.String() != "image.a" {
			t.Fatalf("image.apple: %s from %q", c.Action, c.PrevAddr)
		}
		if p.Change(a("image.a")) != nil {
			t.Errorf("image.a should be claimed by the move, not deleted")
		}
	})
	t.Run("removed is deleted, protected refuses", func(t *testing.T) {
		f := newFixture(t)
		f.applied(twoImages)
		only := twoImages[:strings.Index(twoImages, `image "b"`)]
		p, d := f.plan(f.write(only))
		if p.Change(a("image.b")).Action != plans.Delete || d != "" {
			t.Fatalf("image.b: %s (%s)", p.Change(a("image.b")).Action, d)
		}
		f.state.Protections[a("image.b")] = true
		_, d = f.plan(f.write(only))
		if !strings.Contains(d, "Instance cannot be destroyed") {
			t.Errorf("a protection kept in state must refuse the delete, got %q", d)
		}
	})
	t.Run("prevent_destroy refuses a replace", func(t *testing.T) {
		f := newFixture(t)
		f.applied(twoImages)
		src := strings.Replace(twoImages, "red apple\"", "red apple, ripe\"\n  lifecycle {\n    prevent_destroy = true\n  }", 1)
		_, d := f.plan(f.write(src))
		if !strings.Contains(d, "Instance cannot be destroyed") {
			t.Errorf("want refusal, got %q", d)
		}
	})
	t.Run("files: missing, edited, touched", func(t *testing.T) {
		f := newFixture(t)
		f.applied(twoImages)
		cfg := f.write(twoImages)
		b := f.state.Resources[a("image.b")]
		os.Remove(filepath.Join(f.dir, b.Outputs[1].Path))
		p, _ := f.plan(cfg)
		if c := p.Change(a("image.b")); c.Action != plans.Update || len(c.Redownload) != 1 || c.Redownload[0] != 1 {
			t.Fatalf("missing file: %s %v", c.Action, c.Redownload)
		}
		if p, _ := f.plan(cfg, func(in *PlanInput) { in.Refresh = false }); p.HasChanges() {
			t.Errorf("-refresh=false must not look at files")
		}
		recA := f.state.Resources[a("image.a")]
		path := filepath.Join(f.dir, recA.Outputs[0].Path)
		orig, _ := os.ReadFile(path)
		edited := []byte(strings.ToUpper(string(orig))) // same size, other bytes
		os.WriteFile(path, edited, 0o644)
		if c, _ := f.plan(cfg); c.Change(a("image.a")).Action != plans.Update {
			t.Errorf("edited file (same size) not noticed")
		}
		os.WriteFile(path, orig, 0o644)
		future := time.Now().Add(time.Hour)
		os.Chtimes(path, future, future)
		if c, _ := f.plan(cfg); c.Change(a("image.a")).Action != plans.NoOp {
			t.Errorf("a touched but identical file is not a change")
		}
	})
	t.Run("dir change moves files without generating", func(t *testing.T) {
		f := newFixture(t)
		f.applied(twoImages)
		p, _ := f.plan(f.write(strings.Replace(twoImages, "image_number = 2", "image_number = 2\n  dir = \"art/pears\"", 1)))
		if c := p.Change(a("image.b")); c.Action != plans.Update || c.Dir != "art/pears" {
			t.Fatalf("image.b: %s dir %q", c.Action, c.Dir)
		}
	})
	t.Run("failed generation is replaced", func(t *testing.T) {
		f := newFixture(t)
		f.applied(twoImages)
		f.state.Resources[a("image.a")].Status = plans.StatusFailed
		p, _ := f.plan(f.write(twoImages))
		if c := p.Change(a("image.a")); c.Action != plans.Replace || c.Reason.Code != plans.ReasonFailed {
			t.Fatalf("image.a: %s %+v", c.Action, c.Reason)
		}
	})
	t.Run("intent with id resumes, without id is possibly paid", func(t *testing.T) {
		f := newFixture(t)
		cfg := f.write(twoImages)
		p, _ := f.plan(cfg)
		f.state.Intents[a("image.a")] = &statefile.Intent{Addr: a("image.a"), Fingerprint: p.Change(a("image.a")).Fingerprint, GenerationID: "job-1"}
		f.state.Intents[a("image.b")] = &statefile.Intent{Addr: a("image.b"), Fingerprint: p.Change(a("image.b")).Fingerprint}
		p, _ = f.plan(cfg)
		if c := p.Change(a("image.a")); c.Action != plans.Resume || c.GenerationID != "job-1" {
			t.Errorf("image.a: %s %q", c.Action, c.GenerationID)
		}
		if c := p.Change(a("image.b")); !c.PossiblyPaid() || c.Reason.Code != plans.ReasonAnswerLost || !c.Reason.MayHaveBeenPaid() {
			t.Errorf("image.b: %s %+v", c.Action, c.Reason)
		}
		if p.HasChanges() != true || p.Generations() != 0 || p.Summary().PossiblyPaid != 1 {
			t.Errorf("summary %+v, %d generations", p.Summary(), p.Generations())
		}
		p, _ = f.plan(cfg, func(in *PlanInput) { in.Replace = []addrs.Instance{a("image.b")} })
		if c := p.Change(a("image.b")); c.Action != plans.Create || c.Reason.Code != plans.ReasonAnswerLost {
			t.Errorf("image.b with -replace: %s %+v", c.Action, c.Reason)
		}
	})
	t.Run("-replace and -target", func(t *testing.T) {
		f := newFixture(t)
		f.applied(twoImages)
		cfg := f.write(twoImages)
		p, d := f.plan(cfg, func(in *PlanInput) { in.Replace = []addrs.Instance{a("image.b")} })
		if p.Change(a("image.b")).Action != plans.Replace || p.Change(a("image.a")).Action != plans.NoOp || d != "" {
			t.Errorf("-replace: %v %s", actions(p), d)
		}
		_, d = f.plan(cfg, func(in *PlanInput) { in.Replace = []addrs.Instance{a("image.nope")} })
		if !strings.Contains(d, "Invalid replace address") {
			t.Errorf("unknown -replace: %q", d)
		}
		f2 := newFixture(t)
		p, _ = f2.plan(f2.write(twoImages), func(in *PlanInput) { in.Targets = []addrs.Instance{a("image.a")} })
		if len(p.Changes) != 1 || p.Changes[0].Addr.String() != "image.a" {
			t.Errorf("-target: %v", actions(p))
		}
	})
}

func TestPlanCascade(t *testing.T) {
	const src = `
image "hero" {
  prompt       = "a lighthouse at dusk"
  image_number = 1
}
video "motion" {
  source_image = image.hero.outputs[0].media_url
  duration     = 2
}
video "intro" {
  prompt = "title card"
}
`
	f := newFixture(t)
	cfg := f.write(src)
	p, _ := f.plan(cfg)
	if c := p.Change(a("video.motion")); c.Action != plans.Create || c.Fingerprint != "" || len(c.AfterUnknown) == 0 {
		t.Fatalf("video.motion before apply: %s fp %q unknown %v", c.Action, c.Fingerprint, c.AfterUnknown)
	}
	// Record the image, then the video made from its media URL.
	f.applied(src[:strings.Index(src, "video")])
	p, _ = f.plan(cfg)
	c := p.Change(a("video.motion"))
	if c.Fingerprint == "" {
		t.Fatal("the video's request should be known once the image is recorded")
	}
	f.state.Resources[a("video.motion")] = &statefile.Resource{Addr: a("video.motion"), Fingerprint: c.Fingerprint, Status: plans.StatusSucceed, Dir: c.Dir}
	f.state.Resources[a("video.intro")] = &statefile.Resource{Addr: a("video.intro"), Fingerprint: p.Change(a("video.intro")).Fingerprint, Status: plans.StatusSucceed, Dir: p.Change(a("video.intro")).Dir}
	if p, _ := f.plan(cfg); p.HasChanges() {
		t.Fatalf("not converged: %v", actions(p))
	}
	p, _ = f.plan(f.write(strings.Replace(src, "at dusk", "at dawn", 1)))
	got := actions(p)
	if got["image.hero"] != plans.Replace || got["video.motion"] != plans.Replace || got["video.intro"] != plans.NoOp {
		t.Fatalf("cascade: %v", got)
	}
	if r := p.Change(a("video.motion")).Reason; r.Code != plans.ReasonUpstream || fmt.Sprint(r.Upstream) != "[image.hero]" {
		t.Errorf("cascade reason %+v", r)
	}
}

// a parses an instance address for a test.
func a(s string) addrs.Instance {
	addr, err := addrs.ParseInstance(s)
	if err != nil {
		panic(err)
	}
	return addr
}

// A plan made on every core and in windows (prepare's expansion,
// fingerprints and file checks; planInWindows) is the plan made on one in
// one pass, change for change: a large configuration with files missing,
// modified and touched, changed prompts, for_each keys removed and added,
// and resources whose requests depend on others.
func TestPlanOnEveryCoreIsThePlanOnOne(t *testing.T) {
	var b strings.Builder
	gen := func(dependent bool, prompt func(i int) string) string {
		b.Reset()
		for i := 0; i < 300; i++ {
			fmt.Fprintf(&b, "image \"b%03d\" {\n  prompt = %q\n}\n", i, prompt(i))
		}
		b.WriteString("image \"many\" {\n  for_each = toset([")
		from, to := 0, 600
		if dependent { // the later configuration: keys removed and added
			from, to = 10, 605
		}
		for i := from; i < to; i++ {
			fmt.Fprintf(&b, "%q, ", fmt.Sprintf("k%03d", i))
		}
		b.WriteString("])\n  prompt = \"item ${each.key}\"\n}\n")
		if dependent {
			b.WriteString("video \"after\" {\n  source_image = image.b000.outputs[0].media_url\n  duration     = 2\n}\n")
		}
		return b.String()
	}
	f := newFixture(t)
	f.applied(gen(false, func(i int) string { return fmt.Sprintf("picture %d", i) }))
	for i, addr := range addrs.SortedKeys(f.state.Resources) {
		rec := f.state.Resources[addr]
		if len(rec.Outputs) == 0 {
			continue
		}
		path := filepath.Join(f.dir, rec.Outputs[0].Path)
		switch i % 7 {
		case 1:
			os.Remove(path)
		case 2:
			os.WriteFile(path, []byte("other bytes, longer than before"), 0o644)
		case 3:
			future := time.Now().Add(time.Hour)
			os.Chtimes(path, future, future) // same bytes: hashed, and kept
		}
	}
	cfg := f.write(gen(true, func(i int) string {
		if i%11 == 0 {
			return fmt.Sprintf("a new picture %d", i)
		}
		return fmt.Sprintf("picture %d", i)
	}))
	describe := func(p *plans.Plan) []string {
		var out []string
		for _, c := range p.Changes {
			s := fmt.Sprintf("%s %s %s %v %v", c.Addr, c.Action, c.Fingerprint, c.Redownload, c.Attrs)
			if c.Reason != nil {
				s += " " + c.Reason.Code.String()
			}
			out = append(out, s)
		}
		return out
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	defer func(w int) { prepareWindow = w }(prepareWindow)
	prepareWindow = 1 << 30 // one window: the for_each is not planned in windows
	one, d := f.plan(cfg)
	if d != "" {
		t.Fatal(d)
	}
	runtime.GOMAXPROCS(4)
	prepareWindow = 100 // the for_each in windows, the blocks in several
	many, d := f.plan(cfg)
	if d != "" {
		t.Fatal(d)
	}
	if diff := cmp.Diff(describe(one), describe(many)); diff != "" {
		t.Fatalf("the plans differ (-one core, one window +four cores, windows of 100):\n%s", diff)
	}
	counts := map[plans.Action]int{}
	for _, c := range many.Changes {
		counts[c.Action]++
	}
	if counts[plans.Replace] == 0 || counts[plans.Update] == 0 || counts[plans.NoOp] == 0 || counts[plans.Create] == 0 || counts[plans.Delete] == 0 {
		t.Errorf("the plan does not exercise creates, replaces, updates, deletes and no-ops: %v", counts)
	}
}
