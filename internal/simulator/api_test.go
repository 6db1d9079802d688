package simulator

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/schema"
	"github.com/genform/genform/internal/simulator/simkit"
)

const (
	pathT2I = "/v1/jobs/text2image"
	pathI2V = "/v1/jobs/gen2/image2video"
	pathAFC = "/v1/jobs/gen2/afc"
	pathT2V = "/v1/jobs/gen2/text2video"
)

// pngDataURI is a real one-pixel PNG as a data URI.
const pngDataURI = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYPj/HwADAgH/eL9GtQAAAABJRU5ErkJggg=="

func TestCreateEachEndpoint(t *testing.T) {
	tests := []struct {
		name          string
		endpoint      string
		body          string
		typ, input    string
		output        string
		outputs       int
		width, height int
		fps           int
		contentType   string
	}{
		{
			name: "text2image defaults", endpoint: pathT2I,
			body: `{"prompt":"a lighthouse at dusk"}`,
			typ:  "text2image", input: "text", output: "image", outputs: 4, width: 1280, height: 720, contentType: "image/png",
		},
		{
			name: "text2image two square images at 1080", endpoint: pathT2I,
			body: `{"prompt":"a red fox","negative_prompt":"blurry","is_public":false,"config":{"image_number":2},"settings":{"seed":42,"aspect_ratio":"1:1","resolution":1080}}`,
			typ:  "text2image", input: "text", output: "image", outputs: 2, width: 1080, height: 1080, contentType: "image/png",
		},
		{
			name: "image2video from a URL", endpoint: pathI2V,
			body: `{"prompt":"slow dolly in","config":{"source_image":"https://example.com/a.png"},"gen_mode":"enhanced","settings":{"seed":3,"duration":2}}`,
			typ:  "image2video", input: "image", output: "video", outputs: 1, width: 426, height: 240, fps: 8, contentType: "image/gif",
		},
		{
			name: "image2video from a data URI", endpoint: pathI2V,
			body: `{"config":{"source_image":"` + pngDataURI + `"}}`,
			typ:  "image2video", input: "image", output: "video", outputs: 1, width: 426, height: 240, fps: 8, contentType: "image/gif",
		},
		{
			name: "afc portrait inputs", endpoint: pathAFC,
			body: `{"config":{"source_images":["https://example.com/a.png","` + pngDataURI + `"],"frame_indices":[0,31],"input_width":720,"input_height":1280}}`,
			typ:  "afc", input: "keyframes", output: "video", outputs: 1, width: 240, height: 426, fps: 8, contentType: "image/gif",
		},
		{
			name: "text2video vertical", endpoint: pathT2V,
			body: `{"prompt":"title card, ACME","gen_mode":"smooth","settings":{"aspect_ratio":"9:16","duration":2}}`,
			typ:  "text2video", input: "text", output: "video", outputs: 1, width: 240, height: 426, fps: 8, contentType: "image/gif",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, Options{})
			id := h.create(tt.endpoint, tt.body)
			h.finish()
			if st, p := h.status(id); st != statusSucceed || p != 1 {
				t.Fatalf("status = %s %v, want succeed 1", st, p)
			}
			d := h.detail(id)
			if d.CreationID != id || d.Type != tt.typ || d.InputType != tt.input || d.OutputType != tt.output || d.Status != statusSucceed {
				t.Errorf("detail = %+v, want id %s type %s input %s output %s succeed", d, id, tt.typ, tt.input, tt.output)
			}
			if d.Settings.Width != tt.width || d.Settings.Height != tt.height || d.Settings.FPS != tt.fps {
				t.Errorf("settings = %+v, want %dx%d at %d fps", d.Settings, tt.width, tt.height, tt.fps)
			}
			if len(d.Outputs) != tt.outputs {
				t.Fatalf("%d outputs, want %d", len(d.Outputs), tt.outputs)
			}
			for _, ts := range []string{d.CreateTime, d.UpdateTime} {
				if pt, err := time.Parse(time.RFC3339, ts); err != nil || pt.Location() != time.UTC {
					t.Errorf("timestamp %q is not RFC 3339 UTC", ts)
				}
			}
			if d.UserID == "" || d.Username == "" || d.Avatar == "" {
				t.Errorf("user fields empty: %+v", d)
			}
			h.download(d.Avatar, "image/png")
			if tt.output == "video" {
				if d.VideoURL == "" || d.VideoURL != d.Outputs[0].MediaURL {
					t.Errorf("video_url %q, outputs[0].media_url %q: want equal and set", d.VideoURL, d.Outputs[0].MediaURL)
				}
			} else if d.VideoURL != "" {
				t.Errorf("image creation has video_url %q", d.VideoURL)
			}
			seen := map[string]bool{}
			for _, o := range d.Outputs {
				if !strings.HasPrefix(o.MediaURL, h.srv.URL+"/media/") {
					t.Errorf("media URL %q is not absolute on %s", o.MediaURL, h.srv.URL)
				}
				if seen[o.ID] {
					t.Errorf("output id %q repeated", o.ID)
				}
				seen[o.ID] = true
				h.download(o.MediaURL, tt.contentType)
				h.download(o.ThumbnailURL, "image/png")
			}
		})
	}
}

