package simulator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/provider/reference/rules"
	"github.com/genform/genform/internal/schema"
)

// kind is what a creation makes from what; it decides which request fields
// apply and how the output is rendered.
type kind string

const (
	kindText2Image  kind = "text2image"
	kindImage2Video kind = "image2video"
	kindAFC         kind = "afc"
	kindText2Video  kind = "text2video"
)

// endpointKinds maps each job-creation path to the kind of creation it
// makes: the simulator's one list of them, from which routes makes its
// POST routes, and where a job reloaded from disk finds its kind. It is
// written from the service's interface (docs/service.md), not taken from
// genform's own table (config/addrs), so that a client test against the
// simulator checks genform's paths rather than repeating them.
var endpointKinds = map[string]kind{
	"/v1/jobs/text2image":       kindText2Image,
	"/v1/jobs/gen2/image2video": kindImage2Video,
	"/v1/jobs/gen2/afc":         kindAFC,
	"/v1/jobs/gen2/text2video":  kindText2Video,
}

// kindRules are the service's rules (package rules) for each kind: the
// values the simulator accepts are the ones genform's configuration
// checks before it sends anything. The rules are found by the endpoint's
// name in config/addrs; its path stays the simulator's own, in
// endpointKinds.
var kindRules = map[kind]*schema.Endpoint{
	kindText2Image:  rules.For(addrs.Text2Image),
	kindImage2Video: rules.For(addrs.Image2Video),
	kindAFC:         rules.For(addrs.KeyFrames),
	kindText2Video:  rules.For(addrs.Text2Video),
}

func (k kind) isVideo() bool { return k != kindText2Image }

// Markers a prompt can carry to make the simulator refuse or fail a job.
const (
	failMarker   = "[fail]"
	policyMarker = "[policy]"
)

// Flat (integer) error codes of 400 answers; the service documents the
// shape but not the values, so these are the simulator's own.
const (
	codeMalformed     = 400001 // body is not a JSON object, or too large
	codeContentType   = 400003 // Content-Type is not application/json
	codeMissingField  = 400010 // a required field is absent
	codeInvalidField  = 400011 // a field has the wrong type or an unsupported value
	codePromptTooLong = 400012 // prompt or negative_prompt above maxPromptRunes
	codeNotVideo      = 400020 // watermark-free URL asked for an image creation
	codeNotSucceeded  = 400021 // watermark-free URL asked before the video succeeded
)

// request is a validated creation request with the documented defaults
// filled in. It is derived from the body as received, which is what is
// persisted, so a restart re-derives it the same way.
type request struct {
	kind           kind
	prompt         string
	negativePrompt string
	isPublic       bool
	imageNumber    int
	seed           int64 // -1: random, resolved per job
	aspectRatio    string
	resolution     int
	genMode        string
	promptEnhancer bool
	duration       int
	sourceImages   []string // image2video: one; afc: 2 to 6
	frameIndices   []int
	inputWidth     int // afc; 0 when not given
	inputHeight    int
}

