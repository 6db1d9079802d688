package apply

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/reconcile"
	"github.com/genform/genform/reconcile/plans"
)

// TestApplyCreateAnswers checks the write-ahead rule on each kind of answer
// to a create request: an id is recorded before polling; a refusal leaves
// nothing behind; an ambiguous failure keeps the intent so the next plan
// warns instead of silently paying again.
func TestApplyCreateAnswers(t *testing.T) {
	t.Run("success records the outputs and clears the intent", func(t *testing.T) {
		svc := &fakeService{}
		st, res, dir := applyWith(t, oneImage, svc)
		snap, _ := st.Snapshot()
		rec := snap.Resources[a("image.a")]
		if len(res.Generated) != 1 || rec == nil || rec.CreationID != "job-1" || len(snap.Intents) != 0 {
			t.Fatalf("result %+v, record %+v, intents %v", res, rec, snap.Intents)
		}
		if _, err := os.Stat(filepath.Join(dir, rec.Outputs[0].Path)); err != nil {
			t.Errorf("output not on disk: %v", err)
		}
	})
	t.Run("refusal clears the intent", func(t *testing.T) {
		svc := &fakeService{createErr: &apiclient.Error{HTTPStatus: 400, Message: "prompt too long", Op: "POST /v1/jobs/text2image"}}
		st, res, _ := applyWith(t, oneImage, svc)
		snap, _ := st.Snapshot()
		if len(res.Failed) != 1 || len(snap.Intents) != 0 || len(snap.Resources) != 0 {
			t.Fatalf("failed %v, intents %v, resources %v", res.Failed, snap.Intents, snap.Resources)
		}
	})
	t.Run("ambiguous failure keeps the intent", func(t *testing.T) {
		svc := &fakeService{createErr: fmt.Errorf("reading the answer: %w", apiclient.ErrAmbiguousCreate)}
		st, res, dir := applyWith(t, oneImage, svc)
		snap, _ := st.Snapshot()
		it := snap.Intents[a("image.a")]
		if len(res.Failed) != 1 || it == nil || it.GenerationID != "" {
			t.Fatalf("failed %v, intent %+v", res.Failed, it)
		}
		cfg := (&fixture{t: t, dir: dir}).write(oneImage)
		p, _ := reconcile.MakePlan(reconcile.PlanInput{Config: cfg, State: snap, Service: "simulator", Dir: dir})
		if c := p.Change(a("image.a")); !c.PossiblyPaid() || !c.Reason.MayHaveBeenPaid() {
			t.Errorf("next plan: %s %+v", c.Action, c.Reason)
		}
		if len(res.PossiblyPaid) != 1 || res.PossiblyPaid[0].Addr != a("image.a") || !errors.Is(res.PossiblyPaid[0].Err, apiclient.ErrAmbiguousCreate) {
			t.Errorf("possibly paid: %+v", res.PossiblyPaid)
		}
		if !errors.Is(res.Failed[0].Err, apiclient.ErrAmbiguousCreate) {
			t.Errorf("the failure should say the create was ambiguous: %v", res.Failed[0].Err)
		}
	})
}

// TestApplyRefusesARequestThePlanDidNotShow: when what the plan showed and
// what would be sent differ (a file read by file() changed after plan
// -out), nothing is submitted.
func TestApplyRefusesARequestThePlanDidNotShow(t *testing.T) {
	f := newFixture(t)
	cfg := f.write(oneImage)
	st := openState(t, f.dir, ".genform/state.db")
	p, _ := reconcile.MakePlan(reconcile.PlanInput{Config: cfg, State: nil, Service: "simulator", Dir: f.dir})
	p.Change(a("image.a")).Fingerprint = "not-the-request-that-will-be-sent"
	svc := &fakeService{}
	res, err := (&Engine{Config: cfg, Store: st, Providers: referenceOnly(svc), ServiceID: "simulator", Parallelism: 1, Dir: f.dir}).Apply(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if svc.count("Create") != 0 || len(res.Failed) != 1 {
		t.Fatalf("creates %d, failed %v", svc.count("Create"), res.Failed)
	}
	snap, _ := st.Snapshot()
	if len(snap.Intents) != 0 || len(snap.Resources) != 0 {
		t.Errorf("state changed: %v %v", snap.Intents, snap.Resources)
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
	w.checkNoChanges(appleConfig, "the plan after the resume")
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
