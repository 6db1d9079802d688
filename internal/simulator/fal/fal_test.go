package fal

import (
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/simulator/simkit"
	"github.com/genform/genform/internal/simulator/simkit/simtest"
)

// do sends a request to the simulator, with the key when there is one.
func do(t *testing.T, srv *httptest.Server, method, url, key, body string) (int, http.Header, map[string]any) {
	t.Helper()
	if key == "" {
		return simtest.Do(t, srv, method, url, body)
	}
	return simtest.Do(t, srv, method, url, body, "Authorization", "Key "+key)
}

func TestQueueAPI(t *testing.T) {
	c := simtest.NewClock(simtest.Epoch)
	sim, srv := simtest.Start(t, New, simkit.Options{Token: "k", Latency: 10 * time.Second, MaxConcurrent: 1, Now: c.Now, DataDir: t.TempDir()})

	if code, _, body := do(t, srv, "POST", "/fal-ai/flux/dev", "", `{"prompt":"x"}`); code != 401 || body["detail"] == nil {
		t.Errorf("no key: %d %v", code, body)
	}
	code, _, a := do(t, srv, "POST", "/fal-ai/flux/dev", "k", `{"prompt":"one","num_images":2}`)
	if code != 200 || a["status"] != "IN_QUEUE" || a["request_id"] == nil {
		t.Fatalf("submit: %d %v", code, a)
	}
	id := a["request_id"].(string)
	for _, f := range []string{"status_url", "response_url", "cancel_url"} {
		if u, _ := a[f].(string); !strings.HasPrefix(u, srv.URL+"/fal-ai/flux/requests/"+id) {
			t.Errorf("%s = %q: want it built from the app without the subpath", f, u)
		}
	}
	_, _, b := do(t, srv, "POST", "/fal-ai/flux/dev", "k", `{"prompt":"two"}`)
	second := b["status_url"].(string)

	if code, _, st := do(t, srv, "GET", second, "k", ""); code != 202 || st["status"] != "IN_QUEUE" || st["queue_position"] != float64(0) {
		t.Errorf("behind the concurrency limit: %d %v, want IN_QUEUE (202)", code, st)
	}
	c.Advance(5 * time.Second)
	if code, _, st := do(t, srv, "GET", a["status_url"].(string), "k", ""); code != 202 || st["status"] != "IN_PROGRESS" {
		t.Errorf("running: %d %v", code, st)
	}
	if code, _, _ := do(t, srv, "GET", a["response_url"].(string), "k", ""); code != 400 {
		t.Errorf("the result before COMPLETED: %d, want 400", code)
	}
	c.Advance(6 * time.Second)
	code, _, st := do(t, srv, "GET", a["status_url"].(string), "k", "")
	if code != 200 || st["status"] != "COMPLETED" || st["error"] != nil {
		t.Errorf("done: %d %v", code, st)
	}
	if _, _, st := do(t, srv, "GET", second, "k", ""); st["status"] != "IN_PROGRESS" {
		t.Errorf("the second once a slot freed: %v", st)
	}
	_, _, res := do(t, srv, "GET", a["response_url"].(string), "k", "")
	images, _ := res["images"].([]any)
	if len(images) != 2 {
		t.Fatalf("result %v", res)
	}
	url := images[0].(map[string]any)["url"].(string)
	resp, err := http.Get(url)
	if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("output %s: %v %v", url, err, resp)
	}
	resp.Body.Close()

	// A restart on the same data directory keeps the jobs.
	if err := sim.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := New(simkit.Options{Token: "k", Now: c.Now, DataDir: sim.Core.Opts.DataDir})
	if err != nil {
		t.Fatal(err)
	}
	rep := again.Jobs()
	if len(rep.Jobs) != 2 {
		t.Fatalf("after a restart: %+v", rep)
	}
	for _, j := range rep.Jobs {
		if j.ID == id && (j.StatusRequests != 2 || j.Status != "COMPLETED" || string(j.Body) != `{"prompt":"one","num_images":2}`) {
			t.Errorf("after a restart: %+v", j)
		}
	}

	if code, _, body := do(t, srv, "GET", "/fal-ai/flux/requests/nope/status", "k", ""); code != 404 || body["detail"] == nil {
		t.Errorf("an unknown request: %d %v", code, body)
	}
}

func TestFaultsAndMarkers(t *testing.T) {
	c := simtest.NewClock(time.Now())
	sim, srv := simtest.Start(t, New, simkit.Options{Token: "k", Latency: time.Second, Now: c.Now, RPM: 1})
	// A model without FLUX's safety checker fails the request.
	_, _, a := do(t, srv, "POST", "/fal-ai/recraft/v3/text-to-image", "k", `{"prompt":"bad [nsfw]"}`)
	code, h, body := do(t, srv, "GET", a["status_url"].(string), "k", "")
	if code != 429 || h.Get("Retry-After") == "" || body["detail"] == nil {
		t.Errorf("past the rate: %d %v %v", code, h, body)
	}
	c.Advance(2 * time.Minute)
	_, _, st := do(t, srv, "GET", a["status_url"].(string), "k", "")
	if st["status"] != "COMPLETED" || st["error_type"] != "content_policy_violation" {
		t.Errorf("a refused request's status: %v", st)
	}
	c.Advance(2 * time.Minute)
	code, _, body = do(t, srv, "GET", a["response_url"].(string), "k", "")
	detail, _ := body["detail"].([]any)
	if code != 422 || len(detail) != 1 || detail[0].(map[string]any)["type"] != "content_policy_violation" {
		t.Errorf("a refused request's result: %d %v", code, body)
	}
	if rep := sim.Jobs(); rep.Throttled != 1 || len(rep.Jobs) != 1 {
		t.Errorf("report %+v", rep)
	}
}

