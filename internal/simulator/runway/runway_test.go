package runway_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/simulator/runway"
	"github.com/genform/genform/internal/simulator/simkit"
	"github.com/genform/genform/internal/simulator/simkit/simtest"
)

const key = "key_runway-sim-test-0123456789"

type sim struct {
	t     *testing.T
	s     *runway.Server
	url   string
	clock *simtest.Clock
}

func start(t *testing.T, opts simkit.Options) *sim {
	t.Helper()
	c := simtest.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	opts.Token, opts.Now = key, c.Now
	if opts.Latency == 0 {
		opts.Latency = 10 * time.Second
	}
	s, srv := simtest.Start(t, runway.New, opts)
	return &sim{t: t, s: s, url: srv.URL, clock: c}
}

// do sends a request with the key and the version header, and decodes
// the JSON answer into a map.
func (s *sim) do(method, path string, body any, header map[string]string) (int, map[string]any) {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.url+path, rd)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("X-Runway-Version", runway.Version)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	b, _ := io.ReadAll(resp.Body)
	json.Unmarshal(b, &m) //nolint:errcheck // a 204 has no body
	return resp.StatusCode, m
}

func (s *sim) create(path string, body map[string]any) string {
	s.t.Helper()
	code, m := s.do("POST", path, body, nil)
	id, _ := m["id"].(string)
	if code != http.StatusOK || id == "" {
		s.t.Fatalf("POST %s: %d %v", path, code, m)
	}
	return id
}

func (s *sim) task(id string) map[string]any {
	s.t.Helper()
	code, m := s.do("GET", "/v1/tasks/"+id, nil, nil)
	if code != http.StatusOK {
		s.t.Fatalf("GET task %s: %d %v", id, code, m)
	}
	return m
}

