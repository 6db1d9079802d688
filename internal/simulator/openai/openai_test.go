package openai

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/simulator/simkit"
	"github.com/genform/genform/internal/simulator/simkit/simtest"
)

func start(t *testing.T, opts simkit.Options) (*Server, *httptest.Server) {
	t.Helper()
	opts.Token = "k"
	if opts.Latency == 0 {
		opts.Latency = 30 * time.Millisecond
	}
	return simtest.Start(t, New, opts)
}

type answer struct {
	Created      int64            `json:"created"`
	Data         []map[string]any `json:"data"`
	Size         string           `json:"size"`
	Quality      string           `json:"quality"`
	Background   string           `json:"background"`
	OutputFormat string           `json:"output_format"`
	Usage        struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

func call(t *testing.T, srv *httptest.Server, method, path, key, body string) (int, http.Header, answer) {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var a answer
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("%s %s: the answer is not JSON: %s", method, path, b)
	}
	return resp.StatusCode, resp.Header, a
}

func (a answer) code() string {
	if a.Error == nil || a.Error.Code == nil {
		return ""
	}
	return *a.Error.Code
}

func (a answer) param() string {
	if a.Error == nil || a.Error.Param == nil {
		return ""
	}
	return *a.Error.Param
}

// decode decodes image i of a, checking it is format at w x h.
func decode(t *testing.T, a answer, i int, format string, w, h int) image.Image {
	t.Helper()
	s, _ := a.Data[i]["b64_json"].(string)
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) == 0 {
		t.Fatalf("image %d: b64_json does not decode: %v", i, err)
	}
	img, got, err := image.Decode(bytes.NewReader(b))
	if err != nil || got != format || img.Bounds().Dx() != w || img.Bounds().Dy() != h {
		t.Fatalf("image %d: %s %v, %v; want a %s of %dx%d", i, got, img.Bounds(), err, format, w, h)
	}
	return img
}

func TestGeneration(t *testing.T) {
	sim, srv := start(t, simkit.Options{Latency: 200 * time.Millisecond})
	began := time.Now()
	code, _, a := call(t, srv, "POST", "/v1/images/generations", "k",
		`{"model":"gpt-image-2","prompt":"a lighthouse","n":2,"size":"1536x1024","quality":"high"}`)
	if code != 200 || len(a.Data) != 2 || a.Created == 0 || a.Size != "1536x1024" || a.Quality != "high" || a.OutputFormat != "png" || a.Background != "opaque" {
		t.Fatalf("generation: %d %+v", code, a)
	}
	if took := time.Since(began); took < 200*time.Millisecond {
		t.Errorf("answered after %s, before the work's latency", took)
	}
	if a.Usage.OutputTokens <= 0 || a.Usage.TotalTokens != a.Usage.InputTokens+a.Usage.OutputTokens {
		t.Errorf("usage %+v", a.Usage)
	}
	decode(t, a, 0, "png", 1536, 1024)
	decode(t, a, 1, "png", 1536, 1024)
	if a.Data[0]["b64_json"] == a.Data[1]["b64_json"] {
		t.Error("the two images are the same bytes")
	}
	rep := sim.Jobs()
	if len(rep.Jobs) != 1 || rep.Jobs[0].Status != statusCompleted || rep.Creates[rep.Jobs[0].Fingerprint] != 1 || rep.Requests != 1 {
		t.Errorf("report %+v: want one completed job from one request", rep)
	}

	// A size of its own on a gpt-image-2 model, JPEG at a compression.
	code, _, a = call(t, srv, "POST", "/v1/images/generations", "k",
		`{"model":"gpt-image-2.5-flare","prompt":"wide","size":"1536x864","output_format":"jpeg","output_compression":50}`)
	if code != 200 || a.OutputFormat != "jpeg" {
		t.Fatalf("jpeg: %d %+v", code, a)
	}
	decode(t, a, 0, "jpeg", 1536, 864)

	// A transparent background: the top of the sky lets through.
	_, _, a = call(t, srv, "POST", "/v1/images/generations", "k", `{"model":"gpt-image-2.6-sunburst","prompt":"sprite","background":"transparent"}`)
	img := decode(t, a, 0, "png", 1024, 1024)
	if _, _, _, alpha := img.At(0, 0).RGBA(); a.Background != "transparent" || alpha != 0 {
		t.Errorf("a transparent background: %q, alpha %d at the top left", a.Background, alpha)
	}
}

