package fal_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/provider/fal"
	"github.com/genform/genform/internal/provider/providertest"
	simfal "github.com/genform/genform/internal/simulator/fal"
	"github.com/genform/genform/internal/simulator/simkit"
)

const key = "fal-test-key-0123456789"

// start is the adapter against its simulator, sending key k.
var start = providertest.Starter(key, simfal.New, fal.New)

func TestImagesAndVideo(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	j, err := h.Submit(providertest.RequestOf("fal-ai/flux/dev", map[string]any{"prompt": "a lighthouse", "num_images": 2, "seed": 3}))
	if err != nil {
		t.Fatal(err)
	}
	var hd fal.Handle
	if err := json.Unmarshal(j.Handle, &hd); err != nil || !strings.Contains(hd.StatusURL, "/fal-ai/flux/requests/"+j.ID+"/status") {
		t.Fatalf("handle %s: the status URL is fal's, without the subpath", j.Handle)
	}
	seen := h.Follow(j)
	if last := seen[len(seen)-1]; last.State != provider.Done || last.Raw != "COMPLETED" {
		t.Fatalf("last status %+v", last)
	}
	res, err := h.P.Result(context.Background(), j)
	if h.Keep(err) != nil {
		t.Fatal(err)
	}
	if len(res.Outputs) != 2 || res.Kind != addrs.Image || res.Prompt != "a lighthouse" || res.CreationID != j.ID {
		t.Fatalf("result %+v", res)
	}
	dir := t.TempDir()
	var sums []string
	for i, o := range res.Outputs {
		d, err := h.P.Download(context.Background(), o.URL, dir, "out"+string(rune('0'+i)))
		if h.Keep(err) != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(d.Path, ".png") {
			t.Errorf("downloaded %s, want a PNG", d.Path)
		}
		sums = append(sums, d.SHA256)
	}
	if sums[0] == sums[1] {
		t.Error("the two images are the same bytes")
	}

	v, err := h.Submit(providertest.RequestOf("fal-ai/kling-video/v2/master/text-to-video", map[string]any{"prompt": "waves", "duration": "5"}))
	if err != nil {
		t.Fatal(err)
	}
	h.Follow(v)
	res, err = h.P.Result(context.Background(), v)
	if h.Keep(err) != nil {
		t.Fatal(err)
	}
	if len(res.Outputs) != 1 || res.Kind != addrs.Video {
		t.Fatalf("video result %+v", res)
	}
	h.DownloadVideo(res.Outputs[0].URL, dir)
}

func TestFailureAndRefusal(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	h.Failures([]providertest.Failure{
		{Prompt: "a cat [fail]", Reason: "runner_server_error"},
		{Prompt: "a cat [nsfw]", Refused: true, Reason: "content_policy_violation"},
	}, func(prompt string) (provider.Job, error) {
		// A model without FLUX's safety checker: its moderation fails the
		// request.
		return h.Submit(providertest.RequestOf("fal-ai/recraft/v3/text-to-image", map[string]any{"prompt": prompt}))
	}, func(f providertest.Failure, j provider.Job, _ provider.Status) {
		if !f.Refused {
			return // its result answers 500, which a read retries: the engine never asks it
		}
		if _, err := h.P.Result(context.Background(), j); h.Keep(err) == nil || !strings.Contains(err.Error(), "422") {
			t.Errorf("%q: the result of a refused request: %v, want its 422", f.Prompt, err)
		}
	})
}

// A FLUX request whose safety checker flags its images completes, with
// has_nsfw_concepts set and black images in their place: it ends refused,
// in fal's terms, and has no result to keep, so that a black image never
// becomes an instance's file.
func TestFlaggedImagesAreARefusal(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	j, err := h.Submit(providertest.RequestOf("fal-ai/flux/schnell", map[string]any{"prompt": "a cat [nsfw]", "num_images": 2}))
	if err != nil {
		t.Fatal(err)
	}
	last := h.Ended(j)
	if last.State != provider.Failed || !last.Refused || last.Raw != "COMPLETED" ||
		!strings.Contains(last.Reason, "has_nsfw_concepts: [true,true]") || !strings.Contains(last.Reason, "image 1, 2 of 2") {
		t.Fatalf("a flagged request ended %+v, want refused with fal's flags", last)
	}
	if _, err := h.P.Result(context.Background(), j); h.Keep(err) == nil || !strings.Contains(err.Error(), "has_nsfw_concepts") {
		t.Errorf("the result of a flagged request: %v, want a refusal", err)
	}
	if rep := h.Sim.Jobs(); len(rep.Jobs) != 1 {
		t.Errorf("%d jobs, want the one", len(rep.Jobs))
	}
}

