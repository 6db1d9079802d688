package luma

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/genform/genform/internal/simulator/simkit"
)

// The models each create endpoint takes, as the reference lists them.
var (
	imageModels = []string{"photon-1", "photon-flash-1"}
	videoModels = []string{"ray-2", "ray-flash-2"}
)

// The values of the enumerations a create body may set.
var (
	aspectRatios = []string{"1:1", "16:9", "9:16", "4:3", "3:4", "21:9", "9:21"}
	durations    = map[string]int64{"5s": 5, "9s": 9}
	resolutions  = []string{"540p", "720p", "1080p", "4k"}
)

// The prompt's documented bounds, in characters.
const (
	minPrompt = 3
	maxPrompt = 5000
)

// keyframe is one of a video's key frames.
type keyframe struct {
	Type string `json:"type"`
	URL  string `json:"url"`
	ID   string `json:"id"`
}

// createBody is the part of a create body the simulator reads.
type createBody struct {
	Model       *string `json:"model"`
	Prompt      *string `json:"prompt"`
	AspectRatio *string `json:"aspect_ratio"`
	Duration    *string `json:"duration"`
	Resolution  *string `json:"resolution"`
	Loop        bool    `json:"loop"`
	Keyframes   *struct {
		Frame0 *keyframe `json:"frame0"`
		Frame1 *keyframe `json:"frame1"`
	} `json:"keyframes"`
}

func (s *Server) createImage(w http.ResponseWriter, r *http.Request, owner string) {
	s.create(w, r, owner, false)
}

func (s *Server) createVideo(w http.ResponseWriter, r *http.Request, owner string) {
	s.create(w, r, owner, true)
}

