package luma

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/simulator/simkit"
	"github.com/genform/genform/internal/simulator/simkit/simtest"
)

// do sends a request to the simulator with its key.
func do(t *testing.T, srv *httptest.Server, method, url, body string) (int, map[string]any) {
	t.Helper()
	code, _, m := simtest.Do(t, srv, method, url, body, "Authorization", "Bearer k")
	return code, m
}

func start(t *testing.T, opts simkit.Options) (*Server, *httptest.Server) {
	t.Helper()
	opts.Token = "k"
	return simtest.Start(t, New, opts)
}

func TestGenerationLifecycle(t *testing.T) {
	c := simtest.NewClock(simtest.Epoch)
	_, srv := start(t, simkit.Options{Latency: 10 * time.Second, Now: c.Now, MaxConcurrent: 1})
	code, g := do(t, srv, "POST", "/generations/image", `{"model":"photon-1","prompt":"a fox","aspect_ratio":"1:1"}`)
	if code != 201 || g["state"] != "queued" || g["generation_type"] != "image" || g["model"] != "photon-1" || g["assets"] != nil {
		t.Fatalf("create: %d %v", code, g)
	}
	req, _ := g["request"].(map[string]any)
	if req["prompt"] != "a fox" || req["generation_type"] != "image" || g["created_at"] != "2026-01-02T03:04:05.000Z" {
		t.Errorf("the generation's request and time: %v", g)
	}
	id := g["id"].(string)
	_, second := do(t, srv, "POST", "/generations/video", `{"model":"ray-2","prompt":"waves","duration":"9s"}`)
	c.Advance(5 * time.Second)
	if _, g := do(t, srv, "GET", "/generations/"+id, ""); g["state"] != "dreaming" {
		t.Errorf("running: %v", g)
	}
	if _, g := do(t, srv, "GET", "/generations/"+second["id"].(string), ""); g["state"] != "queued" {
		t.Errorf("behind the concurrency limit: %v, want queued", g)
	}
	c.Advance(6 * time.Second)
	_, g = do(t, srv, "GET", "/generations/"+id, "")
	assets, _ := g["assets"].(map[string]any)
	image, _ := assets["image"].(string)
	if g["state"] != "completed" || !strings.HasSuffix(image, "/files/"+id+"/0.png") || g["failure_reason"] != nil {
		t.Fatalf("done: %v", g)
	}
	resp, err := http.Get(image)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" {
		t.Errorf("the image: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	c.Advance(Defaults.URLTTL)
	if resp, _ := http.Get(image); resp.StatusCode != 404 {
		t.Errorf("a day on, the image answers %d, want 404", resp.StatusCode)
	}
	if code, _ := do(t, srv, "DELETE", "/generations/"+id, ""); code != 204 {
		t.Errorf("delete: %d", code)
	}
	if code, g := do(t, srv, "GET", "/generations/"+id, ""); code != 404 || g["detail"] == nil {
		t.Errorf("a deleted generation: %d %v", code, g)
	}
	if code, g := do(t, srv, "GET", "/credits", ""); code != 200 || g["credit_balance"] == nil {
		t.Errorf("credits: %d %v", code, g)
	}
}

func TestCreateRefusals(t *testing.T) {
	sim, srv := start(t, simkit.Options{Latency: time.Millisecond})
	_, done := do(t, srv, "POST", "/generations/video", `{"model":"ray-2","prompt":"done"}`)
	time.Sleep(20 * time.Millisecond)
	doneID := done["id"].(string)
	for _, tt := range []struct {
		path, body string
		code       int
		says       string
	}{
		{"/generations/image", `{"prompt":"no model"}`, 422, "model"},
		{"/generations/image", `{"model":"ray-2","prompt":"a video model"}`, 422, "photon-1"},
		{"/generations/video", `{"model":"photon-1","prompt":"an image model"}`, 422, "ray-2"},
		{"/generations/image", `{"model":"photon-1","prompt":"x","aspect_ratio":"2:1"}`, 422, "aspect_ratio"},
		{"/generations/image", `not json`, 422, "JSON object"},
		{"/generations/image", `{"model":"photon-1"}`, 400, "Prompt is required"},
		{"/generations/image", `{"model":"photon-1","prompt":"ab"}`, 400, "too short"},
		{"/generations/image", `{"model":"photon-1","prompt":"` + strings.Repeat("a", 5001) + `"}`, 400, "too long"},
		{"/generations/video", `{"model":"ray-2","prompt":"long","duration":"7s"}`, 400, "5s or 9s"},
		{"/generations/video", `{"model":"ray-2","prompt":"sharp","resolution":"8k"}`, 400, "resolution"},
		{"/generations/video", `{"model":"ray-2","prompt":"none","keyframes":{}}`, 400, "No keyframes provided"},
		{"/generations/video", `{"model":"ray-2","prompt":"loop","loop":true,"keyframes":{"frame1":{"type":"image","url":"https://x/y.jpg"}}}`, 400, "end frame"},
		{"/generations/video", `{"model":"ray-2","prompt":"loop","loop":true,"keyframes":{"frame0":{"type":"image","url":"https://x/a.jpg"},"frame1":{"type":"image","url":"https://x/b.jpg"}}}`, 400, "Loop is not supported for keyframes"},
		{"/generations/video", `{"model":"ray-2","prompt":"inline","keyframes":{"frame0":{"type":"image","url":"data:image/png;base64,AA=="}}}`, 400, "http(s) URL"},
		{"/generations/video", `{"model":"ray-2","prompt":"unknown","keyframes":{"frame0":{"type":"generation","id":"00000000-0000-4000-8000-000000000000"}}}`, 400, "not a completed generation"},
	} {
		code, g := do(t, srv, "POST", tt.path, tt.body)
		if code != tt.code || !strings.Contains(fmt.Sprint(g["detail"]), tt.says) {
			t.Errorf("%s %s: %d %v, want %d saying %q", tt.path, tt.body[:min(len(tt.body), 60)], code, g, tt.code, tt.says)
		}
	}
	code, g := do(t, srv, "POST", "/generations/video", `{"model":"ray-flash-2","keyframes":{"frame0":{"type":"generation","id":"`+doneID+`"},"frame1":{"type":"image","url":"https://x/b.jpg"}}}`)
	if code != 201 {
		t.Errorf("a video from a completed generation and an image, without a prompt: %d %v", code, g)
	}
	if n := len(sim.Jobs().Jobs); n != 2 {
		t.Errorf("%d generations made, want the two accepted", n)
	}
}

func TestListPagesNewestFirst(t *testing.T) {
	c := simtest.NewClock(simtest.Epoch)
	_, srv := start(t, simkit.Options{Now: c.Now, MaxConcurrent: -1})
	var ids []string
	for i := range 5 {
		c.Advance(time.Second)
		_, g := do(t, srv, "POST", "/generations/image", fmt.Sprintf(`{"model":"photon-1","prompt":"number %d"}`, i))
		ids = append(ids, g["id"].(string))
	}
	do(t, srv, "DELETE", "/generations/"+ids[3], "")
	_, page := do(t, srv, "GET", "/generations?limit=2", "")
	gens, _ := page["generations"].([]any)
	if len(gens) != 2 || gens[0].(map[string]any)["id"] != ids[4] || gens[1].(map[string]any)["id"] != ids[2] || page["has_more"] != true {
		t.Fatalf("first page: %v", page)
	}
	_, page = do(t, srv, "GET", "/generations?limit=2&offset=2", "")
	if gens, _ := page["generations"].([]any); len(gens) != 2 || page["has_more"] != false || page["count"] != float64(2) {
		t.Errorf("last page: %v", page)
	}
	if code, _ := do(t, srv, "GET", "/generations?limit=0", ""); code != 422 {
		t.Errorf("limit 0: %d", code)
	}
}

func TestMarkersAndFaults(t *testing.T) {
	sim, srv := start(t, simkit.Options{Latency: time.Millisecond, LoseRate: 1})
	simtest.Lost(t, srv, "POST", "/generations/image", `{"model":"photon-1","prompt":"x [nsfw]"}`, "Authorization", "Bearer k")
	rep := sim.Jobs()
	if len(rep.Jobs) != 1 {
		t.Fatalf("report %+v: the generation of a lost answer is made", rep)
	}
	time.Sleep(5 * time.Millisecond)
	_, g := do(t, srv, "GET", "/generations/"+rep.Jobs[0].ID, "")
	if g["state"] != "failed" || g["failure_reason"] != reasonModerated || g["assets"] != nil {
		t.Errorf("a moderated generation: %v", g)
	}
	if code, _, _ := simtest.Do(t, srv, "GET", "/credits", ""); code != 401 {
		t.Errorf("no key: %d", code)
	}
}

func TestWeirdState(t *testing.T) {
	c := simtest.NewClock(simtest.Epoch)
	_, srv := start(t, simkit.Options{Latency: 10 * time.Second, Now: c.Now})
	_, g := do(t, srv, "POST", "/generations/image", `{"model":"photon-1","prompt":"odd [weird-status]"}`)
	c.Advance(5 * time.Second)
	if _, g := do(t, srv, "GET", "/generations/"+g["id"].(string), ""); g["state"] != stateOdd {
		t.Errorf("mid-run: %v, want %s", g["state"], stateOdd)
	}
}