// When only some images of a request are flagged, the request is refused
// whole: its reason names the flagged ones and where the others are, and
// nothing of it is a result.
func TestSomeImagesFlagged(t *testing.T) {
	var base string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodPost:
			fmt.Fprintf(w, `{"request_id":"r-1","status_url":"%[1]s/fal-ai/flux/requests/r-1/status","response_url":"%[1]s/fal-ai/flux/requests/r-1","cancel_url":"%[1]s/fal-ai/flux/requests/r-1/cancel"}`, base)
		case strings.HasSuffix(r.URL.Path, "/status"):
			w.Write([]byte(`{"status":"COMPLETED"}`))
		default:
			fmt.Fprintf(w, `{"images":[{"url":"%[1]s/0.png"},{"url":"%[1]s/1.png"},{"url":"%[1]s/2.png"},{"url":"%[1]s/3.png"}],"has_nsfw_concepts":[false,true,false,true]}`, base)
		}
	}))
	defer srv.Close()
	base = srv.URL
	p, err := fal.New(provider.Config{BaseURL: srv.URL, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	j, err := p.Submit(ctx, provider.Request{Kind: addrs.Image, Target: "fal-ai/flux/dev", Body: []byte(`{"prompt":"p","num_images":4}`)})
	if err != nil {
		t.Fatal(err)
	}
	st, err := p.Status(ctx, j)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != provider.Failed || !st.Refused || !strings.Contains(st.Reason, "image 2, 4 of 4") ||
		!strings.Contains(st.Reason, "keeps none of the 4") || !strings.Contains(st.Reason, "request r-1") {
		t.Fatalf("two of four flagged: %+v, want the whole request refused, naming the two", st)
	}
	if _, err := p.Result(ctx, j); err == nil {
		t.Error("a request with flagged images has a result")
	}
}

// A submit fal answers with an error made no request: a model id it does
// not serve (404), an input the model refuses (422) and a malformed
// request (400) are refusals in fal's words, never possibly paid, and
// sent once; an account locked for its balance (403 "User is locked")
// is a cap reached, which stops the apply, never a refused key.
func TestSubmitRefusals(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	for _, tc := range []struct {
		model  string
		input  map[string]any
		status string
		words  string
		cap    bool
	}{
		{model: "fal-ai/" + simfal.MissingModel + "/dev", input: map[string]any{"prompt": "p"}, status: "404", words: "not found"},
		{model: "fal-ai/flux/dev", input: map[string]any{"prompt": "p", "image_size": "square-hd"}, status: "422", words: "image_size: Input should be"},
		{model: "fal-ai/flux/dev", input: map[string]any{"prompt": "p " + simkit.QuotaMarker}, status: "403", words: "User is locked. Reason: Exhausted balance", cap: true},
	} {
		before := h.Sim.Jobs().Requests
		_, err := h.Submit(providertest.RequestOf(tc.model, tc.input))
		switch {
		case err == nil, provider.IsPossiblyPaid(err), errors.Is(err, provider.ErrUnauthorized):
			t.Errorf("%s: %v; want a refusal that made nothing", tc.model, err)
		case !strings.Contains(err.Error(), tc.status) || !strings.Contains(err.Error(), tc.words):
			t.Errorf("%s: %v; want fal's %s in its words (%q)", tc.model, err, tc.status, tc.words)
		case errors.Is(err, provider.ErrCapReached) != tc.cap:
			t.Errorf("%s: %v; a cap reached is %v", tc.model, err, tc.cap)
		}
		if n := h.Sim.Jobs().Requests - before; n != 1 {
			t.Errorf("%s: %d requests, want the one", tc.model, n)
		}
	}
	if n := len(h.Sim.Jobs().Jobs); n != 0 {
		t.Errorf("%d requests made", n)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"detail":"Invalid timeout header","error_type":"bad_request"}`))
	}))
	defer srv.Close()
	p, err := fal.New(provider.Config{BaseURL: srv.URL, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Submit(context.Background(), provider.Request{Kind: addrs.Image, Target: "fal-ai/flux/dev", Body: []byte(`{"prompt":"p"}`)})
	if err == nil || provider.IsPossiblyPaid(err) || !strings.Contains(err.Error(), "Invalid timeout header") {
		t.Errorf("a 400: %v; want a refusal in fal's words", err)
	}
}

func TestUnknownStatusFollowed(t *testing.T) {
	h := start(t, simkit.Options{Latency: 300 * time.Millisecond}, key)
	j, err := h.Submit(providertest.RequestOf("fal-ai/flux/schnell", map[string]any{"prompt": "odd [weird-status]"}))
	if err != nil {
		t.Fatal(err)
	}
	h.UnknownStatusFollowed(j, "IN_RETRY")
}

func TestRateLimitStorm(t *testing.T) {
	h := start(t, simkit.Options{RPM: 1, Now: providertest.StepClock(), Latency: time.Hour}, key)
	h.RateLimitStorm(func() error {
		_, err := h.Submit(providertest.RequestOf("fal-ai/flux/schnell", map[string]any{"prompt": "storm"}))
		return err
	})
}

func TestLostAnswerStaysPossiblyPaid(t *testing.T) {
	h := start(t, simkit.Options{LoseRate: 1}, key)
	_, err := h.Submit(providertest.RequestOf("fal-ai/flux/schnell", map[string]any{"prompt": "lost"}))
	if !provider.IsPossiblyPaid(err) {
		t.Fatalf("err = %v, want possibly paid", err)
	}
	if _, ok := any(h.P).(provider.Recoverer); ok {
		t.Error("fal lists no requests, yet the adapter claims to recover them")
	}
	if rep := h.Sim.Jobs(); len(rep.Jobs) != 1 || rep.Requests != 1 {
		t.Errorf("report %+v: want the one job made by one request", rep)
	}
}

func TestServerErrorOnSubmitNeverSentAgain(t *testing.T) {
	h := start(t, simkit.Options{ErrorRate: 1}, key)
	h.SentOnce(func() error {
		_, err := h.Submit(providertest.RequestOf("fal-ai/flux/schnell", map[string]any{"prompt": "five hundred"}))
		return err
	})
}

func TestExpiredOutput(t *testing.T) {
	h := start(t, simkit.Options{URLTTL: 50 * time.Millisecond}, key)
	_, res := h.Done(providertest.Request(addrs.Image, "fal-ai/flux/schnell", map[string]any{"prompt": "fleeting"}), "COMPLETED")
	time.Sleep(100 * time.Millisecond)
	h.ExpiredOutput(res.Outputs[0].URL)
}

func TestCredentials(t *testing.T) {
	good := start(t, simkit.Options{}, key)
	bad := start(t, simkit.Options{}, "wrong-key-abcdefghijkl")
	providertest.Keys(good.Harness, bad.Harness, func() error {
		_, err := bad.Submit(providertest.RequestOf("fal-ai/flux/schnell", map[string]any{"prompt": "x"}))
		return err
	})
	if n := len(bad.Sim.Jobs().Jobs); n != 0 {
		t.Errorf("%d jobs made with a wrong key", n)
	}
}

// The key is checked with a call fal documents, the price of a model on
// its Platform API, and only its 401 refuses the key: never by asking
// the status of a request id no submit had, an answer fal promises
// nothing about (here a 400, on which every apply would stop). A 403 is a
// key without that API's scope, which says nothing against it.
func TestCredentialsUseThePlatformAPI(t *testing.T) {
	var paths []string
	var mu sync.Mutex
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.RequestURI())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.Contains(r.URL.Path, "/requests/"):
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"detail":"Invalid request id"}`))
		case r.URL.Path == "/v1/models/pricing" && r.Header.Get("Authorization") == "Key "+key:
			w.WriteHeader(status)
			w.Write([]byte(`{"prices":[{"endpoint_id":"fal-ai/flux/schnell","unit_price":0.003,"unit":"image","currency":"USD"}],"next_cursor":null,"has_more":false}`))
		default:
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"detail":"Invalid API key"}`))
		}
	}))
	defer srv.Close()
	p, err := fal.New(provider.Config{BaseURL: srv.URL, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := p.CheckCredentials(ctx); err != nil {
		t.Fatalf("a key fal accepts: %v", err)
	}
	if len(paths) != 1 || paths[0] != "/v1/models/pricing?endpoint_id=fal-ai/flux/schnell" {
		t.Errorf("the check asked %q, want the Platform API's pricing alone", paths)
	}
	status = http.StatusForbidden
	if err := p.CheckCredentials(ctx); err != nil {
		t.Errorf("a 403 (a key without the Platform API's scope): %v, want nothing against the key", err)
	}
	wrong, err := fal.New(provider.Config{BaseURL: srv.URL, Key: "wrong-key-abcdefghijkl"})
	if err != nil {
		t.Fatal(err)
	}
	if err := wrong.CheckCredentials(ctx); !errors.Is(err, provider.ErrUnauthorized) {
		t.Errorf("a 401: %v, want a refused key", err)
	}
}

// A request asking for sync_mode (a saved plan made before validate
// refused it) is refused before anything is sent: fal would answer the
// media as data URIs, which genform does not keep, and charge for them.
func TestSyncModeNeverSent(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	_, err := h.Submit(providertest.RequestOf("fal-ai/flux/schnell", map[string]any{"prompt": "p", "sync_mode": true}))
	if err == nil || !strings.Contains(err.Error(), "sync_mode") || provider.IsPossiblyPaid(err) {
		t.Fatalf("Submit = %v, want sync_mode refused before sending", err)
	}
	if rep := h.Sim.Jobs(); rep.Requests != 0 || len(rep.Jobs) != 0 {
		t.Errorf("report %+v: something was sent", rep)
	}
	if _, err := h.Submit(providertest.RequestOf("fal-ai/flux/schnell", map[string]any{"prompt": "p", "sync_mode": false})); err != nil {
		t.Errorf("sync_mode false refused: %v", err)
	}
}
