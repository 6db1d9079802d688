package apply

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/reconcile/plans"
)

// TestApplySkipsWhatDependsOnAFailure: what is made from a resource that
// failed is not submitted (it would be made from nothing, or from the
// previous generation); what does not depend on it is.
func TestApplySkipsWhatDependsOnAFailure(t *testing.T) {
	tests := []struct {
		name string
		hero fakeJob
	}{
		{"the service refuses the create", fakeJob{createErr: &apiclient.Error{HTTPStatus: 400, Message: "prompt rejected"}}},
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

// TestApplyCascade: a video made from an image that is replaced is
// replaced after it, from the new image.
func TestApplyCascade(t *testing.T) {
	svc, w := convergedDir(t, boatConfig)
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
	w.checkNoChanges(dusk, "not converged")
}

// TestApplyInterrupted: cancelling an apply after a create was answered
// keeps the job's id, submits nothing more, says the job is running, and
// the next apply resumes it without paying again.
func TestApplyInterrupted(t *testing.T) {
	const pair = oneImage + `
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
