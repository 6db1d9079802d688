package apply

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/provider"
)

const threeFrames = `
image "f" {
  count        = 3
  prompt       = "frame ${count.index}"
  image_number = 1
}
`

// refusal is the service's answer to a token it does not accept.
var refusal = &apiclient.Error{HTTPStatus: 401, Message: "invalid token", Code: "H-10001001", Op: "POST /v1/jobs/text2image"}

// engineFor is the engine applyDir.apply would use, its events recorded
// into w.
func engineFor(w *applyDir, svc provider.Provider) *Engine {
	return &Engine{
		Config: w.cfg, Store: w.store, Providers: referenceOnly(svc), ServiceID: "simulator",
		Parallelism: 1, PollInterval: time.Millisecond, Timeout: 10 * time.Second, Dir: w.dir,
		Events: func(ev Event) {
			w.mu.Lock()
			w.events = append(w.events, ev)
			w.mu.Unlock()
		},
	}
}

func (w *applyDir) phases(p Phase) []Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []Event
	for _, ev := range w.events {
		if ev.Phase == p {
			out = append(out, ev)
		}
	}
	return out
}

// TestApplyChecksTheServiceFirst: a refused token or an unreachable
// service ends the apply before anything is recorded or submitted, with
// the service's error; a plan that sends no job is not checked.
func TestApplyChecksTheServiceFirst(t *testing.T) {
	unreachable := &apiclient.UnreachableError{Scheme: "http", Addr: "127.0.0.1:1", Reason: "connection refused"}
	for _, tt := range []struct {
		name string
		err  error
		is   error
	}{
		{"refused token", refusal, apiclient.ErrUnauthorized},
		{"unreachable service", unreachable, apiclient.ErrUnreachable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			svc := &fakeService{credErr: tt.err}
			w := newApplyDir(t, svc)
			p := w.plan(threeFrames)
			res, err := engineFor(w, svc).Apply(context.Background(), p)
			if !errors.Is(err, tt.is) || res != nil {
				t.Fatalf("Apply = %v, %v; want no result and an error matching %v", res, err, tt.is)
			}
			if n := svc.count("CheckCredentials"); n != 1 {
				t.Errorf("checked the token %d times, want 1", n)
			}
			if n := svc.count("Create"); n != 0 {
				t.Errorf("%d creates sent after the check failed", n)
			}
			snap := w.snapshot()
			if len(snap.Intents)+len(snap.Resources) != 0 {
				t.Errorf("state holds %d intents and %d resources, want nothing", len(snap.Intents), len(snap.Resources))
			}
			if evs := w.phases(PhaseSubmitting); len(evs) != 0 {
				t.Errorf("%d submissions reported", len(evs))
			}
		})
	}

	t.Run("a plan that sends no job is not checked", func(t *testing.T) {
		svc, w := convergedDir(t, oneImage)
		svc.credErr = refusal
		calls := svc.count("CheckCredentials")
		res := w.apply(context.Background(), w.plan(""))
		if len(res.Deleted) != 1 || svc.count("CheckCredentials") != calls {
			t.Errorf("deleted %v, %d checks; want image.a deleted with no check", res.Deleted, svc.count("CheckCredentials")-calls)
		}
	})
}