func get(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func image(prompt string) map[string]any {
	return map[string]any{"model": "gen4_image", "promptText": prompt, "ratio": "1920:1080", "seed": 7}
}

func TestTaskLifecycle(t *testing.T) {
	s := start(t, simkit.Options{})
	id := s.create("/v1/text_to_image", image("a lighthouse"))
	if st := s.task(id)["status"]; st != "PENDING" {
		t.Errorf("a new task is %v, want PENDING", st)
	}
	s.clock.Advance(5 * time.Second)
	m := s.task(id)
	if m["status"] != "RUNNING" || m["progress"] != 0.5 {
		t.Errorf("half way the task is %v", m)
	}
	s.clock.Advance(5 * time.Second)
	m = s.task(id)
	out, _ := m["output"].([]any)
	if m["status"] != "SUCCEEDED" || len(out) != 1 || m["createdAt"] == nil {
		t.Fatalf("the finished task is %v", m)
	}
	code, body := get(t, out[0].(string))
	if code != http.StatusOK || !strings.HasPrefix(body, "\x89PNG") {
		t.Errorf("the output: %d %.20q", code, body)
	}

	v := s.create("/v1/image_to_video", map[string]any{
		"model": "gen4_turbo", "ratio": "1280:720", "duration": 5,
		"promptImage": []any{
			map[string]any{"uri": "https://example.com/a.png", "position": "first"},
			map[string]any{"uri": "data:image/png;base64,AA==", "position": "last"},
		},
	})
	s.clock.Advance(10 * time.Second)
	out, _ = s.task(v)["output"].([]any)
	if len(out) != 1 || !strings.Contains(out[0].(string), ".gif?") {
		t.Fatalf("the video's output is %v", out)
	}
	if code, body := get(t, out[0].(string)); code != http.StatusOK || !strings.HasPrefix(body, "GIF8") {
		t.Errorf("the video: %d", code)
	}
	if rep := s.s.Jobs(); len(rep.Jobs) != 2 || rep.Jobs[0].Status != "SUCCEEDED" {
		t.Errorf("report %+v", rep)
	}
}

func TestThrottledBehindTheConcurrencyLimit(t *testing.T) {
	s := start(t, simkit.Options{MaxConcurrent: 1})
	a := s.create("/v1/text_to_video", map[string]any{"model": "gen4.5", "promptText": "one", "ratio": "1280:720", "duration": 5})
	b := s.create("/v1/text_to_video", map[string]any{"model": "gen4.5", "promptText": "two", "ratio": "1280:720", "duration": 5})
	if st := s.task(b)["status"]; st != "THROTTLED" {
		t.Errorf("a task past the concurrency limit is %v, want THROTTLED", st)
	}
	s.clock.Advance(10 * time.Second)
	if s.task(a)["status"] != "SUCCEEDED" || s.task(b)["status"] != "PENDING" {
		t.Errorf("once the first ended: %v, %v", s.task(a)["status"], s.task(b)["status"])
	}
}

func TestLinksExpireAndAreHandedOutAnew(t *testing.T) {
	s := start(t, simkit.Options{URLTTL: time.Minute})
	id := s.create("/v1/text_to_image", image("fleeting"))
	s.clock.Advance(10 * time.Second)
	old := s.task(id)["output"].([]any)[0].(string)
	s.clock.Advance(2 * time.Minute)
	if code, body := get(t, old); code != http.StatusForbidden || !strings.Contains(body, "expired") {
		t.Errorf("an expired link: %d %s, want 403", code, body)
	}
	fresh := s.task(id)["output"].([]any)[0].(string)
	if fresh == old {
		t.Fatal("fetching the task again gave the same link")
	}
	if code, _ := get(t, fresh); code != http.StatusOK {
		t.Errorf("the fresh link: %d", code)
	}
	if code, _ := get(t, strings.Replace(fresh, "sig=", "sig=0", 1)); code != http.StatusForbidden {
		t.Errorf("a forged link: %d, want 403", code)
	}
}

func TestDailyCap(t *testing.T) {
	s := start(t, simkit.Options{DailyCap: 2})
	s.create("/v1/text_to_image", image("one"))
	s.create("/v1/text_to_image", image("two"))
	code, m := s.do("POST", "/v1/text_to_image", image("three"), nil)
	if code != http.StatusTooManyRequests || m["error"] != "Your daily task limit has been reached." {
		t.Errorf("past the cap: %d %v", code, m)
	}
	if n := len(s.s.Jobs().Jobs); n != 2 {
		t.Errorf("%d tasks made, want 2", n)
	}
	// The cap is per model, over the last 24 hours.
	s.create("/v1/text_to_image", map[string]any{"model": "gen4_image_turbo", "promptText": "other", "ratio": "1024:1024",
		"referenceImages": []any{map[string]any{"uri": "https://example.com/r.png"}}})
	s.clock.Advance(24 * time.Hour)
	s.create("/v1/text_to_image", image("a day later"))
}

func TestFailuresAndStatuses(t *testing.T) {
	s := start(t, simkit.Options{})
	for _, tt := range []struct{ prompt, status, code string }{
		{"x " + simkit.FailMarker, "FAILED", "INTERNAL.BAD_OUTPUT.CODE01"},
		{"x " + simkit.RefuseMarker, "FAILED", "SAFETY.INPUT.TEXT"},
	} {
		id := s.create("/v1/text_to_image", image(tt.prompt))
		s.clock.Advance(10 * time.Second)
		m := s.task(id)
		if m["status"] != tt.status || m["failureCode"] != tt.code || m["failure"] == "" || m["output"] != nil {
			t.Errorf("%q ended %v", tt.prompt, m)
		}
	}
	id := s.create("/v1/text_to_image", image("odd "+simkit.WeirdMarker))
	s.clock.Advance(4 * time.Second)
	if st := s.task(id)["status"]; st != "PREPARING" {
		t.Errorf("a weird task is %v mid-run", st)
	}
}

func TestCancelAndDelete(t *testing.T) {
	s := start(t, simkit.Options{})
	id := s.create("/v1/text_to_image", image("stop"))
	s.clock.Advance(2 * time.Second)
	if code, _ := s.do("DELETE", "/v1/tasks/"+id, nil, nil); code != http.StatusNoContent {
		t.Fatalf("DELETE a running task: %d", code)
	}
	s.clock.Advance(time.Minute)
	if st := s.task(id)["status"]; st != "CANCELLED" {
		t.Errorf("a canceled task is %v", st)
	}
	done := s.create("/v1/text_to_image", image("keep"))
	s.clock.Advance(time.Minute)
	if code, _ := s.do("DELETE", "/v1/tasks/"+done, nil, nil); code != http.StatusNoContent {
		t.Fatalf("DELETE a finished task: %d", code)
	}
	if code, _ := s.do("GET", "/v1/tasks/"+done, nil, nil); code != http.StatusNotFound {
		t.Errorf("a deleted task answers %d, want 404", code)
	}
	s.clock.Advance(time.Second)
	if code, _ := s.do("DELETE", "/v1/tasks/"+done, nil, nil); code != http.StatusNotFound {
		t.Errorf("deleting it again answers %d, want 404", code)
	}
}

func TestRefusals(t *testing.T) {
	s := start(t, simkit.Options{})
	for _, tt := range []struct {
		name   string
		path   string
		body   map[string]any
		header map[string]string
		want   int
	}{
		{"no version", "/v1/text_to_image", image("x"), map[string]string{"X-Runway-Version": ""}, 400},
		{"old version", "/v1/text_to_image", image("x"), map[string]string{"X-Runway-Version": "2023-01-01"}, 400},
		{"wrong key", "/v1/text_to_image", image("x"), map[string]string{"Authorization": "Bearer nope"}, 401},
		{"model of another endpoint", "/v1/text_to_image", map[string]any{"model": "gen4_turbo", "promptText": "x", "ratio": "1280:720"}, nil, 400},
		{"no ratio", "/v1/text_to_image", map[string]any{"model": "gen4_image", "promptText": "x"}, nil, 400},
		{"an aspect ratio, not pixels", "/v1/text_to_image", map[string]any{"model": "gen4_image", "promptText": "x", "ratio": "16:9x"}, nil, 400},
		{"no prompt image", "/v1/image_to_video", map[string]any{"model": "gen4_turbo", "ratio": "1280:720"}, nil, 400},
		{"plain http image", "/v1/image_to_video", map[string]any{"model": "gen4_turbo", "promptImage": "http://example.com/a.png"}, nil, 400},
		{"only a last frame", "/v1/image_to_video", map[string]any{"model": "veo3.1", "promptImage": []any{map[string]any{"uri": "https://e.com/a.png", "position": "last"}}}, nil, 400},
		{"duration too long", "/v1/text_to_video", map[string]any{"model": "gen4.5", "promptText": "x", "duration": 30}, nil, 400},
		{"no such endpoint", "/v1/text_to_audio", image("x"), nil, 404},
	} {
		code, m := s.do("POST", tt.path, tt.body, tt.header)
		if code != tt.want || m["error"] == nil {
			t.Errorf("%s: %d %v, want %d with an error", tt.name, code, m, tt.want)
		}
	}
	if n := len(s.s.Jobs().Jobs); n != 0 {
		t.Errorf("%d tasks made by refused creates", n)
	}
	code, m := s.do("GET", "/v1/organization", nil, nil)
	if tier, _ := m["tier"].(map[string]any); code != http.StatusOK || tier["models"] == nil {
		t.Errorf("organization: %d %v", code, m)
	}
}

func TestTasksSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	s := start(t, simkit.Options{DataDir: dir})
	id := s.create("/v1/text_to_image", image("kept"))
	s.clock.Advance(10 * time.Second)
	link := s.task(id)["output"].([]any)[0].(string)
	if err := s.s.Close(); err != nil {
		t.Fatal(err)
	}
	_, srv := simtest.Start(t, runway.New, simkit.Options{Token: key, DataDir: dir, Now: s.clock.Now})
	moved := srv.URL + link[len(s.url):]
	if code, _ := get(t, moved); code != http.StatusOK {
		t.Errorf("a link handed out before the restart answers %d after it", code)
	}
}
