package runway_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/provider/providertest"
	"github.com/genform/genform/internal/provider/runway"
	simrunway "github.com/genform/genform/internal/simulator/runway"
	"github.com/genform/genform/internal/simulator/simkit"
	"github.com/genform/genform/internal/simulator/simkit/simtest"
)

const key = "key_runway-adapter-test-0123456789abcdef"

// start is the adapter against its simulator, sending key k.
var start = providertest.Starter(key, simrunway.New, runway.New)

func image(prompt string) map[string]any {
	return map[string]any{"promptText": prompt, "ratio": "1920:1080", "seed": 3}
}

func TestImagesAndVideos(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	ctx := context.Background()
	for _, tt := range []struct {
		kind     addrs.Kind
		model    string
		body     map[string]any
		endpoint string
		ext      string
	}{
		{addrs.Image, "gen4_image", image("a lighthouse"), "/v1/text_to_image", ".png"},
		{addrs.Video, "gen4.5", map[string]any{"promptText": "waves", "ratio": "1280:720", "duration": 5}, "/v1/text_to_video", ".gif"},
		{addrs.Video, "gen4_turbo", map[string]any{"promptImage": "data:image/png;base64,AA==", "ratio": "1280:720", "duration": 10}, "/v1/image_to_video", ".gif"},
		{addrs.Video, "veo3.1", map[string]any{"promptText": "a door", "ratio": "1280:720", "promptImage": []any{
			map[string]any{"uri": "https://example.com/a.png", "position": "first"},
			map[string]any{"uri": "https://example.com/b.png", "position": "last"},
		}}, "/v1/image_to_video", ".gif"},
	} {
		j, err := h.Submit(providertest.Request(tt.kind, tt.model, tt.body))
		if err != nil {
			t.Fatalf("%s: %v", tt.model, err)
		}
		if j.Target != tt.model || j.Kind != tt.kind || j.Handle != nil {
			t.Errorf("%s: job %+v", tt.model, j)
		}
		seen := h.Follow(j)
		if last := seen[len(seen)-1]; last.State != provider.Done || last.Raw != "SUCCEEDED" || !last.Known {
			t.Fatalf("%s: last status %+v", tt.model, last)
		}
		res, err := h.P.Result(ctx, j)
		if h.Keep(err) != nil {
			t.Fatal(err)
		}
		if len(res.Outputs) != 1 || res.CreationID != j.ID || res.Kind != tt.kind || len(res.Detail) == 0 {
			t.Fatalf("%s: result %+v", tt.model, res)
		}
		d, err := h.P.Download(ctx, res.Outputs[0].URL, t.TempDir(), "out")
		if h.Keep(err) != nil || !strings.HasSuffix(d.Path, tt.ext) {
			t.Fatalf("%s: download %+v, %v", tt.model, d, err)
		}
		rep := h.Sim.Jobs()
		got := rep.Jobs[len(rep.Jobs)-1]
		var sent map[string]any
		json.Unmarshal(got.Body, &sent) //nolint:errcheck // the simulator took it as JSON
		if got.Endpoint != tt.endpoint || sent["model"] != tt.model {
			t.Errorf("%s was created at %s with model %v", tt.model, got.Endpoint, sent["model"])
		}
	}
}

func TestThrottledIsRunning(t *testing.T) {
	h := start(t, simkit.Options{MaxConcurrent: 1, Latency: 300 * time.Millisecond}, key)
	if _, err := h.Submit(providertest.Request(addrs.Image, "gen4_image", image("first"))); err != nil {
		t.Fatal(err)
	}
	j, err := h.Submit(providertest.Request(addrs.Image, "gen4_image", image("second")))
	if err != nil {
		t.Fatal(err)
	}
	seen := h.Follow(j)
	if st := seen[0]; st.Raw != "THROTTLED" || !st.Throttled || st.State != provider.Running || !st.Known {
		t.Errorf("a task past the concurrency limit reads %+v, want running and throttled", st)
	}
	if last := seen[len(seen)-1]; last.State != provider.Done || last.Throttled {
		t.Errorf("the throttled task ended %+v", last)
	}
}

