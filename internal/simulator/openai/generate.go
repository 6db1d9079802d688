package openai

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/genform/genform/internal/simulator/simkit"
)

const (
	maxBodyBytes   = 1 << 20
	maxPromptChars = 32000
	maxImages      = 10
	// The largest image a gpt-image-2 model makes (Images API reference,
	// size): edges at most 3840, 3840x2160 pixels.
	maxEdge   = 3840
	maxPixels = 3840 * 2160
)

// params are the parameters of createImage the reference lists.
var params = map[string]bool{
	"prompt": true, "model": true, "n": true, "size": true, "quality": true,
	"background": true, "moderation": true, "output_format": true,
	"output_compression": true, "response_format": true, "stream": true,
	"partial_images": true, "style": true, "user": true,
}

// request is a generation as the simulator reads it.
type request struct {
	prompt, model string
	n             int
	width, height int
	quality       string
	background    string
	format        string
	compression   int
}

// readRequest reads and checks a generation, answering its refusal and
// returning false when it is not one the reference allows.
func readRequest(w http.ResponseWriter, body []byte) (request, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var in map[string]any
	if err := dec.Decode(&in); err != nil || in == nil {
		invalid(w, "", "We could not parse the JSON body of your request. The OpenAI API expects a JSON payload.")
		return request{}, false
	}
	return checkRequest(w, in, params)
}

// checkRequest checks the parameters of a generation or an edit, in,
// against the reference: allowed are the parameters its endpoint lists.
// It answers the refusal and returns false when they are not allowed.
func checkRequest(w http.ResponseWriter, in map[string]any, allowed map[string]bool) (request, bool) {
	for k := range in {
		if !allowed[k] {
			apiError(w, http.StatusBadRequest, "Unknown parameter: '"+k+"'.", "invalid_request_error", k, codeUnknownParam)
			return request{}, false
		}
	}
	q := request{n: 1, width: 1024, height: 1024, quality: "medium", background: "opaque", format: "png", compression: 100}
	var ok bool
	if q.prompt, ok = in["prompt"].(string); !ok || q.prompt == "" {
		invalid(w, "prompt", "Missing required parameter: 'prompt'.")
		return q, false
	}
	if utf8.RuneCountInString(q.prompt) > maxPromptChars {
		invalid(w, "prompt", fmt.Sprintf("Invalid 'prompt': string too long. Expected a string with maximum length %d.", maxPromptChars))
		return q, false
	}
	if q.model, ok = in["model"].(string); !ok || q.model == "" {
		invalid(w, "model", "The simulator makes GPT image models only: name one in 'model'.")
		return q, false
	}
	for _, p := range []string{"response_format", "style"} {
		if v, set := in[p]; set && v != nil {
			invalid(w, p, "Unknown parameter: '"+p+"' is not supported by the GPT image models.")
			return q, false
		}
	}
	if v, set := in["stream"]; set && v != nil && v != false {
		invalid(w, "stream", "The simulator answers a generation whole: it does not stream.")
		return q, false
	}
	if v, set := in["n"]; set && v != nil {
		n, isNum := simkit.Number(v)
		if _, isText := v.(string); isText || !isNum || n < 1 || n > maxImages {
			invalid(w, "n", fmt.Sprintf("Invalid 'n': expected an integer from 1 to %d.", maxImages))
			return q, false
		}
		q.n = int(n)
	}
	if !readSize(w, in["size"], q.model, &q) {
		return q, false
	}
	for _, e := range []struct {
		name  string
		dst   *string
		allow []string
	}{
		{"quality", &q.quality, []string{"auto", "low", "medium", "high", "xhigh", "max"}},
		{"background", &q.background, []string{"auto", "opaque", "transparent"}},
		{"output_format", &q.format, []string{"png", "jpeg"}},
		{"moderation", new(string), []string{"auto", "low"}},
	} {
		v, set := in[e.name]
		if !set || v == nil {
			continue
		}
		s, _ := v.(string)
		if !contains(e.allow, s) {
			msg := fmt.Sprintf("Invalid '%s': expected one of %s.", e.name, strings.Join(e.allow, ", "))
			if e.name == "output_format" && s == "webp" {
				msg = "The simulator makes png and jpeg; webp is OpenAI's own."
			}
			invalid(w, e.name, msg)
			return q, false
		}
		*e.dst = s
	}
	if q.quality == "auto" {
		q.quality = "medium"
	}
	if q.background == "auto" {
		q.background = "opaque"
	}
	if q.background == "transparent" && q.format == "jpeg" {
		invalid(w, "background", "A transparent background needs output_format png or webp.")
		return q, false
	}
	if v, set := in["output_compression"]; set && v != nil {
		c, isNum := simkit.Number(v)
		if _, isText := v.(string); isText || !isNum || c < 0 || c > 100 {
			invalid(w, "output_compression", "Invalid 'output_compression': expected an integer from 0 to 100.")
			return q, false
		}
		q.compression = int(c)
	}
	return q, true
}

