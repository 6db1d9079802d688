package reconcile

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/workdir"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
	"github.com/genform/genform/statefile/boltstate"
)

// history opens a real state file in the fixture's directory, whose
// history the plan reads, and records entries in it, oldest first.
func (f *fixture) history(entries ...*statefile.Resource) *statefile.Store {
	f.t.Helper()
	st, err := boltstate.Open(filepath.Join(f.dir, ".genform", "state.db"), statefile.Options{Create: true, Command: "test"})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { st.Close() })
	for _, e := range entries {
		// One transaction each: each is made after the one before.
		if err := st.Update(func(tx *statefile.Tx) error { return tx.RecordHistory(e) }); err != nil {
			f.t.Fatal(err)
		}
	}
	return st
}

// shaOf is the sha256 of data, as the state records it.
func shaOf(data string) string {
	sum := sha256.Sum256([]byte(data))
	return hex.EncodeToString(sum[:])
}

// generation is a succeeded generation gen of the request fp, last held
// by holder, with one file for each of contents.
func generation(fp, gen, holder string, contents ...string) *statefile.Resource {
	h := a(holder)
	dir := "generated/image/" + h.Resource.Name
	e := &statefile.Resource{Addr: h, Endpoint: addrs.Text2Image, Fingerprint: fp, Request: []byte(`{"prompt":"a red apple"}`),
		GenerationID: gen, CreationID: "creation-" + gen, Status: plans.StatusSucceed, Dir: dir}
	for i, c := range contents {
		e.Outputs = append(e.Outputs, statefile.Output{Index: i, Path: fmt.Sprintf("%s/%d.png", dir, i), SHA256: shaOf(c), Size: int64(len(c))})
	}
	return e
}

// fingerprintOf is the fingerprint the plan computes for addr's declared
// request under cfg's source, planned without a history.
func (f *fixture) fingerprintOf(src, addr string) string {
	f.t.Helper()
	p, d := f.plan(f.write(src))
	if d != "" {
		f.t.Fatal(d)
	}
	c := p.Change(a(addr))
	if c == nil || c.Fingerprint == "" {
		f.t.Fatalf("%s has no known request", addr)
	}
	return c.Fingerprint
}

const storedApple = `
genform {
  store "s3" {
    bucket     = "team-media"
    endpoint   = "http://127.0.0.1:9"
    path_style = true
  }
}
` + oneImage

// A request the history holds a generation of is restored, at no cost,
// rather than generated: the plan names the generation, its creation,
// the instance that held it, and whether the local cache and the object
// store hold its files. A generation that failed, whose files were not
// all hashed, of another kind, or that a record holds, is not restored.
// Of several, the one the instance held last is taken, else the newest.
func TestPlanRestoresFromTheHistory(t *testing.T) {
	type want struct {
		action         plans.Action
		gen, holder    string
		cached, stored bool
	}
	cases := []struct {
		name string
		src  string
		// setup records the history, given the request's fingerprint,
		// and may add records and cache entries.
		setup func(f *fixture, fp string) []*statefile.Resource
		want  want
	}{
		{name: "a generation another instance held", src: oneImage,
			setup: func(f *fixture, fp string) []*statefile.Resource {
				return []*statefile.Resource{generation(fp, "job-h", "image.gone", "first")}
			},
			want: want{action: plans.Restore, gen: "job-h", holder: "image.gone"}},
		{name: "every file in the cache", src: oneImage,
			setup: func(f *fixture, fp string) []*statefile.Resource {
				f.cache("first", "second")
				return []*statefile.Resource{generation(fp, "job-h", "image.gone", "first", "second")}
			},
			want: want{action: plans.Restore, gen: "job-h", holder: "image.gone", cached: true}},
		{name: "one file of two in the cache", src: oneImage,
			setup: func(f *fixture, fp string) []*statefile.Resource {
				f.cache("first")
				return []*statefile.Resource{generation(fp, "job-h", "image.gone", "first", "second")}
			},
			want: want{action: plans.Restore, gen: "job-h", holder: "image.gone"}},
		{name: "every file in the object store", src: storedApple,
			setup: func(f *fixture, fp string) []*statefile.Resource {
				e := generation(fp, "job-h", "image.gone", "first", "second")
				e.Outputs[0].Stored, e.Outputs[1].Stored = true, true
				return []*statefile.Resource{e}
			},
			want: want{action: plans.Restore, gen: "job-h", holder: "image.gone", stored: true}},
		{name: "one file of two in the object store", src: storedApple,
			setup: func(f *fixture, fp string) []*statefile.Resource {
				e := generation(fp, "job-h", "image.gone", "first", "second")
				e.Outputs[0].Stored = true
				return []*statefile.Resource{e}
			},
			want: want{action: plans.Restore, gen: "job-h", holder: "image.gone"}},
		{name: "stored, with no store configured", src: oneImage,
			setup: func(f *fixture, fp string) []*statefile.Resource {
				e := generation(fp, "job-h", "image.gone", "first")
				e.Outputs[0].Stored = true
				return []*statefile.Resource{e}
			},
			want: want{action: plans.Restore, gen: "job-h", holder: "image.gone"}},
		{name: "the one held here beats a newer one", src: oneImage,
			setup: func(f *fixture, fp string) []*statefile.Resource {
				return []*statefile.Resource{generation(fp, "job-own", "image.a", "mine"), generation(fp, "job-new", "image.other", "theirs")}
			},
			want: want{action: plans.Restore, gen: "job-own", holder: "image.a"}},
		{name: "else the newest", src: oneImage,
			setup: func(f *fixture, fp string) []*statefile.Resource {
				return []*statefile.Resource{generation(fp, "job-old", "image.x", "old"), generation(fp, "job-new", "image.y", "new")}
			},
			want: want{action: plans.Restore, gen: "job-new", holder: "image.y"}},
		{name: "a failed generation", src: oneImage,
			setup: func(f *fixture, fp string) []*statefile.Resource {
				e := generation(fp, "job-h", "image.gone")
				e.Status, e.Error = plans.StatusFailed, "the service reported the generation failed"
				return []*statefile.Resource{e}
			},
			want: want{action: plans.Create}},
		{name: "a file never hashed", src: oneImage,
			setup: func(f *fixture, fp string) []*statefile.Resource {
				e := generation(fp, "job-h", "image.gone", "first", "second")
				e.Outputs[1].SHA256 = ""
				return []*statefile.Resource{e}
			},
			want: want{action: plans.Create}},
		{name: "a generation without files", src: oneImage,
			setup: func(f *fixture, fp string) []*statefile.Resource {
				return []*statefile.Resource{generation(fp, "job-h", "image.gone")}
			},
			want: want{action: plans.Create}},
		{name: "a video of the same fingerprint", src: oneImage,
			setup: func(f *fixture, fp string) []*statefile.Resource {
				e := generation(fp, "job-h", "image.gone", "first")
				e.Addr, e.Endpoint = a("video.gone"), addrs.Text2Video
				return []*statefile.Resource{e}
			},
			want: want{action: plans.Create}},
		{name: "a generation a record holds", src: oneImage,
			setup: func(f *fixture, fp string) []*statefile.Resource {
				e := generation(fp, "job-h", "image.gone", "first")
				held := generation("fp-other", "job-h", "image.keeper", "first")
				f.state.Resources[held.Addr] = held
				return []*statefile.Resource{e}
			},
			want: want{action: plans.Create}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			fp := f.fingerprintOf(tc.src, "image.a")
			hist := f.history(tc.setup(f, fp)...)
			p, d := f.plan(f.write(tc.src), func(in *PlanInput) { in.History = hist })
			if d != "" {
				t.Fatal(d)
			}
			c := p.Change(a("image.a"))
			if c.Action != tc.want.action {
				t.Fatalf("planned %s %+v, want %s", c.Action, c.Reason, tc.want.action)
			}
			if tc.want.action != plans.Restore {
				if c.Reason == nil || c.Reason.Code != plans.ReasonNew || c.GenerationID != "" {
					t.Errorf("reason %+v, generation %q; want a new generation", c.Reason, c.GenerationID)
				}
				return
			}
			r := c.Reason
			if c.GenerationID != tc.want.gen || r.Code != plans.ReasonRestored || r.GenerationID != tc.want.gen ||
				r.CreationID != "creation-"+tc.want.gen || r.Holder != a(tc.want.holder) || r.Since.IsZero() {
				t.Errorf("restores %q because %+v; want %s, held by %s", c.GenerationID, r, tc.want.gen, tc.want.holder)
			}
			if r.Cached != tc.want.cached || r.Stored != tc.want.stored {
				t.Errorf("cached %v, stored %v; want %v, %v", r.Cached, r.Stored, tc.want.cached, tc.want.stored)
			}
			if s := p.Summary(); s.Restore != 1 || s.Generate != 0 {
				t.Errorf("summary %+v; a restore generates nothing", s)
			}
			if e, ok := p.Cost(); ok && e.Amount != 0 {
				t.Errorf("a restore costs %v", e.Amount)
			}
		})
	}
}

