package luma_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/provider/luma"
	"github.com/genform/genform/internal/provider/providertest"
	simluma "github.com/genform/genform/internal/simulator/luma"
	"github.com/genform/genform/internal/simulator/simkit"
)

const key = "luma-test-key-0123456789"

// start is the adapter against its simulator, sending key k.
var start = providertest.Starter(key, simluma.New, luma.New)

// completed is the status of a generation done.
const completed = "completed"

func TestImagesAndVideos(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	img, res := h.Done(providertest.Request(addrs.Image, "photon-1", map[string]any{"prompt": "a lighthouse", "aspect_ratio": "1:1"}), completed)
	if len(res.Outputs) != 1 || res.Kind != addrs.Image || res.Prompt != "a lighthouse" || res.CreationID != img.ID || len(img.Handle) != 0 {
		t.Fatalf("image result %+v of job %+v", res, img)
	}
	dir := t.TempDir()
	d, err := h.P.Download(context.Background(), res.Outputs[0].URL, dir, "image")
	if h.Keep(err) != nil || !strings.HasSuffix(d.Path, ".png") {
		t.Fatalf("download: %+v, %v", d, err)
	}
	rep := h.Sim.Jobs()
	var sent map[string]any
	if err := json.Unmarshal(rep.Jobs[0].Body, &sent); err != nil || sent["model"] != "photon-1" || rep.Jobs[0].Endpoint != "/generations/image" {
		t.Errorf("the image was created at %s with %s: the model goes in the body", rep.Jobs[0].Endpoint, rep.Jobs[0].Body)
	}

	// A video from the image's URL, then one extending that video by its
	// generation id.
	first, res := h.Done(providertest.Request(addrs.Video, "ray-2", map[string]any{
		"prompt": "waves", "duration": "5s",
		"keyframes": map[string]any{"frame0": map[string]any{"type": "image", "url": res.Outputs[0].URL}},
	}), completed)
	if len(res.Outputs) != 1 || res.Kind != addrs.Video {
		t.Fatalf("video result %+v", res)
	}
	_, res = h.Done(providertest.Request(addrs.Video, "ray-flash-2", map[string]any{
		"prompt":    "more waves",
		"keyframes": map[string]any{"frame0": map[string]any{"type": "generation", "id": first.ID}},
	}), completed)
	h.DownloadVideo(res.Outputs[0].URL, dir)
	if got := h.Sim.Jobs().Jobs[2].Endpoint; got != "/generations/video" {
		t.Errorf("a video was created at %s", got)
	}
}

func TestFailureAndRefusal(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	h.Failures([]providertest.Failure{
		{Prompt: "a cat [fail]", Reason: "Prompt processing failed"},
		{Prompt: "a cat [nsfw]", Refused: true, Reason: "Advanced prompt moderation failed"},
	}, func(prompt string) (provider.Job, error) {
		return h.Submit(providertest.Request(addrs.Image, "photon-flash-1", map[string]any{"prompt": prompt}))
	}, func(f providertest.Failure, j provider.Job, last provider.Status) {
		if last.Reason != f.Reason {
			t.Errorf("%q ended with reason %q, want Luma's words as they are", f.Prompt, last.Reason)
		}
		if _, err := h.P.Result(context.Background(), j); h.Keep(err) == nil {
			t.Errorf("%q: a failed generation has a result", f.Prompt)
		}
	})
}

func TestCreateRefusalsMakeNothing(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	for _, body := range []map[string]any{
		{"prompt": "ab"}, // 400: too short
		{"prompt": "a ratio", "aspect_ratio": "2:1"},  // 422: not in the schema
		{"prompt": "a sharp one", "resolution": "8k"}, // 400
	} {
		_, err := h.Submit(providertest.Request(addrs.Video, "ray-2", body))
		var se *apiclient.Error
		if !errors.As(err, &se) || provider.IsPossiblyPaid(err) {
			t.Errorf("%v: %v, want a refusal that made nothing", body, err)
		}
	}
	if rep := h.Sim.Jobs(); len(rep.Jobs) != 0 || rep.Requests != 3 {
		t.Errorf("report %+v: want three requests and no generation", rep)
	}
}

// Too little credit for a generation, which Luma charges up front, is
// answered 402: a cap, which stops the apply in Luma's words, sent once,
// never possibly paid.
func TestOutOfCreditIsACap(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	_, err := h.Submit(providertest.Request(addrs.Image, "photon-flash-1", map[string]any{"prompt": "spent " + simkit.QuotaMarker}))
	if !errors.Is(err, provider.ErrCapReached) || provider.IsPossiblyPaid(err) || !strings.Contains(err.Error(), "Insufficient credits") {
		t.Fatalf("a 402: %v, want ErrCapReached in Luma's words", err)
	}
	if rep := h.Sim.Jobs(); rep.Requests != 1 || len(rep.Jobs) != 0 {
		t.Errorf("report %+v: want one request and no generation", rep)
	}
}

func TestUnknownStatusFollowed(t *testing.T) {
	h := start(t, simkit.Options{Latency: 300 * time.Millisecond}, key)
	j, err := h.Submit(providertest.Request(addrs.Image, "photon-1", map[string]any{"prompt": "odd [weird-status]"}))
	if err != nil {
		t.Fatal(err)
	}
	h.UnknownStatusFollowed(j, "processing")
}

func TestRateLimitStorm(t *testing.T) {
	h := start(t, simkit.Options{RPM: 1, Now: providertest.StepClock(), Latency: time.Hour}, key)
	h.RateLimitStorm(func() error {
		_, err := h.Submit(providertest.Request(addrs.Image, "photon-1", map[string]any{"prompt": "storm"}))
		return err
	})
}