func TestDetailBeforeSucceed(t *testing.T) {
	h := newHarness(t, Options{})
	id := h.create(pathT2V, `{"prompt":"waves"}`)
	h.clock.Advance(5 * time.Second)
	r := h.do("GET", "/v1/creation/"+id, nil)
	v := r.value(t)
	if v["status"] != statusProcessing {
		t.Errorf("status %v, want processing", v["status"])
	}
	if outs, ok := v["outputs"].([]any); !ok || len(outs) != 0 {
		t.Errorf("outputs = %v, want an empty array", v["outputs"])
	}
	if v["video_url"] != "" {
		t.Errorf("video_url = %v before succeed", v["video_url"])
	}
	if r := h.doAs("", "GET", "/media/"+id+"/"+assetVideo, nil); r.status != http.StatusNotFound {
		t.Errorf("media of an unfinished job: status %d, want 404", r.status)
	}
}

func TestValidationErrors(t *testing.T) {
	long := strings.Repeat("x", schema.MaxPromptRunes+1)
	img := `"https://example.com/a.png"`
	tests := []struct {
		name     string
		endpoint string
		body     string
		code     any
		message  string // a part of the message
	}{
		{"not JSON", pathT2I, `{"prompt":`, codeMalformed, "not valid JSON"},
		{"not an object", pathT2I, `["prompt"]`, codeMalformed, "JSON object"},
		{"two values", pathT2I, `{"prompt":"a"} {}`, codeMalformed, "more than one"},
		{"prompt missing", pathT2I, `{}`, codeMissingField, "prompt is required"},
		{"prompt empty", pathT2I, `{"prompt":"  "}`, codeMissingField, "prompt is required"},
		{"prompt null", pathT2I, `{"prompt":null}`, codeMissingField, "prompt is required"},
		{"prompt number", pathT2I, `{"prompt":5}`, codeInvalidField, "prompt must be a string"},
		{"prompt too long", pathT2I, `{"prompt":"` + long + `"}`, codePromptTooLong, "at most 2048"},
		{"negative prompt too long", pathT2I, `{"prompt":"a","negative_prompt":"` + long + `"}`, codePromptTooLong, "negative_prompt"},
		{"policy marker", pathT2I, `{"prompt":"a [policy] b"}`, "VB-100017", "usage policy"},
		{"negative prompt number", pathT2I, `{"prompt":"a","negative_prompt":1}`, codeInvalidField, "negative_prompt must be a string"},
		{"is_public string", pathT2I, `{"prompt":"a","is_public":"yes"}`, codeInvalidField, "is_public must be true or false"},
		{"config not object", pathT2I, `{"prompt":"a","config":4}`, codeInvalidField, "config must be an object"},
		{"image_number 0", pathT2I, `{"prompt":"a","config":{"image_number":0}}`, codeInvalidField, "config.image_number must be 1, 2, 3 or 4"},
		{"image_number 5", pathT2I, `{"prompt":"a","config":{"image_number":5}}`, codeInvalidField, "config.image_number"},
		{"image_number fraction", pathT2I, `{"prompt":"a","config":{"image_number":2.5}}`, codeInvalidField, "whole number"},
		{"image_number string", pathT2I, `{"prompt":"a","config":{"image_number":"2"}}`, codeInvalidField, "config.image_number must be a number"},
		{"seed below -1", pathT2I, `{"prompt":"a","settings":{"seed":-2}}`, codeInvalidField, "settings.seed"},
		{"seed too big", pathT2I, `{"prompt":"a","settings":{"seed":4294967296}}`, codeInvalidField, "settings.seed"},
		{"seed fraction", pathT2I, `{"prompt":"a","settings":{"seed":1.5}}`, codeInvalidField, "whole number"},
		{"aspect ratio unknown", pathT2I, `{"prompt":"a","settings":{"aspect_ratio":"2:1"}}`, codeInvalidField, `settings.aspect_ratio must be "21:9", "16:9", "9:16", "3:4", "4:3" or "1:1", got "2:1"`},
		{"aspect ratio number", pathT2I, `{"prompt":"a","settings":{"aspect_ratio":16}}`, codeInvalidField, "must be a string"},
		{"resolution 480", pathT2I, `{"prompt":"a","settings":{"resolution":480}}`, codeInvalidField, "720 or 1080"},
		{"settings not object", pathT2I, `{"prompt":"a","settings":[]}`, codeInvalidField, "settings must be an object"},
		{"i2v config missing", pathI2V, `{"prompt":"a"}`, codeMissingField, "config.source_image is required"},
		{"i2v source not a URL", pathI2V, `{"config":{"source_image":"a.png"}}`, codeInvalidField, "http(s) URL"},
		{"i2v ftp URL", pathI2V, `{"config":{"source_image":"ftp://example.com/a.png"}}`, codeInvalidField, "http(s) URL"},
		{"i2v data URI not an image", pathI2V, `{"config":{"source_image":"data:text/plain;base64,aGk="}}`, codeInvalidField, "data:image"},
		{"i2v data URI bad base64", pathI2V, `{"config":{"source_image":"data:image/png;base64,!!!"}}`, codeInvalidField, "base64"},
		{"i2v URL with a space", pathI2V, `{"config":{"source_image":"https://example.com/a b.png"}}`, codeInvalidField, "percent-encoded"},
		{"i2v source image too long", pathI2V, `{"config":{"source_image":"data:image/png;base64,` + strings.Repeat("A", schema.MaxSourceImageBytes) + `"}}`, codeInvalidField, "at most 10485760 bytes (10 MiB) long"},
		{"i2v data URI empty", pathI2V, `{"config":{"source_image":"data:image/png;base64,"}}`, codeInvalidField, "empty"},
		{"i2v gen_mode standard", pathI2V, `{"config":{"source_image":` + img + `},"gen_mode":"standard"}`, codeInvalidField, `gen_mode must be "smooth" or "enhanced", got "standard"`},
		{"i2v duration 5", pathI2V, `{"config":{"source_image":` + img + `},"settings":{"duration":5}}`, codeInvalidField, "2, 4, 6 or 8"},
		{"i2v duration string", pathI2V, `{"config":{"source_image":` + img + `},"settings":{"duration":"4"}}`, codeInvalidField, "settings.duration must be a number"},
		{"i2v enhancer string", pathI2V, `{"config":{"source_image":` + img + `},"is_enable_prompt_enhancer":"no"}`, codeInvalidField, "is_enable_prompt_enhancer"},
		{"afc no images", pathAFC, `{"config":{"frame_indices":[0,1]}}`, codeMissingField, "config.source_images is required"},
		{"afc one image", pathAFC, `{"config":{"source_images":[` + img + `],"frame_indices":[0]}}`, codeInvalidField, "2 to 6"},
		{"afc seven images", pathAFC, `{"config":{"source_images":[` + strings.Repeat(img+",", 6) + img + `],"frame_indices":[0,1,2,3,4,5,6]}}`, codeInvalidField, "2 to 6"},
		{"afc image not string", pathAFC, `{"config":{"source_images":[` + img + `,7],"frame_indices":[0,1]}}`, codeInvalidField, "config.source_images[1] must be a string"},
		{"afc bad image", pathAFC, `{"config":{"source_images":[` + img + `,"nope"],"frame_indices":[0,1]}}`, codeInvalidField, "config.source_images[1]"},
		{"afc no indices", pathAFC, `{"config":{"source_images":[` + img + `,` + img + `]}}`, codeMissingField, "config.frame_indices is required"},
		{"afc length mismatch", pathAFC, `{"config":{"source_images":[` + img + `,` + img + `],"frame_indices":[0]}}`, codeInvalidField, "config.frame_indices must have one entry per source image (2 of them), not 1"},
		{"afc not increasing", pathAFC, `{"config":{"source_images":[` + img + `,` + img + `],"frame_indices":[5,5]}}`, codeInvalidField, "strictly increasing"},
		{"afc negative index", pathAFC, `{"config":{"source_images":[` + img + `,` + img + `],"frame_indices":[-1,3]}}`, codeInvalidField, "0 to 31"},
		{"afc index past 4s", pathAFC, `{"config":{"source_images":[` + img + `,` + img + `],"frame_indices":[0,32]}}`, codeInvalidField, "0 to 31"},
		{"afc index past 2s", pathAFC, `{"config":{"source_images":[` + img + `,` + img + `],"frame_indices":[0,16]},"settings":{"duration":2}}`, codeInvalidField, "0 to 15"},
		{"afc index fraction", pathAFC, `{"config":{"source_images":[` + img + `,` + img + `],"frame_indices":[0,1.5]}}`, codeInvalidField, "whole number"},
		{"afc duration 5", pathAFC, `{"config":{"source_images":[` + img + `,` + img + `],"frame_indices":[0,1]},"settings":{"duration":5}}`, codeInvalidField, "settings.duration must be 2, 4, 6 or 8 (seconds), got 5"},
		{"afc width 8193", pathAFC, `{"config":{"source_images":[` + img + `,` + img + `],"frame_indices":[0,1],"input_width":8193}}`, codeInvalidField, "config.input_width must be a pixel size from 1 to 8192, got 8193"},
		{"afc width zero", pathAFC, `{"config":{"source_images":[` + img + `,` + img + `],"frame_indices":[0,1],"input_width":0}}`, codeInvalidField, "config.input_width"},
		{"afc height string", pathAFC, `{"config":{"source_images":[` + img + `,` + img + `],"frame_indices":[0,1],"input_height":"720"}}`, codeInvalidField, "config.input_height must be a number"},
		{"t2v prompt missing", pathT2V, `{"gen_mode":"standard"}`, codeMissingField, "prompt is required"},
		{"t2v gen_mode unknown", pathT2V, `{"prompt":"a","gen_mode":"fast"}`, codeInvalidField, `gen_mode must be "standard", "smooth" or "enhanced", got "fast"`},
		{"t2v aspect ratio unknown", pathT2V, `{"prompt":"a","settings":{"aspect_ratio":"5:4"}}`, codeInvalidField, "settings.aspect_ratio"},
		{"t2v duration 10", pathT2V, `{"prompt":"a","settings":{"duration":10}}`, codeInvalidField, "2, 4, 6 or 8"},
		{"t2v policy marker", pathT2V, `{"prompt":"[policy]"}`, "VB-100017", "usage policy"},
	}
	h := newHarness(t, Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.do("POST", tt.endpoint, tt.body)
			if r.status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", r.status, r.body)
			}
			if code := r.errorCode(t); code != tt.code {
				t.Errorf("code %v, want %v", code, tt.code)
			}
			if msg := r.errorMessage(t); !strings.Contains(msg, tt.message) {
				t.Errorf("message %q does not mention %q", msg, tt.message)
			}
		})
	}
	t.Run("content type", func(t *testing.T) {
		req, _ := http.NewRequest("POST", h.srv.URL+pathT2I, strings.NewReader(`{"prompt":"a"}`))
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Type", "text/plain")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("text/plain body: status %d, want 400", resp.StatusCode)
		}
	})
	if n := len(h.sim.Jobs().Jobs); n != 0 {
		t.Errorf("refused requests created %d jobs", n)
	}
}

