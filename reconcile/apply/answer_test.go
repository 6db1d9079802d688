package apply

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/cache"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/workdir"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// answering is a provider whose create answer carries the finished job,
// its images inline (as OpenAI's does), and which keeps no copy: after
// the answer it can be asked nothing.
type answering struct {
	provider.Provider // the fake service, for ids
	t                 testing.TB
	data              []byte
	asked             atomic.Int32 // calls after the answer
}

func (p *answering) Submit(ctx context.Context, r provider.Request) (provider.Job, error) {
	j, err := p.Provider.Submit(ctx, r)
	if err != nil {
		return j, err
	}
	j.Answer = &provider.Result{Detail: []byte(`{"created":1}`), Usage: []byte(`{"total_tokens":3}`),
		Outputs: []provider.Output{{Index: 0, Data: p.data, MediaType: "image/png"}}}
	return j, nil
}

func (p *answering) Status(ctx context.Context, j provider.Job) (provider.Status, error) {
	p.asked.Add(1)
	return provider.Status{}, errors.New("the provider keeps no jobs")
}

func (p *answering) Result(ctx context.Context, j provider.Job) (*provider.Result, error) {
	p.asked.Add(1)
	return nil, errors.New("the provider keeps no jobs")
}

func (p *answering) Download(ctx context.Context, url, dir, base string) (*apiclient.Downloaded, error) {
	p.asked.Add(1)
	return nil, errors.New("the provider has no files to download")
}

const answeredSrc = `
image "a" {
  prompt       = "an answered lighthouse"
  image_number = 1
}
`

// An apply that died after the answer was recorded, before it wrote a
// file, leaves the answer in the state and its bytes in the cache: the
// next apply resumes the job from them, asking the provider nothing, and
// the bytes are the ones answered.
func TestAnswerResumedFromTheCache(t *testing.T) {
	svc := &fakeService{}
	w := newApplyDir(t, svc)
	data := pngOf("seven")
	ans := &answering{t: t, data: data}
	w.wrap = func(p provider.Provider) provider.Provider { ans.Provider = p; return ans }
	w.configure(answeredSrc)

	// What the apply that died recorded: the job's id and its answer,
	// the bytes in the cache.
	sha, err := workdir.CacheOf(w.cfg, w.dir).Put(data)
	if err != nil {
		t.Fatal(err)
	}
	w.interrupted("image.a", "job-answered")
	inst := w.instance("image.a")
	if err := w.store.Update(func(tx *statefile.Tx) error {
		it, err := tx.Intent(inst.Addr)
		if err != nil {
			return err
		}
		it.Answer = &statefile.Answer{Detail: []byte(`{"created":1}`), Outputs: []statefile.Output{
			{Index: 0, SHA256: sha, Size: int64(len(data)), ContentType: "image/png", Path: "generated/image/a/0.png"}}}
		return tx.RecordIntent(it)
	}); err != nil {
		t.Fatal(err)
	}

	p := w.plan(answeredSrc)
	if got := actions(p)["image.a"]; got != plans.Resume {
		t.Fatalf("planned %s, want resume", got)
	}
	res := w.apply(context.Background(), p)
	if len(res.Resumed) != 1 || len(res.Failed) != 0 {
		t.Fatalf("resumed %v, failed %v", res.Resumed, failedAddrs(res.Failed))
	}
	if n := ans.asked.Load(); n != 0 || svc.count("Create") != 0 {
		t.Errorf("the provider was asked %d times and sent %d creates; the answer in the state is all there is", n, svc.count("Create"))
	}
	if got := w.read("generated/image/a/0.png"); got != string(data) {
		t.Errorf("the file holds %d bytes, not the %d answered", len(got), len(data))
	}
	rec := w.snapshot().Resources[inst.Addr]
	if rec == nil || rec.Status != plans.StatusSucceed || len(rec.Outputs) != 1 || rec.Outputs[0].SHA256 != sha {
		t.Fatalf("recorded %+v", rec)
	}
	w.checkFiles(rec, "generated/image/a")
	if it := w.snapshot().Intents[inst.Addr]; it != nil {
		t.Errorf("the intent is left: %+v", it)
	}
	w.checkNoChanges(answeredSrc, "after the resume")
}