func TestFailureRefusalAndCancel(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	h.Failures([]providertest.Failure{
		{Prompt: "a cat " + simkit.FailMarker, Reason: "INTERNAL.BAD_OUTPUT"},
		{Prompt: "a cat " + simkit.RefuseMarker, Refused: true, Reason: "SAFETY.INPUT.TEXT"},
	}, func(prompt string) (provider.Job, error) {
		return h.Submit(providertest.Request(addrs.Image, "gen4_image", image(prompt)))
	}, func(_ providertest.Failure, j provider.Job, _ provider.Status) {
		if _, err := h.P.Result(context.Background(), j); h.Keep(err) == nil {
			t.Errorf("the result of a failed task: no error")
		}
	})

	h = start(t, simkit.Options{Latency: time.Hour}, key)
	j, err := h.Submit(providertest.Request(addrs.Image, "gen4_image", image("stopped")))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodDelete, h.Server.URL+"/v1/tasks/"+j.ID, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("X-Runway-Version", runway.APIVersion)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("cancelling on the simulator: %v %v", resp, err)
	}
	resp.Body.Close()
	if last := h.Ended(j); last.State != provider.Failed || last.Raw != "CANCELLED" || last.Refused || !strings.Contains(last.Reason, "cancelled") {
		t.Errorf("a cancelled task ends %+v, want failed", last)
	}
}

func TestDailyCapStopsAtOnce(t *testing.T) {
	h := start(t, simkit.Options{DailyCap: 1}, key)
	if _, err := h.Submit(providertest.Request(addrs.Image, "gen4_image", image("the one of the day"))); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	_, err := h.Submit(providertest.Request(addrs.Image, "gen4_image", image("one too many")))
	if !errors.Is(err, provider.ErrCapReached) || provider.IsPossiblyPaid(err) {
		t.Fatalf("past the daily cap: %v, want ErrCapReached and not possibly paid", err)
	}
	if !strings.Contains(err.Error(), "Your daily task limit has been reached.") {
		t.Errorf("the error does not give Runway's words: %v", err)
	}
	var se *apiclient.Error
	if !errors.As(err, &se) || se.HTTPStatus != http.StatusTooManyRequests {
		t.Errorf("the error does not wrap Runway's answer: %v", err)
	}
	if rep := h.Sim.Jobs(); rep.Requests != 2 || len(rep.Jobs) != 1 {
		t.Errorf("report %+v: the refused create was sent again", rep)
	}
	if took := time.Since(began); took > 400*time.Millisecond {
		t.Errorf("the refused create took %s: it backed off", took)
	}
}

// An organization whose credits are spent (its monthly spend limit
// reached, or never funded) is answered "You do not have enough credits
// to run this task.": a cap, which stops the apply in Runway's words,
// sent once, never a refusal of one instance that the next create would
// meet again.
func TestOutOfCreditsStopsAtOnce(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	_, err := h.Submit(providertest.Request(addrs.Image, "gen4_image", image("spent "+simkit.QuotaMarker)))
	if !errors.Is(err, provider.ErrCapReached) || provider.IsPossiblyPaid(err) || !strings.Contains(err.Error(), "You do not have enough credits to run this task.") {
		t.Fatalf("credits spent: %v, want ErrCapReached in Runway's words", err)
	}
	if rep := h.Sim.Jobs(); rep.Requests != 1 || len(rep.Jobs) != 0 {
		t.Errorf("report %+v: want one request and no task", rep)
	}
}

func TestOrdinary429IsRetried(t *testing.T) {
	h := start(t, simkit.Options{RPM: 1, Now: providertest.StepClock(), Latency: time.Hour}, key)
	h.RateLimitStorm(func() error {
		_, err := h.Submit(providertest.Request(addrs.Image, "gen4_image", image("storm")))
		return err
	})
}