// TestValidBoundaries checks the edges of each range are accepted, so the
// refusals above are refusals of the values and not of the fields.
func TestValidBoundaries(t *testing.T) {
	img := `"http://example.com/a.png"`
	bodies := []struct{ endpoint, body string }{
		{pathT2I, `{"prompt":"` + strings.Repeat("é", schema.MaxPromptRunes) + `"}`},
		{pathT2I, `{"prompt":"a","config":{"image_number":1.0},"settings":{"seed":4294967295,"resolution":1080,"aspect_ratio":"21:9"}}`},
		{pathT2I, `{"prompt":"a","settings":{"seed":0},"unknown":{"x":1}}`},
		{pathT2I, `{"prompt":"a","settings":null,"config":null}`},
		{pathI2V, `{"config":{"source_image":` + img + `},"settings":{"duration":8,"seed":-1}}`},
		{pathAFC, `{"config":{"source_images":[` + strings.Repeat(img+",", 5) + img + `],"frame_indices":[0,1,2,3,4,63]},"settings":{"duration":8}}`},
		{pathAFC, `{"config":{"source_images":[` + img + `,` + img + `],"frame_indices":[0,1]},"prompt":"x"}`},
		{pathAFC, `{"config":{"source_images":[` + img + `,"data:image/svg+xml;base64,PHN2Zy8+"],"frame_indices":[0,31],"input_width":1,"input_height":8192}}`},
		{pathI2V, `{"config":{"source_image":"data:image/png;base64,` + strings.Repeat("A", (schema.MaxSourceImageBytes-len("data:image/png;base64,"))/4*4) + `"}}`},
		{pathT2V, `{"prompt":"a","settings":{"duration":6,"aspect_ratio":"4:3"}}`},
	}
	h := newHarness(t, Options{})
	for i, b := range bodies {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			h.create(b.endpoint, b.body)
		})
	}
}

