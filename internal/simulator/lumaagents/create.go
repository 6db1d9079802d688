package lumaagents

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/genform/genform/internal/simulator/simkit"
)

// The models, and the types each makes (Models, "At a glance").
var modelTypes = map[string][]string{
	"uni-1":     {"image", "image_edit"},
	"uni-1-max": {"image", "image_edit"},
	"ray-3.2":   {"video", "video_edit", "video_reframe"},
}

// The values of the enumerations a create body may set
// (GenerationCreateParams, VideoOptions).
var (
	aspectRatios      = []string{"3:1", "2:1", "21:9", "16:9", "4:3", "3:2", "1:1", "3:4", "2:3", "9:16", "1:2", "1:3"}
	videoAspectRatios = []string{"9:16", "3:4", "1:1", "4:3", "16:9", "21:9"}
	durations         = map[string]int64{"5s": 5, "10s": 10}
	resolutions       = []string{"540p", "720p", "1080p"}
	outputFormats     = []string{"png", "jpeg"}
	styles            = []string{"auto", "manga"}
)

// The prompt's bounds, in characters (Models: "1–6,000 characters").
const maxPrompt = 6000

// ref is a media reference (ImageRef): exactly one of url, data and
// generation_id; data with its media_type.
type ref struct {
	URL          *string `json:"url"`
	Data         *string `json:"data"`
	GenerationID *string `json:"generation_id"`
	MediaType    *string `json:"media_type"`
}

// videoOptions is the part of the video options the simulator reads.
type videoOptions struct {
	Duration   *string         `json:"duration"`
	Resolution *string         `json:"resolution"`
	Loop       *bool           `json:"loop"`
	HDR        *bool           `json:"hdr"`
	EXRExport  *bool           `json:"exr_export"`
	StartFrame *ref            `json:"start_frame"`
	EndFrame   *ref            `json:"end_frame"`
	Edit       json.RawMessage `json:"edit"`
}

// request is the part of a create body the simulator reads.
type request struct {
	Model        *string       `json:"model"`
	Type         *string       `json:"type"`
	Prompt       *string       `json:"prompt"`
	AspectRatio  *string       `json:"aspect_ratio"`
	ImageRef     []ref         `json:"image_ref"`
	Source       *ref          `json:"source"`
	OutputFormat *string       `json:"output_format"`
	Style        *string       `json:"style"`
	Video        *videoOptions `json:"video"`
}

// readRequest reads a body the create took (the zero request if it no
// longer reads).
func readRequest(raw []byte) *request {
	var q request
	_ = json.Unmarshal(raw, &q)
	return &q
}

// model is the request's model: uni-1 unless it names one.
func (q *request) model() string {
	if q.Model == nil {
		return "uni-1"
	}
	return *q.Model
}

// kind is the request's type: image unless it names one.
func (q *request) kind() string {
	if q.Type == nil {
		return "image"
	}
	return *q.Type
}

func (q *request) video() bool { return strings.HasPrefix(q.kind(), "video") }

