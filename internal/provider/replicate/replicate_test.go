package replicate_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/provider/providertest"
	"github.com/genform/genform/internal/provider/replicate"
	simrep "github.com/genform/genform/internal/simulator/replicate"
	"github.com/genform/genform/internal/simulator/simkit"
)

const key = "r8_test-key-0123456789"

// start is the adapter against its simulator, sending key k.
var start = providertest.Starter(key, simrep.New, replicate.New)

func TestImagesAndVideo(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	j, err := h.SubmitCtx(ctx, providertest.RequestOf("black-forest-labs/flux-schnell", map[string]any{"prompt": "a lighthouse", "num_outputs": 2, "aspect_ratio": "16:9"}))
	if err != nil {
		t.Fatal(err)
	}
	seen := h.Follow(j)
	if last := seen[len(seen)-1]; last.State != provider.Done || last.Raw != "succeeded" {
		t.Fatalf("last status %+v", last)
	}
	res, err := h.P.Result(context.Background(), j)
	if h.Keep(err) != nil {
		t.Fatal(err)
	}
	if len(res.Outputs) != 2 || res.Version == "" || res.Prompt != "a lighthouse" {
		t.Fatalf("result %+v", res)
	}
	var usage struct {
		PredictTime *float64 `json:"predict_time"`
	}
	if json.Unmarshal(res.Usage, &usage) != nil || usage.PredictTime == nil {
		t.Errorf("usage %s: want metrics.predict_time", res.Usage)
	}
	var detail struct {
		Deadline string `json:"deadline"`
	}
	if json.Unmarshal(res.Detail, &detail) != nil || detail.Deadline == "" {
		t.Errorf("the prediction has no deadline: Cancel-After was not sent")
	}
	rep := h.Sim.Jobs()
	if got := rep.Jobs[0].Endpoint; got != "/v1/models/black-forest-labs/flux-schnell/predictions" {
		t.Errorf("an official model was created at %s", got)
	}
	dir := t.TempDir()
	d, err := h.P.Download(context.Background(), res.Outputs[1].URL, dir, "img")
	if h.Keep(err) != nil || !strings.HasSuffix(d.Path, ".png") {
		t.Fatalf("download: %v", err)
	}

	pinned := "someone/clip-video:" + strings.Repeat("ab", 32)
	v, err := h.SubmitCtx(ctx, providertest.RequestOf(pinned, map[string]any{"prompt": "waves", "duration": 2}))
	if err != nil {
		t.Fatal(err)
	}
	h.Follow(v)
	res, err = h.P.Result(context.Background(), v)
	if h.Keep(err) != nil {
		t.Fatal(err)
	}
	if len(res.Outputs) != 1 || res.Version != strings.Repeat("ab", 32) {
		t.Fatalf("video result %+v", res)
	}
	h.DownloadVideo(res.Outputs[0].URL, dir)
	if got := h.Sim.Jobs().Jobs[1].Endpoint; got != "/v1/predictions" {
		t.Errorf("a version was created at %s", got)
	}
}

func TestFailureAndRefusal(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	h.Failures([]providertest.Failure{
		{Prompt: "a cat [fail]", Reason: "exception"},
		{Prompt: "a cat [nsfw]", Refused: true, Reason: "NSFW"},
	}, func(prompt string) (provider.Job, error) {
		return h.Submit(providertest.RequestOf("black-forest-labs/flux-schnell", map[string]any{"prompt": prompt}))
	}, nil)
}

func TestUnknownStatusFollowed(t *testing.T) {
	h := start(t, simkit.Options{Latency: 300 * time.Millisecond}, key)
	j, err := h.Submit(providertest.RequestOf("black-forest-labs/flux-schnell", map[string]any{"prompt": "odd [weird-status]"}))
	if err != nil {
		t.Fatal(err)
	}
	h.UnknownStatusFollowed(j, "paused")
}