// readSize reads size into q: auto, one of the standard sizes, or, for a
// gpt-image-2 model, any WIDTHxHEIGHT within the reference's bounds.
func readSize(w http.ResponseWriter, v any, model string, q *request) bool {
	if v == nil || v == "auto" {
		return true
	}
	s, _ := v.(string)
	ws, hs, found := strings.Cut(s, "x")
	wd, err1 := strconv.Atoi(ws)
	ht, err2 := strconv.Atoi(hs)
	standard := s == "1024x1024" || s == "1536x1024" || s == "1024x1536"
	flexible := strings.HasPrefix(model, "gpt-image-2") && found && err1 == nil && err2 == nil &&
		wd > 0 && ht > 0 && wd%16 == 0 && ht%16 == 0 && max(wd, ht) <= maxEdge &&
		wd*ht <= maxPixels && wd <= 3*ht && ht <= 3*wd
	if !standard && !flexible {
		invalid(w, "size", fmt.Sprintf("Invalid 'size' %q for model %s: use auto, 1024x1024, 1536x1024 or 1024x1536 (the gpt-image-2 models also take WIDTHxHEIGHT in multiples of 16, at most %dx%d, from 1:3 to 3:1).", s, model, 3840, 2160))
		return false
	}
	q.width, q.height = wd, ht
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// generate makes the images of a request, once the work is done, or
// fails as the request's markers and the faults say.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, owner string) {
	body, err := simkit.ReadBody(w, r, maxBodyBytes)
	if err != nil {
		invalid(w, "", "Reading the request body: "+err.Error())
		return
	}
	q, ok := readRequest(w, body)
	if !ok {
		return
	}
	s.makeImages(w, r, owner, body, q)
}