func TestRequestsRefused(t *testing.T) {
	sim, srv := start(t, simkit.Options{})
	for _, tt := range []struct {
		body        string
		status      int
		param, code string
	}{
		{`not json`, 400, "", ""},
		{`{"model":"gpt-image-2","prompt":"x","seed":3}`, 400, "seed", codeUnknownParam},
		{`{"model":"gpt-image-2","prompt":""}`, 400, "prompt", ""},
		{`{"model":"gpt-image-2","prompt":"` + strings.Repeat("a", maxPromptChars+1) + `"}`, 400, "prompt", ""},
		{`{"prompt":"no model"}`, 400, "model", ""},
		{`{"model":"gpt-image-2","prompt":"x","n":11}`, 400, "n", ""},
		{`{"model":"gpt-image-2","prompt":"x","n":"2"}`, 400, "n", ""},
		{`{"model":"gpt-image-1.5","prompt":"x"}`, 404, "model", codeModelNotFound}, // shut down on 2026-12-01
		{`{"model":"gpt-image-2","prompt":"x","size":"1000x1000"}`, 400, "size", ""},
		{`{"model":"gpt-image-2","prompt":"x","size":"3840x3840"}`, 400, "size", ""},
		{`{"model":"gpt-image-2","prompt":"x","response_format":"url"}`, 400, "response_format", ""},
		{`{"model":"gpt-image-2","prompt":"x","output_format":"webp"}`, 400, "output_format", ""},
		{`{"model":"gpt-image-2","prompt":"x","output_format":"jpeg","background":"transparent"}`, 400, "background", ""},
		{`{"model":"gpt-image-2","prompt":"x","stream":true}`, 400, "stream", ""},
		{`{"model":"gpt-image-2","prompt":"x","quality":"ultra"}`, 400, "quality", ""},
		{`{"model":"gpt-image-1","prompt":"retired"}`, 404, "model", codeModelNotFound},
		{`{"model":"dall-e-3","prompt":"x"}`, 404, "model", codeModelNotFound},
	} {
		code, _, a := call(t, srv, "POST", "/v1/images/generations", "k", tt.body)
		if code != tt.status || a.Error == nil || a.Error.Message == "" || a.Error.Type == "" || a.param() != tt.param || a.code() != tt.code {
			t.Errorf("%.60s: %d %+v, want %d with param %q and code %q", tt.body, code, a.Error, tt.status, tt.param, tt.code)
		}
	}
	if rep := sim.Jobs(); len(rep.Jobs) != 0 {
		t.Errorf("refused requests made %d jobs", len(rep.Jobs))
	}
}

func TestMarkersAndFaults(t *testing.T) {
	sim, srv := start(t, simkit.Options{})
	body := func(prompt string) string { return `{"model":"gpt-image-2","prompt":"` + prompt + `"}` }
	if code, _, a := call(t, srv, "POST", "/v1/images/generations", "k", body("a cat [nsfw]")); code != 400 || a.code() != codeModeration {
		t.Errorf("moderation: %d %+v", code, a.Error)
	}
	if code, h, a := call(t, srv, "POST", "/v1/images/generations", "k", body("a cat [quota]")); code != 429 || a.code() != codeQuota || h.Get("Retry-After") != "" {
		t.Errorf("quota: %d %v %+v, want 429 insufficient_quota without Retry-After", code, h, a.Error)
	}
	if rep := sim.Jobs(); len(rep.Jobs) != 0 {
		t.Fatalf("refusals made %d jobs", len(rep.Jobs))
	}
	if code, _, a := call(t, srv, "POST", "/v1/images/generations", "k", body("a cat [fail]")); code != 500 || a.Error == nil || a.Error.Type != "server_error" {
		t.Errorf("a failure: %d %+v", code, a.Error)
	}
	rep := sim.Jobs()
	if len(rep.Jobs) != 1 || rep.Jobs[0].Status != statusFailed {
		t.Errorf("a failure after the work: %+v, want its job counted, failed", rep.Jobs)
	}

	lost, lsrv := start(t, simkit.Options{LoseRate: 1})
	simtest.Lost(t, lsrv, "POST", "/v1/images/generations", body("lost"), "Authorization", "Bearer k")
	if rep := lost.Jobs(); len(rep.Jobs) != 1 || rep.Jobs[0].Status != statusCompleted {
		t.Errorf("a lost answer: %+v, want its job made", rep.Jobs)
	}

	_, esrv := start(t, simkit.Options{ErrorRate: 1})
	if code, _, a := call(t, esrv, "POST", "/v1/images/generations", "k", body("x")); code != 500 || a.Error.Type != "server_error" {
		t.Errorf("an injected error: %d %+v", code, a.Error)
	}
}