// A FLUX request its safety checker flags completes without an error, as
// fal's FLUX endpoints do: its result sets has_nsfw_concepts for every
// image, and the images are black.
func TestFluxFlagsImages(t *testing.T) {
	c := simtest.NewClock(time.Now())
	_, srv := simtest.Start(t, New, simkit.Options{Token: "k", Latency: time.Second, Now: c.Now})
	_, _, a := do(t, srv, "POST", "/fal-ai/flux/dev", "k", `{"prompt":"bad [nsfw]","num_images":2,"image_size":"square"}`)
	c.Advance(2 * time.Second)
	if _, _, st := do(t, srv, "GET", a["status_url"].(string), "k", ""); st["status"] != "COMPLETED" || st["error"] != nil || st["error_type"] != nil {
		t.Errorf("a flagged request's status: %v, want COMPLETED without an error", st)
	}
	code, _, res := do(t, srv, "GET", a["response_url"].(string), "k", "")
	flags, _ := res["has_nsfw_concepts"].([]any)
	images, _ := res["images"].([]any)
	if code != 200 || len(flags) != 2 || flags[0] != true || flags[1] != true || len(images) != 2 {
		t.Fatalf("a flagged request's result: %d %v", code, res)
	}
	resp, err := http.Get(images[1].(map[string]any)["url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	img, err := png.Decode(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 512 || b.Dy() != 512 {
		t.Errorf("the black image is %v, want the size asked for", b)
	}
	for y := 0; y < img.Bounds().Dy(); y += 37 {
		for x := 0; x < img.Bounds().Dx(); x += 37 {
			if r, g, b, _ := img.At(x, y).RGBA(); r|g|b != 0 {
				t.Fatalf("pixel %d,%d is not black", x, y)
			}
		}
	}
}

// A submit fal refuses is answered before any request exists: a model id
// it does not serve 404, an account locked for its balance 403 in fal's
// words, a FLUX image_size that is no preset 422 (a model error); none
// makes a job. The Platform API's pricing answers with the key, and
// refuses without it.
func TestSubmitRefusalsAndPricing(t *testing.T) {
	sim, srv := simtest.Start(t, New, simkit.Options{Token: "k"})
	for _, tc := range []struct {
		path, body string
		code       int
		detail     string
	}{
		{"/fal-ai/" + MissingModel + "/dev", `{"prompt":"x"}`, 404, "not found"},
		{"/fal-ai/flux/dev", `{"prompt":"x [quota]"}`, 403, "User is locked. Reason: Exhausted balance"},
		{"/fal-ai/flux/dev", `{"prompt":"x","image_size":"huge"}`, 422, "Input should be"},
	} {
		code, _, body := do(t, srv, "POST", tc.path, "k", tc.body)
		if code != tc.code || !strings.Contains(fmt.Sprint(body["detail"]), tc.detail) || body["request_id"] != nil {
			t.Errorf("%s %s: %d %v, want %d %q", tc.path, tc.body, code, body, tc.code, tc.detail)
		}
	}
	if n := len(sim.Jobs().Jobs); n != 0 {
		t.Errorf("%d jobs made by refused submits", n)
	}
	code, _, body := do(t, srv, "GET", "/v1/models/pricing?endpoint_id=fal-ai/flux/schnell,fal-ai/kling-video/v2/master/text-to-video", "k", "")
	prices, _ := body["prices"].([]any)
	if code != 200 || len(prices) != 2 || body["has_more"] != false || prices[0].(map[string]any)["endpoint_id"] != "fal-ai/flux/schnell" {
		t.Errorf("pricing: %d %v", code, body)
	}
	if code, _, _ := do(t, srv, "GET", "/v1/models/pricing?endpoint_id=fal-ai/flux/schnell", "wrong", ""); code != 401 {
		t.Errorf("pricing with a wrong key: %d, want 401", code)
	}
	if code, _, _ := do(t, srv, "GET", "/v1/models/pricing", "k", ""); code != 400 {
		t.Errorf("pricing of nothing: %d, want 400", code)
	}
}

// Veo's ids name no video, yet it makes videos: of its duration written
// "6s", or of 8 seconds, its default, when unset.
func TestVeoMakesVideos(t *testing.T) {
	for _, tt := range []struct {
		in   map[string]any
		secs int
	}{
		{map[string]any{"prompt": "p", "duration": "6s"}, 6},
		{map[string]any{"prompt": "p"}, 8},
	} {
		m := mediaOf("fal-ai/veo3.1/fast", "id", tt.in)
		if m.Seconds != tt.secs {
			t.Errorf("%v: %d seconds, want %d", tt.in, m.Seconds, tt.secs)
		}
	}
	if m := mediaOf("fal-ai/flux/dev", "id", map[string]any{"prompt": "p"}); m.Seconds != 0 {
		t.Errorf("FLUX made a video of %d seconds", m.Seconds)
	}
}
