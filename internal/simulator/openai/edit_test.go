package openai

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"testing"

	"github.com/genform/genform/internal/simulator/simkit"
)

// part is a field of an edit's form: a text value, or a file.
type part struct {
	name, value string
	file        []byte
}

// editForm posts parts as a multipart form to /v1/images/edits.
func postEdit(t *testing.T, srv *httptest.Server, parts ...part) (int, answer) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for i, p := range parts {
		if p.file == nil {
			mw.WriteField(p.name, p.value)
			continue
		}
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="`+p.name+`"; filename="f`+string(rune('0'+i))+`.png"`)
		h.Set("Content-Type", http.DetectContentType(p.file))
		w, _ := mw.CreatePart(h)
		w.Write(p.file)
	}
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/images/edits", &buf)
	req.Header.Set("Authorization", "Bearer k")
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var a answer
	json.NewDecoder(resp.Body).Decode(&a)
	return resp.StatusCode, a
}

func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	img.Set(0, 0, color.NRGBA{R: 200, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// An edit is a multipart form: its images as "image" or "image[]" files
// (PNG, JPEG or WebP), its other parameters as text, checked as the
// reference documents them; it is answered as a generation is, inline,
// and its job keeps the form as JSON with each file's sha256.
func TestEdits(t *testing.T) {
	sim, srv := start(t, simkit.Options{})
	src := pngOf(t, 64, 64)
	code, a := postEdit(t, srv,
		part{name: "model", value: "gpt-image-2"}, part{name: "prompt", value: "add a boat"},
		part{name: "n", value: "2"}, part{name: "size", value: "1024x1536"},
		part{name: "image[]", file: src}, part{name: "image[]", file: pngOf(t, 32, 32)})
	if code != 200 || len(a.Data) != 2 || a.Size != "1024x1536" {
		t.Fatalf("an edit of two images: %d %+v", code, a)
	}
	b, _ := base64.StdEncoding.DecodeString(a.Data[0]["b64_json"].(string))
	if cfg, err := png.DecodeConfig(bytes.NewReader(b)); err != nil || cfg.Width != 1024 || cfg.Height != 1536 {
		t.Errorf("the edited image: %v %+v", err, cfg)
	}
	jobs := sim.Jobs().Jobs
	if len(jobs) != 1 || jobs[0].Endpoint != "/v1/images/edits" || !strings.Contains(string(jobs[0].Body), `"image":["sha256:`) || !strings.Contains(string(jobs[0].Body), `"prompt":"add a boat"`) {
		t.Fatalf("the job %+v: want the form as JSON with each image's sha256", jobs)
	}
	if code, a := postEdit(t, srv, part{name: "model", value: "gpt-image-2"}, part{name: "prompt", value: "one"}, part{name: "image", file: src}); code != 200 || len(a.Data) != 1 {
		t.Errorf("an edit of one image: %d %+v", code, a)
	}

	gif := []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;")
	for _, tc := range []struct {
		what  string
		parts []part
		code  int
		words string
	}{
		{"no image", []part{{name: "model", value: "gpt-image-2"}, {name: "prompt", value: "p"}}, 400, "'image'"},
		{"a GIF", []part{{name: "model", value: "gpt-image-2"}, {name: "prompt", value: "p"}, {name: "image", file: gif}}, 400, "unsupported mimetype"},
		{"no prompt", []part{{name: "model", value: "gpt-image-2"}, {name: "image", file: src}}, 400, "'prompt'"},
		{"an unknown parameter", []part{{name: "model", value: "gpt-image-2"}, {name: "prompt", value: "p"}, {name: "moderation", value: "low"}, {name: "image", file: src}}, 400, "Unknown parameter"},
		{"n of 11", []part{{name: "model", value: "gpt-image-2"}, {name: "prompt", value: "p"}, {name: "n", value: "11"}, {name: "image", file: src}}, 400, "'n'"},
		{"a mask of another size", []part{{name: "model", value: "gpt-image-2"}, {name: "prompt", value: "p"}, {name: "image", file: src}, {name: "mask", file: pngOf(t, 8, 8)}}, 400, "'mask'"},
		{"refused content", []part{{name: "model", value: "gpt-image-2"}, {name: "prompt", value: "p " + simkit.RefuseMarker}, {name: "image", file: src}}, 400, "safety system"},
	} {
		code, a := postEdit(t, srv, tc.parts...)
		if code != tc.code || a.Error == nil || !strings.Contains(a.Error.Message, tc.words) {
			t.Errorf("%s: %d %+v, want %d saying %q", tc.what, code, a.Error, tc.code, tc.words)
		}
	}
	if n := len(sim.Jobs().Jobs); n != 2 {
		t.Errorf("%d jobs: refused edits made some", n)
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/images/edits", strings.NewReader(`{"prompt":"p"}`))
	req.Header.Set("Authorization", "Bearer k")
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("a JSON edit: %d, want 400", resp.StatusCode)
	}
}