// makeImages makes the images of q, a generation or an edit whose body
// (JSON) the job keeps, once the work is done, or refuses or fails as its
// prompt's markers and the faults say.
func (s *Server) makeImages(w http.ResponseWriter, r *http.Request, owner string, body []byte, q request) {
	if !served(q.model, s.Core.Now) {
		modelNotFound(w, q.model)
		return
	}
	switch {
	case strings.Contains(q.prompt, QuotaMarker):
		apiError(w, http.StatusTooManyRequests, "You exceeded your current quota, please check your plan and billing details.", codeQuota, "", codeQuota)
		return
	case strings.Contains(q.prompt, simkit.ForbiddenMarker):
		// An organisation not verified for the model: 403, the words as
		// users' logs in public issue threads show them (OpenAI's
		// reference lists no such code; read 2026-12-07).
		apiError(w, http.StatusForbidden, "Your organization must be verified to use the model `"+q.model+"`. Please go to: https://platform.openai.com/settings/organization/general and click on Verify Organization. If you just verified, it can take up to 15 minutes for access to propagate.", "invalid_request_error", "", "")
		return
	case strings.Contains(q.prompt, simkit.RefuseMarker):
		apiError(w, http.StatusBadRequest, "Your request was rejected by the safety system. If you believe this is an error, contact us through our help center.", "image_generation_user_error", "", codeModeration)
		return
	}
	id, err := simkit.NewUUID()
	if err != nil {
		apiError(w, http.StatusInternalServerError, err.Error(), "server_error", "", "")
		return
	}
	run := &simkit.Run{
		ID: id, Endpoint: r.URL.Path, Model: q.model, Body: body, Input: body,
		TokenSHA256: owner, CreatedAt: s.Core.Now().UTC(),
		Media: simkit.Media{Prompt: q.prompt, Seed: simkit.SeedFromID(id, 1<<31-1), Count: q.n, Width: q.width, Height: q.height},
	}
	if err := s.Core.Make(run); err != nil {
		apiError(w, http.StatusInternalServerError, err.Error(), "server_error", "", "")
		return
	}
	// The work, behind the queue when there is one: the answer comes when
	// it is done. A client that hangs up does not undo it.
	t := time.NewTimer(run.FinishAt().Sub(run.CreatedAt))
	select {
	case <-t.C:
	case <-r.Context().Done():
		t.Stop()
		return
	}
	if s.Core.Lose() {
		simkit.Drop(w)
		return
	}
	if run.End != simkit.Succeed {
		apiError(w, http.StatusInternalServerError, "The server had an error while processing your request. Sorry about that!", "server_error", "", "")
		return
	}
	data := make([]map[string]any, q.n)
	for i := range data {
		b, err := picture(run, i, q)
		if err != nil {
			apiError(w, http.StatusInternalServerError, err.Error(), "server_error", "", "")
			return
		}
		data[i] = map[string]any{"b64_json": base64.StdEncoding.EncodeToString(b)}
	}
	simkit.WriteJSON(w, http.StatusOK, map[string]any{
		"created": s.Core.Now().Unix(), "data": data,
		"size": fmt.Sprintf("%dx%d", q.width, q.height), "quality": q.quality,
		"background": q.background, "output_format": q.format,
		"usage": usage(q),
	})
}

// picture is image i of run in the format q asks for.
func picture(run *simkit.Run, i int, q request) ([]byte, error) {
	f, ok, err := run.Render(run.Model, i)
	if err != nil || !ok {
		return nil, fmt.Errorf("rendering image %d: %v", i, err)
	}
	if q.format == "png" && q.background != "transparent" {
		return f.Data, nil
	}
	img, err := png.Decode(bytes.NewReader(f.Data))
	if err != nil {
		return nil, fmt.Errorf("decoding image %d: %w", i, err)
	}
	if q.format == "jpeg" {
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: max(q.compression, 1)}); err != nil {
			return nil, fmt.Errorf("encoding image %d: %w", i, err)
		}
		return buf.Bytes(), nil
	}
	return simkit.EncodePNG(transparentSky(img))
}

// transparentSky makes the colour of the top left pixel, the top band of
// the sky, transparent: a picture with a transparent background.
func transparentSky(img image.Image) image.Image {
	p, ok := img.(*image.Paletted)
	if !ok {
		return img
	}
	pal := make(color.Palette, len(p.Palette))
	copy(pal, p.Palette)
	pal[p.ColorIndexAt(p.Rect.Min.X, p.Rect.Min.Y)] = color.NRGBA{}
	out := *p
	out.Palette = pal
	return &out
}

// outputTokens are the simulator's output tokens of one 1024x1024 image
// by quality; a size has them in proportion to its pixels.
var outputTokens = map[string]int{"low": 272, "medium": 1056, "high": 4160, "xhigh": 6240, "max": 8320}

// usage is the usage object of a generation of q.
func usage(q request) map[string]any {
	text := (utf8.RuneCountInString(q.prompt) + 3) / 4
	out := q.n * outputTokens[q.quality] * q.width * q.height / (1024 * 1024)
	return map[string]any{
		"input_tokens": text, "output_tokens": out, "total_tokens": text + out,
		"input_tokens_details":  map[string]any{"text_tokens": text, "image_tokens": 0},
		"output_tokens_details": map[string]any{"image_tokens": out, "text_tokens": 0},
	}
}