// TestRefusedTokenStopsSubmitting: the service starts refusing the token
// during an apply. The first refusal stops it: nothing more is submitted,
// no change is reported failed (the one cause is Result.Refused), and the
// job already paid for is recorded or kept for the next apply.
func TestRefusedTokenStopsSubmitting(t *testing.T) {
	t.Run("a create is refused", func(t *testing.T) {
		svc := &fakeService{}
		svc.afterCreate = func(string) {
			svc.mu.Lock()
			svc.createErr = refusal
			svc.mu.Unlock()
		}
		w := newApplyDir(t, svc)
		p := w.plan(threeFrames)
		res, err := engineFor(w, svc).Apply(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if !errors.Is(res.Refused, apiclient.ErrUnauthorized) || len(res.Failed)+len(res.Skipped) != 0 || res.Interrupted {
			t.Fatalf("refused %v, failed %v, skipped %v, interrupted %v; want only the refusal", res.Refused, res.Failed, res.Skipped, res.Interrupted)
		}
		if n := svc.count("Create"); n != 2 {
			t.Errorf("%d creates, want 2: the one answered and the one refused", n)
		}
		if evs := w.phases(PhaseFailed); len(evs) != 0 {
			t.Errorf("failures reported: %v", evs)
		}
		// job-1 was paid for: it is recorded, or its intent keeps its id
		// for the next apply to resume. The refused create left nothing.
		snap := w.snapshot()
		kept := 0
		for _, r := range snap.Resources {
			kept += btoi(r.GenerationID == "job-1")
		}
		for _, in := range snap.Intents {
			if in.GenerationID != "job-1" {
				t.Errorf("intent of %s kept with generation %q", in.Addr, in.GenerationID)
			}
			kept++
		}
		if kept != 1 {
			t.Errorf("job-1 is kept %d times in the state, want once", kept)
		}
	})

	t.Run("a poll is refused", func(t *testing.T) {
		svc := &fakeService{scripts: map[string]fakeJob{"frame": {statusErr: refusal}}}
		w := newApplyDir(t, svc)
		p := w.plan(threeFrames)
		res, err := engineFor(w, svc).Apply(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if !errors.Is(res.Refused, apiclient.ErrUnauthorized) || len(res.Failed)+len(res.Skipped) != 0 {
			t.Fatalf("refused %v, failed %v, skipped %v; want only the refusal", res.Refused, res.Failed, res.Skipped)
		}
		if n := svc.count("Create"); n != 1 {
			t.Errorf("%d creates after the refusal, want only the first", n-1)
		}
		if len(res.Running) != 1 || res.Running[0].GenerationID != "job-1" {
			t.Errorf("running %v, want job-1 listed for the next apply", res.Running)
		}
		snap := w.snapshot()
		if in := snap.Intents[res.Running[0].Addr]; in == nil || in.GenerationID != "job-1" {
			t.Errorf("intent %+v, want it to keep job-1", in)
		}
		if p := w.plan(threeFrames); len(actions(p)) != 3 {
			t.Errorf("next plan %v, want job-1 resumed and the other two created", actions(p))
		}
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// retryingService reports one retry for every request it answers, as the
// service client does through Config.OnRetry.
type retryingService struct {
	*fakeService
}

func (s *retryingService) retry(ctx context.Context, op string) {
	ReportRetry(ctx, apiclient.RetryInfo{Op: op, Attempt: 2, HTTPStatus: 429, Wait: time.Second})
}

func (s *retryingService) CheckCredentials(ctx context.Context) error {
	s.retry(ctx, "GET /v1/jobs/x/status")
	return s.fakeService.CheckCredentials(ctx)
}

func (s *retryingService) Submit(ctx context.Context, r provider.Request) (provider.Job, error) {
	s.retry(ctx, "POST /v1/jobs/text2image")
	return s.fakeService.Submit(ctx, r)
}

func (s *retryingService) Download(ctx context.Context, url, dir, base string) (*apiclient.Downloaded, error) {
	s.retry(ctx, "GET "+url)
	return s.fakeService.Download(ctx, url, dir, base)
}

// TestServiceRetriesBecomeEvents: each retry the client reports is an
// event of the instance whose request it was (a zero address for the check
// before the apply), with the change's action and the retry as reported.
func TestServiceRetriesBecomeEvents(t *testing.T) {
	svc := &retryingService{fakeService: &fakeService{}}
	w := newApplyDir(t, svc.fakeService)
	p := w.plan(threeFrames)
	if _, err := engineFor(w, svc).Apply(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, ev := range w.phases(PhaseRetrying) {
		if ev.Retry == nil || ev.Retry.HTTPStatus != 429 || ev.Retry.Attempt != 2 {
			t.Errorf("event %+v does not carry the retry", ev)
			continue
		}
		addr := ev.Addr.String()
		if ev.Addr.IsZero() {
			addr = "(none)"
		}
		got[fmt.Sprintf("%s %s %s", addr, ev.Action, ev.Retry.Op[:4])]++
	}
	want := map[string]int{"(none) no-op GET ": 1}
	for i := range 3 {
		want[fmt.Sprintf("image.f[%d] create POST", i)] = 1
		want[fmt.Sprintf("image.f[%d] create GET ", i)] = 1
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("retry events %v, want %v", got, want)
	}
	// A retry of a request no apply made is no apply's event (and does not
	// crash).
	ReportRetry(context.Background(), apiclient.RetryInfo{})
}