func TestAuthentication(t *testing.T) {
	t.Run("fixed token", func(t *testing.T) {
		h := newHarness(t, Options{Token: "s3cret"})
		for _, tt := range []struct {
			name, header string
			want         int
		}{
			{"missing", "", http.StatusUnauthorized},
			{"wrong", "Bearer other", http.StatusUnauthorized},
			{"basic scheme", "Basic czNjcmV0", http.StatusUnauthorized},
			{"empty bearer", "Bearer ", http.StatusUnauthorized},
			{"right", "Bearer s3cret", http.StatusOK},
			{"scheme case", "bearer s3cret", http.StatusOK},
		} {
			t.Run(tt.name, func(t *testing.T) {
				req, _ := http.NewRequest("POST", h.srv.URL+pathT2I, strings.NewReader(`{"prompt":"a"}`))
				req.Header.Set("Content-Type", "application/json")
				if tt.header != "" {
					req.Header.Set("Authorization", tt.header)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Fatal(err)
				}
				r := response{status: resp.StatusCode, header: resp.Header, body: body}
				if r.status != tt.want {
					t.Fatalf("status %d, want %d: %s", r.status, tt.want, r.body)
				}
				if tt.want == http.StatusUnauthorized {
					if code := r.errorCode(t); code != codeUnauthorized {
						t.Errorf("code %v, want %s", code, codeUnauthorized)
					}
					if strings.Contains(string(r.body), "s3cret") {
						t.Errorf("401 answer leaks the token: %s", r.body)
					}
				}
			})
		}
		if n := len(h.sim.Jobs().Jobs); n != 2 {
			t.Errorf("%d jobs, want 2 (only the authenticated creates)", n)
		}
	})
	t.Run("any token, one user each", func(t *testing.T) {
		h := newHarness(t, Options{})
		id := h.create(pathT2I, `{"prompt":"a"}`)
		r := h.doAs("someone-else", "GET", "/v1/jobs/"+id+"/status", nil)
		if r.status != http.StatusNotFound || r.errorCode(t) != codeNoGeneration {
			t.Errorf("another token's job: status %d %s, want 404 %s", r.status, r.body, codeNoGeneration)
		}
		if r := h.doAs("", "GET", "/v1/jobs/"+id+"/status", nil); r.status != http.StatusUnauthorized {
			t.Errorf("no token: status %d, want 401", r.status)
		}
	})
}