// parseRequest validates body for the endpoint path and returns the request
// with defaults filled in, or the 400 answer that refuses it. The values
// each field may have are the service's rules (package rules).
func parseRequest(endpoint string, body []byte) (*request, *apiError) {
	k, ok := endpointKinds[endpoint]
	if !ok {
		return nil, notFound("no such endpoint: " + endpoint)
	}
	lim := kindRules[k]
	root, err := decodeObject(body)
	if err != nil {
		return nil, err
	}
	req := &request{kind: k, isPublic: true, promptEnhancer: true, seed: schema.RandomSeed, duration: int(lim.DefaultDuration)}
	f := fields{m: root}

	prompt, present, err := f.str("prompt")
	if err != nil {
		return nil, err
	}
	if lim.PromptRequired && (!present || schema.Blank(prompt)) {
		return nil, badRequest(codeMissingField, "prompt is required and must be a non-empty string")
	}
	if err := checkPrompt("prompt", prompt); err != nil {
		return nil, err
	}
	req.prompt = prompt
	if req.negativePrompt, _, err = f.str("negative_prompt"); err != nil {
		return nil, err
	}
	if err := checkPrompt("negative_prompt", req.negativePrompt); err != nil {
		return nil, err
	}
	if strings.Contains(req.prompt, policyMarker) {
		return nil, &apiError{status: 400, code: "VB-100017", msg: "the prompt may violate the usage policy and was refused; rephrase it"}
	}
	if v, present, err := f.boolean("is_public"); err != nil {
		return nil, err
	} else if present {
		req.isPublic = v
	}

	config, _, err := f.object("config")
	if err != nil {
		return nil, err
	}
	settings, _, err := f.object("settings")
	if err != nil {
		return nil, err
	}
	if n, present, err := settings.integer("seed"); err != nil {
		return nil, err
	} else if present {
		if why := schema.CheckSeed(n); why != "" {
			return nil, refused(settings.name("seed"), why, n)
		}
		req.seed = n
	}
	if k.isVideo() {
		if v, present, err := f.boolean("is_enable_prompt_enhancer"); err != nil {
			return nil, err
		} else if present {
			req.promptEnhancer = v
		}
	}
	if lim.Durations != nil {
		if req.duration, err = numberOf(settings, "duration", lim.DefaultDuration, lim.Duration); err != nil {
			return nil, err
		}
	}
	if lim.ImageNumbers != nil {
		if req.imageNumber, err = numberOf(config, "image_number", lim.DefaultImageNumber, lim.ImageNumber); err != nil {
			return nil, err
		}
	}
	if lim.AspectRatios != nil {
		if req.aspectRatio, err = oneOf(settings, "aspect_ratio", lim.DefaultAspectRatio, lim.AspectRatio); err != nil {
			return nil, err
		}
	}
	if lim.Resolutions != nil {
		if req.resolution, err = numberOf(settings, "resolution", lim.DefaultResolution, lim.Resolution); err != nil {
			return nil, err
		}
	}
	if lim.GenModes != nil {
		if req.genMode, err = oneOf(f, "gen_mode", lim.DefaultGenMode, lim.GenMode); err != nil {
			return nil, err
		}
	}
	switch {
	case lim.KeyFrames:
		if err := parseKeyFrames(req, lim, config); err != nil {
			return nil, err
		}
	case lim.MaxSourceImages == 1:
		src, present, err := config.str("source_image")
		if err != nil {
			return nil, err
		}
		if !present {
			return nil, badRequest(codeMissingField, "config.source_image is required: an http(s) URL or a data:image/...;base64, URI")
		}
		if err := checkSourceImage(config.name("source_image"), src); err != nil {
			return nil, err
		}
		req.sourceImages = []string{src}
	}
	return req, nil
}

// parseKeyFrames reads the source images of key-frame conditioning, their
// positions in the video and their pixel size.
func parseKeyFrames(req *request, lim *schema.Endpoint, config fields) *apiError {
	images, present, err := config.array("source_images")
	if err != nil {
		return err
	}
	if !present {
		return badRequest(codeMissingField, fmt.Sprintf("config.source_images is required: %d to %d images", lim.MinSourceImages, lim.MaxSourceImages))
	}
	if why := lim.SourceImageCount(len(images)); why != "" {
		return badRequest(codeInvalidField, "config.source_images "+why)
	}
	for i, v := range images {
		name := fmt.Sprintf("config.source_images[%d]", i)
		s, ok := v.(string)
		if !ok {
			return badRequest(codeInvalidField, name+" must be a string")
		}
		if err := checkSourceImage(name, s); err != nil {
			return err
		}
		req.sourceImages = append(req.sourceImages, s)
	}
	raw, present, err := config.array("frame_indices")
	if err != nil {
		return err
	}
	if !present {
		return badRequest(codeMissingField, "config.frame_indices is required: one frame position per source image")
	}
	if why := schema.FrameIndexCount(len(raw), len(images)); why != "" {
		return badRequest(codeInvalidField, "config.frame_indices "+why)
	}
	indices := make([]int64, len(raw))
	for i, v := range raw {
		if indices[i], err = asInteger(fmt.Sprintf("config.frame_indices[%d]", i), v); err != nil {
			return err
		}
	}
	if i, why := lim.FrameIndices(indices, int64(req.duration)); why != "" {
		return refused(fmt.Sprintf("config.frame_indices[%d]", i), why, indices[i])
	}
	for _, n := range indices {
		req.frameIndices = append(req.frameIndices, int(n))
	}
	for _, side := range []struct {
		name string
		dst  *int
	}{{"input_width", &req.inputWidth}, {"input_height", &req.inputHeight}} {
		n, present, err := config.integer(side.name)
		if err != nil {
			return err
		}
		if present {
			if why := schema.CheckInputSide(n); why != "" {
				return refused(config.name(side.name), why, n)
			}
			*side.dst = int(n)
		}
	}
	return nil
}