// create makes a generation, answering 201 with it "queued"; a body the
// schema refuses is answered 400, a combination the reference rules out
// 422, and neither makes anything.
func (s *Server) create(w http.ResponseWriter, r *http.Request, owner string) {
	raw, err := simkit.ReadBody(w, r, maxBodyBytes)
	if err != nil {
		detail(w, http.StatusBadRequest, "reading the request body: "+err.Error(), 0)
		return
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		detail(w, http.StatusBadRequest, "the body must be a JSON object", 0)
		return
	}
	var q request
	if err := json.Unmarshal(raw, &q); err != nil {
		detail(w, http.StatusBadRequest, "a field has the wrong type: "+err.Error(), 0)
		return
	}
	if msg := checkSchema(&q); msg != "" {
		detail(w, http.StatusBadRequest, msg, 0)
		return
	}
	if msg := s.checkCombination(&q, owner); msg != "" {
		detail(w, http.StatusUnprocessableEntity, msg, 0)
		return
	}
	if strings.Contains(*q.Prompt, simkit.QuotaMarker) {
		// The error reference's 402, "Insufficient balance"; the words
		// are the simulator's own.
		detail(w, http.StatusPaymentRequired, "Insufficient balance: add funds to your Luma API account to run this generation", 0)
		return
	}
	if strings.Contains(*q.Prompt, simkit.ForbiddenMarker) {
		detail(w, http.StatusForbidden, "Access denied: this API client is suspended", 0)
		return
	}
	id, err := simkit.NewUUID()
	if err != nil {
		detail(w, http.StatusInternalServerError, err.Error(), 0)
		return
	}
	now := s.Core.Now().UTC()
	run := &simkit.Run{
		ID: id, Endpoint: r.URL.Path, Model: q.model(), Body: raw, Input: raw,
		TokenSHA256: owner, CreatedAt: now, Media: mediaOf(&q, id), Request: &q,
	}
	if err := s.Core.Make(run); err != nil {
		detail(w, http.StatusInternalServerError, err.Error(), 0)
		return
	}
	if s.Core.Lose() {
		simkit.Drop(w)
		return
	}
	simkit.WriteJSON(w, http.StatusCreated, s.generation(r, *run, now))
}

// checkSchema applies the schema's rules: the enumerations, the prompt's
// length, the media references' shape.
func checkSchema(q *request) string {
	switch {
	case q.Prompt == nil || *q.Prompt == "":
		return "prompt: Field required"
	case utf8.RuneCountInString(*q.Prompt) > maxPrompt:
		return "prompt: at most 6000 characters"
	case modelTypes[q.model()] == nil:
		return "model: Input should be 'uni-1', 'uni-1-max' or 'ray-3.2'"
	case q.Type != nil && !slices.Contains([]string{"image", "image_edit", "video", "video_edit", "video_reframe"}, *q.Type):
		return "type: Input should be 'image', 'image_edit', 'video', 'video_edit' or 'video_reframe'"
	case q.AspectRatio != nil && !slices.Contains(aspectRatios, *q.AspectRatio):
		return "aspect_ratio: Input should be one of " + strings.Join(aspectRatios, ", ")
	case q.OutputFormat != nil && !slices.Contains(outputFormats, *q.OutputFormat):
		return "output_format: Input should be 'png' or 'jpeg'"
	case q.Style != nil && !slices.Contains(styles, *q.Style):
		return "style: Input should be 'auto' or 'manga'"
	}
	if v := q.Video; v != nil {
		if v.Duration != nil {
			if _, ok := durations[*v.Duration]; !ok {
				return "video.duration: Input should be '5s' or '10s'"
			}
		}
		if v.Resolution != nil && !slices.Contains(resolutions, *v.Resolution) {
			return "video.resolution: Input should be '540p', '720p' or '1080p'"
		}
	}
	refs := map[string]*ref{"source": q.Source}
	for i := range q.ImageRef {
		refs[fmt.Sprintf("image_ref[%d]", i)] = &q.ImageRef[i]
	}
	if q.Video != nil {
		refs["video.start_frame"], refs["video.end_frame"] = q.Video.StartFrame, q.Video.EndFrame
	}
	for name, f := range refs {
		if msg := checkRef(name, f); msg != "" {
			return msg
		}
	}
	return ""
}

// checkRef applies a media reference's rules: exactly one of url, data
// and generation_id; an http(s) url; data with its media_type.
func checkRef(name string, f *ref) string {
	if f == nil {
		return ""
	}
	n := 0
	for _, p := range []*string{f.URL, f.Data, f.GenerationID} {
		if p != nil && *p != "" {
			n++
		}
	}
	switch {
	case n != 1:
		return name + ": provide exactly one of url, data or generation_id"
	case f.Data != nil && *f.Data != "" && (f.MediaType == nil || *f.MediaType == ""):
		return name + ": media_type is required with data"
	case f.URL != nil && *f.URL != "":
		u, err := url.Parse(*f.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return name + ".url must be a publicly accessible http(s) URL"
		}
	}
	return ""
}