func TestUnknownCreation(t *testing.T) {
	h := newHarness(t, Options{})
	for _, req := range []struct{ method, path string }{
		{"GET", "/v1/jobs/nope/status"},
		{"GET", "/v1/creation/nope"},
		{"POST", "/v1/creation/nope/watermark-free-url"},
	} {
		r := h.do(req.method, req.path, nil)
		if r.status != http.StatusNotFound || r.errorCode(t) != codeNoGeneration {
			t.Errorf("%s %s: %d %s, want 404 %s", req.method, req.path, r.status, r.body, codeNoGeneration)
		}
	}
	if r := h.do("GET", "/v1/jobs/text2image", nil); r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "POST" {
		t.Errorf("GET on a create endpoint: %d, Allow %q; want 405, POST", r.status, r.header.Get("Allow"))
	}
	if r := h.do("GET", "/v1/elsewhere", nil); r.status != http.StatusNotFound || r.errorCode(t) != codeNotFound {
		t.Errorf("unknown path: %d %s", r.status, r.body)
	}
}

func TestLifecycle(t *testing.T) {
	h := newHarness(t, Options{Latency: 20 * time.Second})
	id := h.create(pathT2I, `{"prompt":"a"}`)
	steps := []struct {
		at     time.Duration // since creation
		status string
	}{
		{0, statusPending},
		{1 * time.Second, statusPending},
		{3 * time.Second, statusProcessing},
		{8 * time.Second, statusProcessing},
		{16 * time.Second, statusProcessing},
		{18 * time.Second, statusPostProcessing},
		{20 * time.Second, statusSucceed},
		{time.Hour, statusSucceed},
	}
	var elapsed time.Duration
	last := -1.0
	for _, s := range steps {
		h.clock.Advance(s.at - elapsed)
		elapsed = s.at
		st, p := h.status(id)
		if st != s.status {
			t.Errorf("at %s: status %s, want %s", s.at, st, s.status)
		}
		if p < 0 || p > 1 || p < last {
			t.Errorf("at %s: progress %v after %v; want 0..1 and never falling", s.at, p, last)
		}
		if st == statusProcessing && (p <= 0 || p >= 1) {
			t.Errorf("at %s: processing progress %v, want strictly between 0 and 1", s.at, p)
		}
		last = p
	}
	if got := h.sim.Jobs().Jobs[0].StatusRequests; got != len(steps) {
		t.Errorf("status_requests = %d, want %d", got, len(steps))
	}
}