// cache puts each of contents in the working directory's local cache.
func (f *fixture) cache(contents ...string) {
	f.t.Helper()
	c := workdir.CacheOf(f.write(oneImage), f.dir)
	for _, s := range contents {
		if _, err := c.Put([]byte(s)); err != nil {
			f.t.Fatal(err)
		}
	}
}

// One generation has one holder: of two instances of its request, one
// restores it and the other is generated; restore = false generates both.
func TestPlanRestoresAGenerationOnce(t *testing.T) {
	two := strings.Replace(oneImage, `image "a" {`, "image \"a\" {\n  count = 2", 1)
	f := newFixture(t)
	fp := f.fingerprintOf(two, "image.a[0]")
	if other := f.fingerprintOf(two, "image.a[1]"); other != fp {
		t.Fatalf("the two instances' requests differ: %s, %s", fp, other)
	}
	hist := f.history(generation(fp, "job-h", "image.gone", "first"))
	p, d := f.plan(f.write(two), func(in *PlanInput) { in.History = hist })
	if d != "" {
		t.Fatal(d)
	}
	if got := actions(p); got["image.a[0]"] != plans.Restore || got["image.a[1]"] != plans.Create {
		t.Errorf("actions %v; want image.a[0] restored and image.a[1] generated", got)
	}
	if s := p.Summary(); s.Restore != 1 || s.Generate != 1 {
		t.Errorf("summary %+v", s)
	}

	p, d = f.plan(f.write("genform {\n  restore = false\n}\n"+two), func(in *PlanInput) { in.History = hist })
	if d != "" {
		t.Fatal(d)
	}
	if got := actions(p); got["image.a[0]"] != plans.Create || got["image.a[1]"] != plans.Create {
		t.Errorf("restore = false: actions %v; want both generated", got)
	}
}

// A history that cannot be read is an error that says so, and the plan
// is not made from half of it.
func TestPlanWithAnUnreadableHistory(t *testing.T) {
	f := newFixture(t)
	fp := f.fingerprintOf(oneImage, "image.a")
	hist := f.history(generation(fp, "job-h", "image.gone", "first"))
	if err := hist.Close(); err != nil {
		t.Fatal(err)
	}
	_, d := f.plan(f.write(oneImage), func(in *PlanInput) { in.History = hist })
	if !strings.Contains(d, "Unreadable history") {
		t.Errorf("diagnostics %q; want the history reported unreadable", d)
	}
}