// A file that cannot be written after the answer arrived (its folder is
// a file) loses nothing: the record keeps the answered hash, the next plan
// restores the file from the cache, and the provider is asked nothing
// more; the one create stays the only one.
func TestAnswerKeptWhenItsFileCannotBeWritten(t *testing.T) {
	svc := &fakeService{}
	w := newApplyDir(t, svc)
	data := pngOf("nine")
	ans := &answering{t: t, data: data}
	w.wrap = func(p provider.Provider) provider.Provider { ans.Provider = p; return ans }
	blocker := filepath.Join(w.dir, "generated", "image", "a")
	if err := os.MkdirAll(filepath.Dir(blocker), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(blocker, []byte("not a folder"), 0o644); err != nil {
		t.Fatal(err)
	}

	res := w.apply(context.Background(), w.plan(answeredSrc))
	if len(res.Failed) != 1 || len(res.Generated) != 0 {
		t.Fatalf("generated %v, failed %v; want the write to fail", res.Generated, failedAddrs(res.Failed))
	}
	addr := a("image.a")
	rec := w.snapshot().Resources[addr]
	sum := cache.New(filepath.Join(w.dir, ".genform", "cache"))
	if rec == nil || len(rec.Outputs) != 1 || rec.Outputs[0].SHA256 == "" || !sum.Has(rec.Outputs[0].SHA256) {
		t.Fatalf("recorded %+v; want the answered hash, its bytes in the cache", rec)
	}

	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	p := w.plan(answeredSrc)
	c := p.Changes[0]
	if c.Action != plans.Update || len(c.Reason.Local) != 1 || !c.Reason.Local[0].Cached {
		t.Fatalf("planned %s %+v; want an update from the cache", c.Action, c.Reason)
	}
	res = w.apply(context.Background(), p)
	if len(res.Updated) != 1 || len(res.Failed) != 0 {
		t.Fatalf("updated %v, failed %v", res.Updated, failedAddrs(res.Failed))
	}
	if got := w.read("generated/image/a/0.png"); got != string(data) {
		t.Errorf("the file holds %d bytes, not the %d answered", len(got), len(data))
	}
	if n := ans.asked.Load(); n != 0 || svc.count("Create") != 1 {
		t.Errorf("the provider was asked %d times after the answer, with %d creates; want 0 and 1", n, svc.count("Create"))
	}
	w.checkNoChanges(answeredSrc, "after the file was written from the cache")
}

// A job that returns more outputs than its request asked for may have been
// charged for each: every one is downloaded and recorded, with a
// warning, and the next plan has nothing to do. Only a number no request
// of the endpoint can make is cut.
func TestEveryOutputOfAPaidJobIsKept(t *testing.T) {
	for _, tc := range []struct {
		name       string
		listed     int
		want, kept int
	}{
		{"more than asked", 3, 3, 3},
		{"more than any request makes", 40, 4, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := &fakeService{scripts: map[string]fakeJob{"": {outputs: tc.listed}}}
			w := newApplyDir(t, svc)
			src := "image \"a\" {\n  prompt = \"a generous lighthouse\"\n  image_number = 1\n}\n"
			res := w.apply(context.Background(), w.plan(src))
			if len(res.Generated) != 1 {
				t.Fatalf("generated %v, failed %v", res.Generated, failedAddrs(res.Failed))
			}
			rec := w.snapshot().Resources[a("image.a")]
			if len(rec.Outputs) != tc.kept {
				t.Fatalf("recorded %d outputs of %d listed, want %d", len(rec.Outputs), tc.listed, tc.kept)
			}
			w.checkFiles(rec, "generated/image/a")
			warned := false
			for _, ev := range w.events {
				warned = warned || ev.Phase == PhaseWarning && ev.Err != nil && strings.Contains(ev.Err.Error(), "but 1 was asked for")
			}
			if !warned {
				t.Error("no warning that the job listed more outputs than asked")
			}
			w.checkNoChanges(src, "after keeping every output")
		})
	}
}

// answered records, as an apply stopped after the provider answered with
// the finished job would have, that addr's declared request was
// submitted as job id and answered with outs (their bytes in the cache
// already, when they have a hash). It returns the request's fingerprint.
func (w *applyDir) answered(addr, id string, outs ...statefile.Output) string {
	w.t.Helper()
	w.interrupted(addr, id)
	var fp string
	if err := w.store.Update(func(tx *statefile.Tx) error {
		it, err := tx.Intent(a(addr))
		if err != nil {
			return err
		}
		fp = it.Fingerprint
		it.Answer = &statefile.Answer{Detail: []byte(`{"created":2}`), Outputs: outs}
		return tx.RecordIntent(it)
	}); err != nil {
		w.t.Fatal(err)
	}
	return fp
}

// inlineOutputs puts each of contents in the cache, as keepAnswer does,
// and returns the outputs an answer records of them.
func (w *applyDir) inlineOutputs(contents ...string) []statefile.Output {
	w.t.Helper()
	c := workdir.CacheOf(w.cfg, w.dir)
	var outs []statefile.Output
	for i, s := range contents {
		sha, err := c.Put(pngOf(s))
		if err != nil {
			w.t.Fatal(err)
		}
		outs = append(outs, statefile.Output{Index: i, SHA256: sha, Size: int64(len(pngOf(s))), ContentType: "image/png",
			Path: fmt.Sprintf("generated/image/a/%d.png", i)})
	}
	return outs
}