func TestFailMarker(t *testing.T) {
	h := newHarness(t, Options{})
	id := h.create(pathT2V, `{"prompt":"a storm [fail]"}`)
	h.clock.Advance(5 * time.Second)
	if st, _ := h.status(id); st != statusProcessing {
		t.Errorf("while running: %s, want processing", st)
	}
	h.finish()
	if st, _ := h.status(id); st != statusFailed {
		t.Fatalf("status %s, want failed", st)
	}
	d := h.detail(id)
	if d.Status != statusFailed || len(d.Outputs) != 0 || d.VideoURL != "" {
		t.Errorf("failed detail = %+v, want status failed and no outputs", d)
	}
	if r := h.doAs("", "GET", "/media/"+id+"/"+assetVideo, nil); r.status != http.StatusNotFound {
		t.Errorf("media of a failed job: status %d, want 404", r.status)
	}
	if r := h.do("POST", "/v1/creation/"+id+"/watermark-free-url", nil); r.status != http.StatusBadRequest {
		t.Errorf("watermark-free URL of a failed job: status %d, want 400", r.status)
	}
}

func TestFailRate(t *testing.T) {
	const jobs = 60
	failures := func(rate float64, seed int64) map[int]bool {
		h := newHarness(t, Options{FailRate: rate, Seed: seed, MaxConcurrent: -1})
		ids := make([]string, jobs)
		for i := range ids {
			ids[i] = h.create(pathT2I, fmt.Sprintf(`{"prompt":"picture %d"}`, i))
		}
		h.finish()
		failed := map[int]bool{}
		for i, id := range ids {
			switch st, _ := h.status(id); st {
			case statusFailed:
				failed[i] = true
			case statusSucceed:
			default:
				t.Fatalf("job %d: status %s after the latency", i, st)
			}
		}
		return failed
	}
	if f := failures(0, 1); len(f) != 0 {
		t.Errorf("fail rate 0: %d failed", len(f))
	}
	if f := failures(1, 1); len(f) != jobs {
		t.Errorf("fail rate 1: %d of %d failed", len(f), jobs)
	}
	half := failures(0.5, 7)
	if n := len(half); n < jobs/5 || n > jobs*4/5 {
		t.Errorf("fail rate 0.5: %d of %d failed", n, jobs)
	}
	again := failures(0.5, 7)
	if fmt.Sprint(half) != fmt.Sprint(again) {
		t.Errorf("same seed, different failures:\n%v\n%v", half, again)
	}
	if other := failures(0.5, 8); fmt.Sprint(half) == fmt.Sprint(other) {
		t.Errorf("seeds 7 and 8 failed the same jobs: %v", half)
	}
}