// create makes a generation of an image or a video, answering 201 with
// it "queued"; a body the reference's schema refuses is answered 422,
// one of its documented create errors 400, and neither makes anything.
func (s *Server) create(w http.ResponseWriter, r *http.Request, owner string, video bool) {
	raw, err := simkit.ReadBody(w, r, maxBodyBytes)
	if err != nil {
		detail(w, http.StatusBadRequest, "reading the request body: "+err.Error(), 0)
		return
	}
	var b createBody
	var fields map[string]any
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		invalid(w, nil, "the body must be a JSON object")
		return
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		invalid(w, nil, "a field has the wrong type: "+err.Error())
		return
	}
	models := imageModels
	if video {
		models = videoModels
	}
	switch {
	case b.Model == nil:
		invalid(w, []any{"model"}, "Field required")
		return
	case !slices.Contains(models, *b.Model):
		invalid(w, []any{"model"}, "Input should be "+strings.Join(models, " or "))
		return
	case b.AspectRatio != nil && !slices.Contains(aspectRatios, *b.AspectRatio):
		invalid(w, []any{"aspect_ratio"}, "Input should be one of "+strings.Join(aspectRatios, ", "))
		return
	}
	msg := ""
	if video {
		msg = s.checkVideo(b, owner)
	}
	if msg == "" {
		msg = checkPrompt(b, video)
	}
	if msg != "" {
		detail(w, http.StatusBadRequest, msg, 0)
		return
	}
	if b.Prompt != nil && strings.Contains(*b.Prompt, simkit.QuotaMarker) {
		// Too little credit for the generation, which Luma charges up
		// front ("We pre-charge your account to ensure sufficient credits
		// for the generation", docs.lumalabs.ai FAQ): 402, the status
		// Luma's API error guide gives "Insufficient credits"
		// (docs.agents.lumalabs.ai, Error handling; read 2026-12-07), in
		// Luma's {"detail"} shape; the words are the simulator's own.
		detail(w, http.StatusPaymentRequired, "Insufficient credits: add credits to your Luma API account to create this generation", 0)
		return
	}
	id, err := simkit.NewUUID()
	if err != nil {
		detail(w, http.StatusInternalServerError, err.Error(), 0)
		return
	}
	now := s.Core.Now().UTC()
	run := &simkit.Run{
		ID: id, Endpoint: r.URL.Path, Model: *b.Model, Body: raw, Input: raw,
		TokenSHA256: owner, CreatedAt: now, Media: mediaOf(b, id, video),
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

// checkPrompt applies the prompt's documented rules: required unless an
// image is a key frame, 3 to 5000 characters.
func checkPrompt(b createBody, video bool) string {
	if b.Prompt == nil || *b.Prompt == "" {
		if video && b.Keyframes != nil && (isImage(b.Keyframes.Frame0) || isImage(b.Keyframes.Frame1)) {
			return ""
		}
		return "Prompt is required"
	}
	switch n := utf8.RuneCountInString(*b.Prompt); {
	case n < minPrompt:
		return "Prompt is too short, minimum length is 3 characters"
	case n > maxPrompt:
		return "Prompt is too long, maximum length is 5000 characters"
	}
	return ""
}

func isImage(k *keyframe) bool { return k != nil && k.Type == "image" }

// checkVideo applies the documented rules of a video's duration,
// resolution, loop and key frames; a generation key frame must name a
// completed generation of the same key.
func (s *Server) checkVideo(b createBody, owner string) string {
	if b.Duration != nil {
		if _, ok := durations[*b.Duration]; !ok {
			return "duration " + *b.Duration + " is not supported: use 5s or 9s"
		}
	}
	if b.Resolution != nil && !slices.Contains(resolutions, *b.Resolution) {
		return "resolution " + *b.Resolution + " is not supported: use " + strings.Join(resolutions, ", ")
	}
	if b.Keyframes == nil {
		return ""
	}
	f0, f1 := b.Keyframes.Frame0, b.Keyframes.Frame1
	if f0 == nil && f1 == nil {
		return "No keyframes provided"
	}
	if b.Loop && f1 != nil {
		switch {
		case f0 != nil:
			return "Loop is not supported for keyframes"
		case f1.Type == "generation":
			return "Loop is not supported for extend reverse"
		}
		return "Loop is not supported for end frame"
	}
	for _, f := range []struct {
		name string
		k    *keyframe
	}{{"frame0", f0}, {"frame1", f1}} {
		if f.k == nil {
			continue
		}
		if msg := s.checkKeyframe(f.name, *f.k, owner); msg != "" {
			return msg
		}
	}
	return ""
}

func (s *Server) checkKeyframe(name string, k keyframe, owner string) string {
	switch k.Type {
	case "image":
		u, err := url.Parse(k.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "keyframes." + name + ".url must be an http(s) URL of an image"
		}
	case "generation":
		if !s.completed(k.ID, owner) {
			return "keyframes." + name + ": generation " + k.ID + " is not a completed generation of this account"
		}
	default:
		return "keyframes." + name + ".type must be image or generation"
	}
	return ""
}

// completed reports whether id is a completed generation of owner, not
// deleted (read without counting a request of it).
func (s *Server) completed(id, owner string) bool {
	s.mu.Lock()
	gone := s.deleted[id]
	s.mu.Unlock()
	if gone {
		return false
	}
	now := s.Core.Now()
	for _, run := range s.Core.List(owner) {
		if run.ID == id {
			st, p, _ := run.StageAt(now)
			return states.Name(&run, st, p) == stateCompleted
		}
	}
	return false
}

// mediaOf is what a generation makes: one picture at its aspect ratio
// (16:9 by default, as the reference's AspectRatio says), or one video
// of its duration (5 seconds when unset).
func mediaOf(b createBody, id string, video bool) simkit.Media {
	m := simkit.Media{Count: 1, Seed: simkit.SeedFromID(id, 1<<31-1)}
	if b.Prompt != nil {
		m.Prompt = *b.Prompt
	}
	ratio := "16:9"
	if b.AspectRatio != nil {
		ratio = *b.AspectRatio
	}
	if !video {
		m.Width, m.Height = simkit.PictureSize(ratio, 768)
		return m
	}
	secs := int64(5)
	if b.Duration != nil {
		secs = durations[*b.Duration]
	}
	m.MakeVideo(secs, ratio)
	return m
}