// A job an interrupted apply recorded with its answer, for a request no
// longer declared, is settled without asking the provider anything: it
// is filed in the history with the bytes the cache holds, and declaring
// its request again restores it at no cost, with the answered bytes.
func TestAnsweredJobOfAnotherRequestIsKept(t *testing.T) {
	svc, w := convergedDir(t, appleConfig)
	w.configure(greenConfig)
	fp := w.answered("image.a", "job-answered", w.inlineOutputs("green 0", "green 1")...)

	p := w.plan(appleConfig)
	c := p.Change(a("image.a"))
	if c.Action != plans.Update || !c.Reason.MayHaveBeenPaid() || c.Reason.KeptJob() != "job-answered" {
		t.Fatalf("planned %s %+v, want the answered job settled", c.Action, c.Reason)
	}
	asked := svc.count("Status") + svc.count("Detail") + svc.count("Download") + svc.count("Create")
	res := w.apply(context.Background(), p)
	if len(res.Failed) != 0 {
		t.Fatalf("failed %v", res.Failed)
	}
	if n := svc.count("Status") + svc.count("Detail") + svc.count("Download") + svc.count("Create") - asked; n != 0 {
		t.Errorf("the provider was asked %d times; the answer is all there is", n)
	}
	if !w.warned("image.a", "job job-answered, left by an interrupted apply, ended succeed and is kept in the history", "restores it at no cost") {
		t.Errorf("no warning that the job is kept: %v", w.eventsOf("image.a"))
	}
	hist, err := w.store.Generations(fp)
	if err != nil || len(hist) != 1 {
		t.Fatalf("history of the green request: %+v, %v", hist, err)
	}
	e := hist[0]
	if e.GenerationID != "job-answered" || e.Status != plans.StatusSucceed || len(e.Outputs) != 2 || !everyOutputHashed(e) || string(e.Detail) != `{"created":2}` {
		t.Fatalf("kept %+v", e)
	}
	for _, o := range e.Outputs {
		if o.Path != fmt.Sprintf("generated/image/a/%d.png", o.Index) {
			t.Errorf("output %d kept at %q", o.Index, o.Path)
		}
	}
	snap := w.snapshot()
	if snap.Intents[a("image.a")] != nil || snap.Resources[a("image.a")].GenerationID != "job-1" {
		t.Error("settling did not keep the record and clear the intent")
	}

	p = w.plan(greenConfig)
	if c := p.Change(a("image.a")); c.Action != plans.Restore || c.GenerationID != "job-answered" || !c.Reason.Cached {
		t.Fatalf("green again: %s %+v, want the answered job restored from the cache", c.Action, c.Reason)
	}
	res = w.apply(context.Background(), p)
	if addrList(res.Restored) != "image.a" || svc.count("Create") != 1 {
		t.Fatalf("restored %q, %d creates", addrList(res.Restored), svc.count("Create"))
	}
	for i, s := range []string{"green 0", "green 1"} {
		if got := w.read(fmt.Sprintf("generated/image/a/%d.png", i)); got != string(pngOf(s)) {
			t.Errorf("output %d holds %q, want the answered %q", i, got, pngOf(s))
		}
	}
	w.checkFiles(w.snapshot().Resources[a("image.a")], "generated/image/a")
	w.checkNoChanges(greenConfig, "after the answered job was restored")
}

// An answered job whose output came as a link only, or whose bytes the
// cache no longer holds, is kept in the history without that file's
// hash: the job is not forgotten, but it cannot be restored, and its
// request is generated anew when declared again.
func TestAnsweredJobWithoutItsBytesIsKeptUnrestorable(t *testing.T) {
	_, w := convergedDir(t, appleConfig)
	w.configure(greenConfig)
	outs := w.inlineOutputs("green 0")
	outs = append(outs, statefile.Output{Index: 1, ID: "out-1", MediaURL: "http://fake.test/media/job-answered/1.png"})
	fp := w.answered("image.a", "job-answered", outs...)

	res := w.apply(context.Background(), w.plan(appleConfig))
	if len(res.Failed) != 0 {
		t.Fatalf("failed %v", res.Failed)
	}
	hist, err := w.store.Generations(fp)
	if err != nil || len(hist) != 1 || len(hist[0].Outputs) != 2 {
		t.Fatalf("history of the green request: %+v, %v", hist, err)
	}
	if o := hist[0].Outputs[0]; o.SHA256 != outs[0].SHA256 || o.Path != "generated/image/a/0.png" {
		t.Errorf("the cached output was kept as %+v", o)
	}
	if o := hist[0].Outputs[1]; o.SHA256 != "" || o.Path != "" || o.MediaURL != outs[1].MediaURL {
		t.Errorf("the linked output was kept as %+v, want its link without a hash or a path", o)
	}
	if c := w.plan(greenConfig).Change(a("image.a")); c.Action != plans.Replace {
		t.Errorf("green again: %s %+v, want it generated anew", c.Action, c.Reason)
	}
}