func TestMaxConcurrent(t *testing.T) {
	h := newHarness(t, Options{MaxConcurrent: 2, Latency: 30 * time.Second})
	h.create(pathT2I, `{"prompt":"one"}`)
	h.clock.Advance(10 * time.Second)
	h.create(pathT2I, `{"prompt":"two"}`)
	r := h.do("POST", pathT2I, `{"prompt":"three"}`)
	if r.status != http.StatusTooManyRequests || r.errorCode(t) != codeMaxConcurrent {
		t.Fatalf("third job: %d %s, want 429 %s", r.status, r.body, codeMaxConcurrent)
	}
	// The first job finishes 20s from now: that is when a slot frees up.
	if ra := r.header.Get("Retry-After"); ra != "20" {
		t.Errorf("Retry-After %q, want 20", ra)
	}
	if h.doAs("other-user", "POST", pathT2I, `{"prompt":"three"}`).status != http.StatusOK {
		t.Errorf("another token was throttled by this token's jobs")
	}
	h.clock.Advance(20 * time.Second)
	h.create(pathT2I, `{"prompt":"three"}`)
	rep := h.sim.Jobs()
	if len(rep.Jobs) != 4 || rep.Throttled != 1 {
		t.Errorf("report: %d jobs, %d throttled; want 4 and 1", len(rep.Jobs), rep.Throttled)
	}
}

func TestRequestsPerMinute(t *testing.T) {
	h := newHarness(t, Options{RPM: 3})
	id := h.create(pathT2I, `{"prompt":"a"}`)
	h.clock.Advance(15 * time.Second)
	h.status(id)
	h.status(id)
	r := h.do("GET", "/v1/jobs/"+id+"/status", nil)
	if r.status != http.StatusTooManyRequests || r.errorCode(t) != codeMaxRequests {
		t.Fatalf("fourth request: %d %s, want 429 %s", r.status, r.body, codeMaxRequests)
	}
	// The first request leaves the window 45s from now.
	if ra := r.header.Get("Retry-After"); ra != "45" {
		t.Errorf("Retry-After %q, want 45", ra)
	}
	if h.doAs("other-user", "GET", "/v1/jobs/"+id+"/status", nil).status == http.StatusTooManyRequests {
		t.Errorf("another token shares this token's budget")
	}
	// Media downloads are outside the budget.
	h.finish()
	if r := h.doAs("", "GET", "/media/"+id+"/"+imageAsset(0), nil); r.status != http.StatusOK {
		t.Errorf("media download while throttled: %d", r.status)
	}
	h.clock.Advance(45 * time.Second)
	if st, _ := h.status(id); st != statusSucceed {
		t.Errorf("after the window: %s", st)
	}
	if rep := h.sim.Jobs(); rep.Throttled != 1 || rep.Requests != 6 {
		t.Errorf("report: %d throttled, %d requests; want 1 and 6", rep.Throttled, rep.Requests)
	}
}

func TestErrorRate(t *testing.T) {
	t.Run("every request", func(t *testing.T) {
		h := newHarness(t, Options{ErrorRate: 1})
		r := h.do("POST", pathT2I, `{"prompt":"a"}`)
		if r.status != http.StatusInternalServerError || r.errorCode(t) != codeServiceError {
			t.Fatalf("create: %d %s, want 500 %s", r.status, r.body, codeServiceError)
		}
		if rep := h.sim.Jobs(); len(rep.Jobs) != 0 || len(rep.Creates) != 0 {
			t.Errorf("a create answered 500 made a job: %+v", rep)
		}
	})
	t.Run("a fraction, repeatably", func(t *testing.T) {
		run := func() []int {
			h := newHarness(t, Options{ErrorRate: 0.3, Seed: 5, MaxConcurrent: -1})
			var statuses []int
			ok := 0
			for i := range 40 {
				r := h.do("POST", pathT2I, fmt.Sprintf(`{"prompt":"p%d"}`, i))
				statuses = append(statuses, r.status)
				if r.status == http.StatusOK {
					ok++
				}
			}
			if n := len(h.sim.Jobs().Jobs); n != ok {
				t.Errorf("%d jobs for %d successful creates", n, ok)
			}
			if ok == 0 || ok == 40 {
				t.Errorf("error rate 0.3 failed %d of 40", 40-ok)
			}
			return statuses
		}
		if a, b := run(), run(); fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("same seed, different faults:\n%v\n%v", a, b)
		}
	})
}