// checkCombination applies the rules that tie fields together, each of
// which the reference states; a generation_id must name a completed
// generation of the same key, a video where a video is extended.
func (s *Server) checkCombination(q *request, owner string) string {
	model, kind := q.model(), q.kind()
	v := q.Video
	switch {
	case !slices.Contains(modelTypes[model], kind):
		return "model " + model + " does not support type " + kind + "; it supports " + strings.Join(modelTypes[model], ", ")
	case !q.video() && v != nil:
		return "video options are only valid for the video model ray-3.2"
	case q.video() && q.AspectRatio != nil && !slices.Contains(videoAspectRatios, *q.AspectRatio):
		return "aspect_ratio " + *q.AspectRatio + " is not supported by ray-3.2: use " + strings.Join(videoAspectRatios, ", ")
	case kind == "image_edit" && q.Source == nil:
		return "type image_edit requires a source image"
	case (kind == "video_edit" || kind == "video_reframe") && q.Source == nil:
		return "type " + kind + " requires a source video"
	case kind == "image" && len(q.ImageRef) > 9, kind == "image_edit" && len(q.ImageRef) > 8:
		return "too many reference images: up to 9 for image, 8 for image_edit"
	}
	if v != nil {
		tenSeconds := v.Duration != nil && *v.Duration == "10s"
		hdr := v.HDR != nil && *v.HDR
		loop := v.Loop != nil && *v.Loop
		switch {
		case loop && (tenSeconds || hdr):
			return "video.loop is not supported with duration 10s or hdr"
		case loop && kind != "video":
			return "video.loop is only valid for type video"
		case hdr && v.Resolution != nil && *v.Resolution == "540p":
			return "video.hdr requires 720p or 1080p"
		case v.EXRExport != nil && *v.EXRExport && !hdr:
			return "video.exr_export requires hdr"
		case tenSeconds && (v.StartFrame != nil || v.EndFrame != nil):
			return "duration 10s supports text-to-video only, without start_frame or end_frame"
		case len(v.Edit) > 0 && string(v.Edit) != "null" && kind != "video_edit":
			return "video.edit is only valid when type is video_edit"
		}
	}
	for name, f := range map[string]*ref{"source": q.Source, "video.start_frame": frame(v, true), "video.end_frame": frame(v, false)} {
		if f == nil || f.GenerationID == nil {
			continue
		}
		done, video := s.completed(*f.GenerationID, owner)
		if !done {
			return name + ".generation_id " + *f.GenerationID + " is not a completed generation of this API client"
		}
		if video != q.video() {
			return name + ".generation_id " + *f.GenerationID + " is not a generation of the kind this type chains from"
		}
	}
	return ""
}

func frame(v *videoOptions, start bool) *ref {
	switch {
	case v == nil:
		return nil
	case start:
		return v.StartFrame
	}
	return v.EndFrame
}

// mediaOf is what a generation makes: one picture at its aspect ratio
// (16:9 when unset), or one video of its duration (5 seconds when
// unset).
func mediaOf(q *request, id string) simkit.Media {
	m := simkit.Media{Count: 1, Seed: simkit.SeedFromID(id, 1<<31-1), Prompt: *q.Prompt}
	ratio := "16:9"
	if q.AspectRatio != nil {
		ratio = *q.AspectRatio
	}
	if !q.video() {
		m.Width, m.Height = simkit.PictureSize(ratio, 768)
		return m
	}
	secs := int64(5)
	if q.Video != nil && q.Video.Duration != nil {
		secs = durations[*q.Video.Duration]
	}
	m.MakeVideo(secs, ratio)
	return m
}