func TestDeadlineAborts(t *testing.T) {
	h := start(t, simkit.Options{MaxConcurrent: 1, Latency: 8 * time.Second}, key)
	first, err := h.Submit(providertest.RequestOf("black-forest-labs/flux-schnell", map[string]any{"prompt": "first"}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5500*time.Millisecond)
	defer cancel()
	second, err := h.SubmitCtx(ctx, providertest.RequestOf("black-forest-labs/flux-schnell", map[string]any{"prompt": "second"}))
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := h.P.Status(context.Background(), second); st.Raw != "starting" {
		t.Fatalf("the queued prediction is %+v", st)
	}
	time.Sleep(5500 * time.Millisecond)
	st, err := h.P.Status(context.Background(), second)
	if h.Keep(err) != nil || st.Raw != "aborted" || st.State != provider.Failed {
		t.Errorf("past its Cancel-After, a prediction that never started is %+v (%v), want aborted", st, err)
	}
	if st, _ := h.P.Status(context.Background(), first); st.State != provider.Running {
		t.Errorf("the first prediction, sent without a deadline, is %+v", st)
	}
}

func TestRateLimitStorm(t *testing.T) {
	h := start(t, simkit.Options{RPM: 1, Now: providertest.StepClock(), Latency: time.Hour}, key)
	h.RateLimitStorm(func() error {
		_, err := h.Submit(providertest.RequestOf("black-forest-labs/flux-schnell", map[string]any{"prompt": "storm"}))
		return err
	})
}

func TestLostAnswerRecovered(t *testing.T) {
	h := start(t, simkit.Options{LoseRate: 1}, key)
	since := time.Now()
	input := map[string]any{"prompt": "lost", "seed": 9}
	r := providertest.RequestOf("black-forest-labs/flux-schnell", input)
	_, err := h.Submit(r)
	if !provider.IsPossiblyPaid(err) {
		t.Fatalf("err = %v, want possibly paid", err)
	}
	rep := h.Sim.Jobs()
	if len(rep.Jobs) != 1 || rep.Requests != 1 {
		t.Fatalf("report %+v: want the one job made by one request", rep)
	}
	j, ok, err := h.P.Recover(context.Background(), r, since, time.Now())
	if h.Keep(err) != nil || !ok || j.ID != rep.Jobs[0].ID {
		t.Fatalf("Recover = %+v, %v, %v; want job %s", j, ok, err, rep.Jobs[0].ID)
	}
	if st := h.Follow(j); st[len(st)-1].State != provider.Done {
		t.Errorf("the recovered job ended %+v", st[len(st)-1])
	}
	other := r
	other.Body = []byte(`{"prompt":"lost","seed":10}`)
	if _, ok, err := h.P.Recover(context.Background(), other, since, time.Now()); ok || h.Keep(err) != nil {
		t.Errorf("another input was recovered (%v, %v)", ok, err)
	}
	other = r
	other.Target = "someone/else"
	if _, ok, _ := h.P.Recover(context.Background(), other, since, time.Now()); ok {
		t.Error("another model was recovered")
	}
	if _, ok, _ := h.P.Recover(context.Background(), r, since.Add(time.Hour), time.Now().Add(2*time.Hour)); ok {
		t.Error("a prediction outside the window was recovered")
	}
}

func TestServerErrorOnCreateNeverSentAgain(t *testing.T) {
	h := start(t, simkit.Options{ErrorRate: 1}, key)
	h.SentOnce(func() error {
		_, err := h.Submit(providertest.RequestOf("black-forest-labs/flux-schnell", map[string]any{"prompt": "five hundred"}))
		return err
	})
}

func TestExpiredOutput(t *testing.T) {
	h := start(t, simkit.Options{URLTTL: 50 * time.Millisecond}, key)
	j, res := h.Done(providertest.Request(addrs.Image, "black-forest-labs/flux-schnell", map[string]any{"prompt": "fleeting"}), "succeeded")
	time.Sleep(100 * time.Millisecond)
	h.ExpiredOutput(res.Outputs[0].URL)
	if _, err := h.P.Result(context.Background(), j); h.Keep(err) == nil || !strings.Contains(err.Error(), "removed") {
		t.Errorf("the result an hour on: %v, want its output removed", err)
	}
}

func TestCredentials(t *testing.T) {
	good := start(t, simkit.Options{}, key)
	bad := start(t, simkit.Options{}, "r8_wrong-key-abcdefghijkl")
	providertest.Keys(good.Harness, bad.Harness, func() error {
		_, err := bad.Submit(providertest.RequestOf("black-forest-labs/flux-schnell", map[string]any{"prompt": "x"}))
		return err
	})
}

func TestTargets(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	for _, bad := range []string{"noslash", "a/b/c", "a/b:nothex", ""} {
		if _, err := h.Submit(providertest.RequestOf(bad, map[string]any{"prompt": "x"})); err == nil || provider.IsPossiblyPaid(err) {
			t.Errorf("target %q: %v, want a refusal before sending", bad, err)
		}
	}
	if n := h.Sim.Jobs().Requests; n != 0 {
		t.Errorf("%d requests sent for invalid targets", n)
	}
}

// A create answered 402 (too little credit) made nothing and is a cap of
// the account: the apply stops in Replicate's words, sends it once, and
// never takes it for possibly paid.
func TestOutOfCreditIsACap(t *testing.T) {
	var creates atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		creates.Add(1)
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusPaymentRequired)
		w.Write([]byte(`{"title":"Insufficient credit","detail":"You have insufficient credit to run this model.","status":402}`))
	}))
	defer srv.Close()
	p, err := replicate.New(provider.Config{BaseURL: srv.URL, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Submit(context.Background(), provider.Request{Kind: addrs.Image, Target: "black-forest-labs/flux-schnell", Body: []byte(`{"prompt":"p"}`)})
	if !errors.Is(err, provider.ErrCapReached) || provider.IsPossiblyPaid(err) || !strings.Contains(err.Error(), "insufficient credit") {
		t.Fatalf("a 402: %v; want a cap reached in Replicate's words, not possibly paid", err)
	}
	if n := creates.Load(); n != 1 {
		t.Errorf("the create was sent %d times, want once", n)
	}
}

// A 403 to a create is a model the account may not run, not the key: it
// fails that request in Replicate's words, made nothing, and is never
// taken for a refused key, which would stop every other instance. A 403
// to the key's check, a read of its own account, is the key's.
func TestForbiddenModelIsNotTheKey(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	_, err := h.Submit(providertest.RequestOf("black-forest-labs/flux-schnell", map[string]any{"prompt": "x " + simkit.ForbiddenMarker}))
	if err == nil || errors.Is(err, provider.ErrUnauthorized) || provider.IsPossiblyPaid(err) || !strings.Contains(err.Error(), "permission to run") {
		t.Fatalf("a 403 to a create: %v; want a refusal of this request in Replicate's words", err)
	}
	if n := len(h.Sim.Jobs().Jobs); n != 0 {
		t.Errorf("%d predictions made", n)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte(`{"title":"Forbidden","detail":"This token may not be used.","status":403}`))
	}))
	defer srv.Close()
	p, err := replicate.New(provider.Config{BaseURL: srv.URL, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckCredentials(context.Background()); !errors.Is(err, provider.ErrUnauthorized) {
		t.Errorf("a 403 to the key's check: %v, want a refused key", err)
	}
}

// The simulator answers an account out of credit as Replicate does, 402
// with a problem document: the adapter stops as a cap reached, once.
func TestOutOfCreditOnTheSimulator(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	_, err := h.Submit(providertest.RequestOf("black-forest-labs/flux-schnell", map[string]any{"prompt": "x " + simkit.QuotaMarker}))
	if !errors.Is(err, provider.ErrCapReached) || provider.IsPossiblyPaid(err) || !strings.Contains(err.Error(), "set up billing") {
		t.Fatalf("a 402: %v; want a cap reached in Replicate's words", err)
	}
	if rep := h.Sim.Jobs(); len(rep.Jobs) != 0 || rep.Requests != 1 {
		t.Errorf("%d predictions in %d requests, want none in one", len(rep.Jobs), rep.Requests)
	}
}