// refused is the 400 answer to a number the service's rules refuse.
func refused(name, why string, n int64) *apiError {
	return badRequest(codeInvalidField, fmt.Sprintf("%s %s, got %d", name, why, n))
}

func checkPrompt(name, s string) *apiError {
	if why := schema.CheckPrompt(s); why != "" {
		return badRequest(codePromptTooLong, name+" "+why)
	}
	return nil
}

// oneOf reads a string field whose values the endpoint lists, or def when
// it is absent.
func oneOf(f fields, key, def string, rule func(string) string) (string, *apiError) {
	s, present, err := f.str(key)
	if err != nil || !present {
		return def, err
	}
	if why := rule(s); why != "" {
		return "", badRequest(codeInvalidField, fmt.Sprintf("%s %s, got %q", f.name(key), why, s))
	}
	return s, nil
}

// numberOf reads a whole-number field whose values rule checks, or def
// when it is absent.
func numberOf(f fields, key string, def int64, rule func(int64) string) (int, *apiError) {
	n, present, err := f.integer(key)
	if err != nil || !present {
		return int(def), err
	}
	if why := rule(n); why != "" {
		return 0, refused(f.name(key), why, n)
	}
	return int(n), nil
}

// checkSourceImage accepts what the service takes as a source image: an
// http(s) URL, never fetched, or a data:image/...;base64, URI whose
// payload decodes.
func checkSourceImage(name, s string) *apiError {
	if why := schema.CheckSourceImage(s); why != "" {
		return badRequest(codeInvalidField, name+" "+why)
	}
	return nil
}

// decodeObject parses a request body that must be one JSON object, keeping
// numbers exact so integers can be told from fractions.
func decodeObject(body []byte) (map[string]any, *apiError) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, badRequest(codeMalformed, fmt.Sprintf("request body is not valid JSON: %v", err))
	}
	if dec.More() {
		return nil, badRequest(codeMalformed, "request body holds more than one JSON value")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, badRequest(codeMalformed, "request body must be a JSON object")
	}
	return m, nil
}

// fields reads typed values out of one JSON object, naming each field by
// its full path in errors. A null value counts as absent.
type fields struct {
	m      map[string]any
	prefix string
}

func (f fields) name(key string) string { return f.prefix + key }

func (f fields) get(key string) (any, bool) {
	v, ok := f.m[key]
	if !ok || v == nil {
		return nil, false
	}
	return v, true
}

func (f fields) str(key string) (string, bool, *apiError) {
	v, ok := f.get(key)
	if !ok {
		return "", false, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", false, badRequest(codeInvalidField, f.name(key)+" must be a string")
	}
	return s, true, nil
}

func (f fields) boolean(key string) (bool, bool, *apiError) {
	v, ok := f.get(key)
	if !ok {
		return false, false, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, false, badRequest(codeInvalidField, f.name(key)+" must be true or false")
	}
	return b, true, nil
}

func (f fields) integer(key string) (int64, bool, *apiError) {
	v, ok := f.get(key)
	if !ok {
		return 0, false, nil
	}
	n, err := asInteger(f.name(key), v)
	return n, err == nil, err
}

func (f fields) object(key string) (fields, bool, *apiError) {
	sub := fields{prefix: f.name(key) + "."}
	v, ok := f.get(key)
	if !ok {
		return sub, false, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return sub, false, badRequest(codeInvalidField, f.name(key)+" must be an object")
	}
	sub.m = m
	return sub, true, nil
}

func (f fields) array(key string) ([]any, bool, *apiError) {
	v, ok := f.get(key)
	if !ok {
		return nil, false, nil
	}
	a, ok := v.([]any)
	if !ok {
		return nil, false, badRequest(codeInvalidField, f.name(key)+" must be an array")
	}
	return a, true, nil
}

// asInteger accepts a JSON number with no fractional part (4, 4.0 and 4e0
// alike). The number is read exactly, so a fraction too small for a
// float64 to keep is still refused, as genform's configuration refuses it.
func asInteger(name string, v any) (int64, *apiError) {
	num, ok := v.(json.Number)
	if !ok {
		return 0, badRequest(codeInvalidField, name+" must be a number")
	}
	f, _, err := big.ParseFloat(string(num), 10, 512, big.ToNearestEven)
	if err != nil {
		return 0, badRequest(codeInvalidField, fmt.Sprintf("%s must be a number, got %s", name, num))
	}
	n, whole := schema.Whole(f)
	if !whole {
		return 0, badRequest(codeInvalidField, fmt.Sprintf("%s %s, got %s", name, schema.NotWhole, num))
	}
	return n, nil
}