func TestJobsReport(t *testing.T) {
	h := newHarness(t, Options{})
	body := `{"prompt":"a cat","config":{"image_number":2},"settings":{"seed":4}}`
	respelled := `{ "settings": {"seed": 4.0}, "config": {"image_number": 2e0}, "prompt": "a cat" }`
	a := h.create(pathT2I, body)
	b := h.create(pathT2I, respelled)
	c := h.create(pathT2V, `{"prompt":"a cat"}`)
	h.status(a)

	// GET /_sim/jobs needs no token.
	r := h.doAs("", "GET", "/_sim/jobs", nil)
	if r.status != http.StatusOK {
		t.Fatalf("/_sim/jobs: %d %s", r.status, r.body)
	}
	var rep JobsReport
	if err := json.Unmarshal(r.body, &rep); err != nil {
		t.Fatal(err)
	}
	fp := sha256Hex(pathT2I + "\n" + `{"config":{"image_number":2},"prompt":"a cat","settings":{"seed":4}}`)
	if rep.Creates[fp] != 2 {
		t.Errorf("creates[%s] = %d, want 2 (both spellings of one request); all: %v", fp, rep.Creates[fp], rep.Creates)
	}
	if len(rep.Creates) != 2 {
		t.Errorf("creates has %d fingerprints, want 2: %v", len(rep.Creates), rep.Creates)
	}
	if len(rep.Jobs) != 3 {
		t.Fatalf("%d jobs, want 3", len(rep.Jobs))
	}
	byID := map[string]JobInfo{}
	for _, j := range rep.Jobs {
		byID[j.ID] = j
	}
	if j := byID[a]; j.Endpoint != pathT2I || string(j.Body) != body || j.Fingerprint != fp || j.StatusRequests != 1 || j.Seed != 4 || j.Status != statusPending {
		t.Errorf("job a = %+v", j)
	}
	if byID[b].Fingerprint != fp || byID[c].Endpoint != pathT2V || byID[c].Seed < 0 {
		t.Errorf("jobs b, c = %+v, %+v", byID[b], byID[c])
	}
	if rep.Requests != 4 {
		t.Errorf("requests = %d, want 4", rep.Requests)
	}
}

func TestFingerprintCanonical(t *testing.T) {
	tests := []struct{ body, canonical string }{
		{`{"b":1,"a":[1.0,2e0,-0]}`, `{"a":[1,2,0],"b":1}`},
		{`{"s":"<a&b>","n":0.5,"big":1e21}`, `{"big":1e+21,"n":0.5,"s":"<a&b>"}`},
		{`{"x":{"z":null,"y":true}}`, `{"x":{"y":true,"z":null}}`},
	}
	for _, tt := range tests {
		got, err := simkit.Fingerprint("/e", []byte(tt.body))
		if err != nil {
			t.Fatal(err)
		}
		if want := sha256Hex("/e\n" + tt.canonical); got != want {
			t.Errorf("fingerprint(%s) is not that of %s", tt.body, tt.canonical)
		}
	}
}

func TestListen(t *testing.T) {
	inst, err := Listen("127.0.0.1:0", Options{Latency: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", inst.URL+pathT2I, strings.NewReader(`{"prompt":"a","config":{"image_number":1}}`))
	req.Header.Set("Authorization", "Bearer x")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(inst.Server.Jobs().Jobs) != 1 {
		t.Errorf("create through Listen: %d", resp.StatusCode)
	}
	if err := inst.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(inst.URL + "/_sim/jobs"); err == nil {
		t.Errorf("still answering after Close")
	}
	if err := inst.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestNewRejectsBadRates(t *testing.T) {
	for _, o := range []Options{{FailRate: -0.1}, {ErrorRate: 1.5}, {TruncateRate: 2}} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted a rate outside 0..1", o)
		}
	}
}