func TestLostOrFailedCreateNeverSentAgain(t *testing.T) {
	for _, opts := range []simkit.Options{{LoseRate: 1}, {ErrorRate: 1}} {
		h := start(t, opts, key)
		h.SentOnce(func() error {
			_, err := h.Submit(providertest.Request(addrs.Image, "gen4_image", image("once")))
			return err
		})
	}
	var _ provider.Provider = (*runway.Provider)(nil)
	if _, ok := any(&runway.Provider{}).(provider.Recoverer); ok {
		t.Error("the adapter claims to recover lost creates; Runway lists no tasks")
	}
}

func TestExpiredURLFreshOnResult(t *testing.T) {
	clock := simtest.NewClock(time.Now())
	h := start(t, simkit.Options{URLTTL: time.Hour, Now: clock.Now, Latency: time.Second}, key)
	ctx := context.Background()
	j, err := h.Submit(providertest.Request(addrs.Image, "gen4_image", image("fleeting")))
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Second)
	res, err := h.P.Result(ctx, j)
	if h.Keep(err) != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Hour)
	_, err = h.P.Download(ctx, res.Outputs[0].URL, t.TempDir(), "late")
	var se *apiclient.Error
	if !errors.As(h.Keep(err), &se) || se.HTTPStatus != http.StatusForbidden || errors.Is(err, apiclient.ErrUnauthorized) {
		t.Fatalf("downloading an expired URL: %v, want 403 that is not the key's", err)
	}
	again, err := h.P.Result(ctx, j)
	if h.Keep(err) != nil {
		t.Fatal(err)
	}
	if again.Outputs[0].URL == res.Outputs[0].URL {
		t.Fatal("Result handed back the expired URL: it must ask the task anew")
	}
	dir := t.TempDir()
	d, err := h.P.Download(ctx, again.Outputs[0].URL, dir, "fresh")
	if h.Keep(err) != nil {
		t.Fatalf("downloading the fresh URL: %v", err)
	}
	if b, _ := os.ReadFile(d.Path); !strings.HasPrefix(string(b), "\x89PNG") {
		t.Errorf("the fresh download is not a PNG: %s", d.Path)
	}
	if n := h.Sim.Jobs().Jobs[0].DetailRequests; n != 2 {
		t.Errorf("the task was read %d times for two results, want 2", n)
	}
}

func TestCredentials(t *testing.T) {
	good := start(t, simkit.Options{}, key)
	bad := start(t, simkit.Options{}, "key_wrong-0123456789abcdef")
	providertest.Keys(good.Harness, bad.Harness, func() error {
		_, err := bad.Submit(providertest.Request(addrs.Image, "gen4_image", image("x")))
		return err
	})
	if n := len(good.Sim.Jobs().Jobs); n != 0 {
		t.Errorf("checking the key made %d tasks", n)
	}
}

func TestRefusedBeforeOrAtCreate(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	for _, tt := range []struct {
		model string
		body  map[string]any
	}{
		{"", image("x")},
		{"gen4 image", image("x")},
		{"../v1/organization", image("x")},
		{"gen4_image", map[string]any{"model": "gen4_image_turbo", "promptText": "x", "ratio": "1024:1024"}},
	} {
		if _, err := h.Submit(providertest.Request(addrs.Image, tt.model, tt.body)); err == nil || provider.IsPossiblyPaid(err) {
			t.Errorf("model %q, body %v: %v, want a refusal before sending", tt.model, tt.body, err)
		}
	}
	if n := h.Sim.Jobs().Requests; n != 0 {
		t.Errorf("%d requests sent for refused requests", n)
	}
	// Runway refuses what its reference says it refuses (400): nothing made.
	_, err := h.Submit(providertest.Request(addrs.Image, "gen4_image", map[string]any{"promptText": "no ratio"}))
	if err == nil || provider.IsPossiblyPaid(err) || !strings.Contains(err.Error(), "ratio") {
		t.Errorf("a create Runway refuses: %v, want its refusal, not possibly paid", err)
	}
	if n := len(h.Sim.Jobs().Jobs); n != 0 {
		t.Errorf("%d tasks made", n)
	}
}