func TestKeysModelsAndRate(t *testing.T) {
	_, srv := start(t, simkit.Options{RPM: 2})
	if code, _, a := call(t, srv, "GET", "/v1/models", "", ""); code != 401 || a.Error == nil {
		t.Errorf("no key: %d %+v", code, a.Error)
	}
	if code, _, a := call(t, srv, "GET", "/v1/models", "wrong", ""); code != 401 || a.code() != codeInvalidKey || strings.Contains(a.Error.Message, "wrong") {
		t.Errorf("a wrong key: %d %+v, want 401 invalid_api_key not repeating it", code, a.Error)
	}
	req, _ := http.NewRequest("GET", srv.URL+"/v1/models", nil)
	req.Header.Set("Authorization", "Bearer k")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Object string `json:"object"`
		Data   []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if list.Object != "list" || len(list.Data) != len(models) || list.Data[0].ID != "gpt-image-2" {
		t.Errorf("the models: %+v", list)
	}
	if code, _, a := call(t, srv, "GET", "/v1/models/gpt-image-1", "k", ""); code != 404 || a.code() != codeModelNotFound {
		t.Errorf("a retired model: %d %+v", code, a.Error)
	}
	code, h, a := call(t, srv, "GET", "/v1/models/gpt-image-2", "k", "")
	if code != 429 || h.Get("Retry-After") == "" || a.code() != codeRateLimited {
		t.Errorf("past the rate: %d %v %+v, want 429 with Retry-After", code, h, a.Error)
	}
	if code, _, a := call(t, srv, "GET", "/v2/nothing", "k", ""); code != 404 || a.Error == nil {
		t.Errorf("an unknown path: %d %+v", code, a.Error)
	}
}

// The pictures are real images in the format asked for.
func TestFormatsDecode(t *testing.T) {
	run := &simkit.Run{ID: "x", Model: "gpt-image-2", Media: simkit.Media{Prompt: "p", Count: 1, Width: 64, Height: 48}}
	b, err := picture(run, 0, request{format: "jpeg", compression: 0})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jpeg.Decode(bytes.NewReader(b)); err != nil {
		t.Errorf("jpeg: %v", err)
	}
	b, err = picture(run, 0, request{format: "png", background: "transparent"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(bytes.NewReader(b)); err != nil {
		t.Errorf("png: %v", err)
	}
}

// TestRetiredModelsByDate: a model OpenAI shut down is served up to the
// day before its shutdown and answered 404 model_not_found from that day
// (UTC), by the simulator's clock, making nothing; the list gives its
// shutdown_date, and null for a model with none.
func TestRetiredModelsByDate(t *testing.T) {
	for _, tt := range []struct {
		now    time.Time
		served bool
	}{
		{time.Date(2026, 11, 30, 23, 59, 0, 0, time.UTC), true},
		{time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), false},
	} {
		now := tt.now
		sim, srv := start(t, simkit.Options{Now: func() time.Time { return now }, Latency: time.Nanosecond})
		for _, m := range []string{"gpt-image-1.5", "gpt-image-1.5-2025-12-16", "gpt-image-1-mini", "chatgpt-image-latest"} {
			code, _, a := call(t, srv, "POST", "/v1/images/generations", "k", `{"model":"`+m+`","prompt":"x"}`)
			getCode, _, _ := call(t, srv, "GET", "/v1/models/"+m, "k", "")
			switch {
			case tt.served && (code != 200 || getCode != 200):
				t.Errorf("%s on %s: generate %d, get %d, want 200 before its shutdown", m, now, code, getCode)
			case !tt.served && (code != 404 || a.code() != codeModelNotFound || a.param() != "model" || getCode != 404):
				t.Errorf("%s on %s: generate %d %+v, get %d, want 404 model_not_found", m, now, code, a.Error, getCode)
			}
		}
		if tt.served {
			// Before its shutdown it keeps its own rules: 1536x864 is a
			// size of the gpt-image-2 models only.
			if code, _, a := call(t, srv, "POST", "/v1/images/generations", "k", `{"model":"gpt-image-1.5","prompt":"x","size":"1536x864"}`); code != 400 || a.param() != "size" {
				t.Errorf("a gpt-image-2 size on gpt-image-1.5: %d %+v", code, a.Error)
			}
		}
		req, _ := http.NewRequest("GET", srv.URL+"/v1/models", nil)
		req.Header.Set("Authorization", "Bearer k")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var list struct {
			Data []struct {
				ID       string  `json:"id"`
				Shutdown *string `json:"shutdown_date"`
			} `json:"data"`
		}
		json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		dates := map[string]*string{}
		for _, d := range list.Data {
			dates[d.ID] = d.Shutdown
		}
		if d := dates["gpt-image-1.5"]; d == nil || *d != "2026-12-01" {
			t.Errorf("gpt-image-1.5 listed with shutdown_date %v, want 2026-12-01", d)
		}
		if d, ok := dates["gpt-image-2"]; !ok || d != nil {
			t.Errorf("gpt-image-2 listed %v with shutdown_date %v, want null", ok, d)
		}
		want := 4
		if !tt.served {
			want = 0
		}
		if got := len(sim.Jobs().Jobs); got != want {
			t.Errorf("on %s: %d jobs, want %d (a retired model makes nothing)", now, got, want)
		}
	}
}