func TestLostAnswerRecovered(t *testing.T) {
	h := start(t, simkit.Options{LoseRate: 1}, key)
	since := time.Now()
	r := providertest.Request(addrs.Video, "ray-2", map[string]any{"prompt": "lost", "duration": "9s"})
	if _, err := h.Submit(r); !provider.IsPossiblyPaid(err) {
		t.Fatalf("err = %v, want possibly paid", err)
	}
	rep := h.Sim.Jobs()
	if len(rep.Jobs) != 1 || rep.Requests != 1 {
		t.Fatalf("report %+v: want the one job made by one request", rep)
	}
	ctx := context.Background()
	j, ok, err := h.P.Recover(ctx, r, since, time.Now())
	if h.Keep(err) != nil || !ok || j.ID != rep.Jobs[0].ID || j.Kind != addrs.Video {
		t.Fatalf("Recover = %+v, %v, %v; want job %s", j, ok, err, rep.Jobs[0].ID)
	}
	if st := h.Follow(j); st[len(st)-1].State != provider.Done {
		t.Errorf("the recovered job ended %+v", st[len(st)-1])
	}
	for name, other := range map[string]provider.Request{
		"another prompt":   providertest.Request(addrs.Video, "ray-2", map[string]any{"prompt": "found", "duration": "9s"}),
		"another duration": providertest.Request(addrs.Video, "ray-2", map[string]any{"prompt": "lost", "duration": "5s"}),
		"another model":    providertest.Request(addrs.Video, "ray-flash-2", map[string]any{"prompt": "lost", "duration": "9s"}),
		"an image":         providertest.Request(addrs.Image, "ray-2", map[string]any{"prompt": "lost", "duration": "9s"}),
	} {
		if _, ok, err := h.P.Recover(ctx, other, since, time.Now()); ok || h.Keep(err) != nil {
			t.Errorf("%s was recovered (%v, %v)", name, ok, err)
		}
	}
	if _, ok, _ := h.P.Recover(ctx, r, since.Add(time.Hour), time.Now().Add(2*time.Hour)); ok {
		t.Error("a generation outside the window was recovered")
	}
	// The same create lost twice: genform cannot tell which is its own.
	h.Submit(r)
	if _, ok, err := h.P.Recover(ctx, r, since, time.Now()); ok || h.Keep(err) == nil || !strings.Contains(err.Error(), "2 generations") {
		t.Errorf("two matches: %v, %v; want an error", ok, err)
	}
}

// Recover reads the list page by page: the generation looked for is
// behind newer ones made in the same window.
func TestRecoverReadsPages(t *testing.T) {
	h := start(t, simkit.Options{MaxConcurrent: -1}, key)
	since := time.Now()
	r := providertest.Request(addrs.Image, "photon-1", map[string]any{"prompt": "the one", "aspect_ratio": "4:3"})
	j, err := h.Submit(r)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 130 {
		body := fmt.Sprintf(`{"model":"photon-1","prompt":"another %d"}`, i)
		req, _ := http.NewRequest(http.MethodPost, h.Server.URL+"/generations/image", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := h.Server.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	before := h.Sim.Jobs().Requests
	found, ok, err := h.P.Recover(context.Background(), r, since, time.Now())
	if h.Keep(err) != nil || !ok || found.ID != j.ID {
		t.Fatalf("Recover = %+v, %v, %v; want job %s", found, ok, err, j.ID)
	}
	if n := h.Sim.Jobs().Requests - before; n != 2 {
		t.Errorf("Recover read %d pages, want 2", n)
	}
}

func TestServerErrorOnCreateNeverSentAgain(t *testing.T) {
	h := start(t, simkit.Options{ErrorRate: 1}, key)
	h.SentOnce(func() error {
		_, err := h.Submit(providertest.Request(addrs.Image, "photon-1", map[string]any{"prompt": "five hundred"}))
		return err
	})
}

func TestExpiredOutput(t *testing.T) {
	h := start(t, simkit.Options{URLTTL: 50 * time.Millisecond}, key)
	_, res := h.Done(providertest.Request(addrs.Image, "photon-1", map[string]any{"prompt": "fleeting"}), completed)
	time.Sleep(100 * time.Millisecond)
	h.ExpiredOutput(res.Outputs[0].URL)
}

func TestCredentials(t *testing.T) {
	good := start(t, simkit.Options{}, key)
	bad := start(t, simkit.Options{}, "luma-wrong-key-abcdefghijkl")
	providertest.Keys(good.Harness, bad.Harness, func() error {
		_, err := bad.Submit(providertest.Request(addrs.Image, "photon-1", map[string]any{"prompt": "with a wrong key"}))
		return err
	})
	if n := len(good.Sim.Jobs().Jobs); n != 0 {
		t.Errorf("checking the key made %d generations", n)
	}
}

func TestRequestsRefusedBeforeSending(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	for name, r := range map[string]provider.Request{
		"no model":             {Kind: addrs.Image, Body: []byte(`{"prompt":"x"}`)},
		"a model with a space": {Kind: addrs.Image, Target: "photon 1", Body: []byte(`{"prompt":"x"}`)},
		"not an object":        {Kind: addrs.Image, Target: "photon-1", Body: []byte(`["x"]`)},
		"another model":        {Kind: addrs.Image, Target: "photon-1", Body: []byte(`{"model":"photon-flash-1"}`)},
		"no kind":              {Target: "photon-1", Body: []byte(`{"prompt":"x"}`)},
	} {
		if _, err := h.Submit(r); err == nil || provider.IsPossiblyPaid(err) {
			t.Errorf("%s: %v, want a refusal before sending", name, err)
		}
	}
	if n := h.Sim.Jobs().Requests; n != 0 {
		t.Errorf("%d requests sent for invalid requests", n)
	}
}
