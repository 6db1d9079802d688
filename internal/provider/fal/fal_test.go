package fal_test

import (
	"context"
	"encoding/json"
	"strings"
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
		return h.Submit(providertest.RequestOf("fal-ai/flux/schnell", map[string]any{"prompt": prompt}))
	}, func(f providertest.Failure, j provider.Job, _ provider.Status) {
		if !f.Refused {
			return // its result answers 500, which a read retries: the engine never asks it
		}
		if _, err := h.P.Result(context.Background(), j); h.Keep(err) == nil || !strings.Contains(err.Error(), "422") {
			t.Errorf("%q: the result of a refused request: %v, want its 422", f.Prompt, err)
		}
	})
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
