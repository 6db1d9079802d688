package simulator

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
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

func (k kind) isVideo() bool { return k != kindText2Image }

// Limits the simulator enforces where the service leaves the value open.
const (
	maxPromptRunes  = 2048
	maxSeed         = math.MaxUint32
	maxInputSide    = 8192
	videoFPS        = 8
	defaultDuration = 4
	// Markers a prompt can carry to make the simulator refuse or fail a job.
	failMarker   = "[fail]"
	policyMarker = "[policy]"
)

var (
	aspectRatios = []string{"21:9", "16:9", "9:16", "3:4", "4:3", "1:1"}
	durations    = []int64{2, 4, 6, 8}
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
// with defaults filled in, or the 400 answer that refuses it.
func parseRequest(endpoint string, body []byte) (*request, *apiError) {
	k, ok := endpointKinds[endpoint]
	if !ok {
		return nil, notFound("no such endpoint: " + endpoint)
	}
	root, err := decodeObject(body)
	if err != nil {
		return nil, err
	}
	req := &request{kind: k, isPublic: true, promptEnhancer: true, seed: -1, duration: defaultDuration}
	f := fields{m: root}

	promptRequired := k == kindText2Image || k == kindText2Video
	prompt, present, err := f.str("prompt")
	if err != nil {
		return nil, err
	}
	if promptRequired && (!present || strings.TrimSpace(prompt) == "") {
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
	if req.seed, err = parseSeed(settings); err != nil {
		return nil, err
	}
	if k.isVideo() {
		if v, present, err := f.boolean("is_enable_prompt_enhancer"); err != nil {
			return nil, err
		} else if present {
			req.promptEnhancer = v
		}
		d, present, err := settings.integer("duration")
		if err != nil {
			return nil, err
		}
		if present {
			if !slices.Contains(durations, d) {
				return nil, badRequest(codeInvalidField, fmt.Sprintf("settings.duration must be 2, 4, 6 or 8 (seconds), got %d", d))
			}
			req.duration = int(d)
		}
	}

	switch k {
	case kindText2Image:
		req.imageNumber = 4
		if n, present, err := config.integer("image_number"); err != nil {
			return nil, err
		} else if present {
			if n < 1 || n > 4 {
				return nil, badRequest(codeInvalidField, fmt.Sprintf("config.image_number must be 1, 2, 3 or 4, got %d", n))
			}
			req.imageNumber = int(n)
		}
		if req.aspectRatio, err = parseAspectRatio(settings); err != nil {
			return nil, err
		}
		req.resolution = 720
		if n, present, err := settings.integer("resolution"); err != nil {
			return nil, err
		} else if present {
			if n != 720 && n != 1080 {
				return nil, badRequest(codeInvalidField, fmt.Sprintf("settings.resolution must be 720 or 1080, got %d", n))
			}
			req.resolution = int(n)
		}
	case kindText2Video:
		if req.genMode, err = parseGenMode(f, "standard", "standard", "smooth", "enhanced"); err != nil {
			return nil, err
		}
		if req.aspectRatio, err = parseAspectRatio(settings); err != nil {
			return nil, err
		}
	case kindImage2Video:
		if req.genMode, err = parseGenMode(f, "smooth", "smooth", "enhanced"); err != nil {
			return nil, err
		}
		src, present, err := config.str("source_image")
		if err != nil {
			return nil, err
		}
		if !present {
			return nil, badRequest(codeMissingField, "config.source_image is required: an http(s) URL or a data:image/...;base64, URI")
		}
		if err := checkImageRef("config.source_image", src); err != nil {
			return nil, err
		}
		req.sourceImages = []string{src}
	case kindAFC:
		if err := parseKeyFrames(req, config); err != nil {
			return nil, err
		}
	}
	return req, nil
}

func parseKeyFrames(req *request, config fields) *apiError {
	images, present, err := config.array("source_images")
	if err != nil {
		return err
	}
	if !present {
		return badRequest(codeMissingField, "config.source_images is required: 2 to 6 images")
	}
	if len(images) < 2 || len(images) > 6 {
		return badRequest(codeInvalidField, fmt.Sprintf("config.source_images must hold 2 to 6 images, got %d", len(images)))
	}
	for i, v := range images {
		name := fmt.Sprintf("config.source_images[%d]", i)
		s, ok := v.(string)
		if !ok {
			return badRequest(codeInvalidField, name+" must be a string")
		}
		if err := checkImageRef(name, s); err != nil {
			return err
		}
		req.sourceImages = append(req.sourceImages, s)
	}
	indices, present, err := config.array("frame_indices")
	if err != nil {
		return err
	}
	if !present {
		return badRequest(codeMissingField, "config.frame_indices is required: one frame position per source image")
	}
	if len(indices) != len(images) {
		return badRequest(codeInvalidField, fmt.Sprintf("config.frame_indices must have as many entries as config.source_images (%d), got %d", len(images), len(indices)))
	}
	frames := req.duration * videoFPS
	for i, v := range indices {
		name := fmt.Sprintf("config.frame_indices[%d]", i)
		n, err := asInteger(name, v)
		if err != nil {
			return err
		}
		if n < 0 || n >= int64(frames) {
			return badRequest(codeInvalidField, fmt.Sprintf("%s must be a frame position from 0 to %d for a %d-second video, got %d", name, frames-1, req.duration, n))
		}
		if i > 0 && int(n) <= req.frameIndices[i-1] {
			return badRequest(codeInvalidField, fmt.Sprintf("config.frame_indices must be strictly increasing, but %s is %d after %d", name, n, req.frameIndices[i-1]))
		}
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
			if n < 1 || n > maxInputSide {
				return badRequest(codeInvalidField, fmt.Sprintf("config.%s must be a pixel size from 1 to %d, got %d", side.name, maxInputSide, n))
			}
			*side.dst = int(n)
		}
	}
	return nil
}

func checkPrompt(name, s string) *apiError {
	if n := utf8.RuneCountInString(s); n > maxPromptRunes {
		return badRequest(codePromptTooLong, fmt.Sprintf("%s is %d characters long; the usage policy allows at most %d", name, n, maxPromptRunes))
	}
	return nil
}

func parseSeed(settings fields) (int64, *apiError) {
	n, present, err := settings.integer("seed")
	if err != nil || !present {
		return -1, err
	}
	if n != -1 && (n < 0 || n > maxSeed) {
		return 0, badRequest(codeInvalidField, fmt.Sprintf("settings.seed must be -1 (random) or from 0 to %d, got %d", int64(maxSeed), n))
	}
	return n, nil
}

func parseAspectRatio(settings fields) (string, *apiError) {
	s, present, err := settings.str("aspect_ratio")
	if err != nil || !present {
		return "16:9", err
	}
	if !slices.Contains(aspectRatios, s) {
		return "", badRequest(codeInvalidField, fmt.Sprintf("settings.aspect_ratio must be one of '21:9', '16:9', '9:16', '3:4', '4:3', '1:1', got %q", s))
	}
	return s, nil
}

func parseGenMode(f fields, def string, allowed ...string) (string, *apiError) {
	s, present, err := f.str("gen_mode")
	if err != nil || !present {
		return def, err
	}
	if !slices.Contains(allowed, s) {
		return "", badRequest(codeInvalidField, fmt.Sprintf("gen_mode must be one of '%s', got %q", strings.Join(allowed, "', '"), s))
	}
	return s, nil
}

// checkImageRef accepts what the service took as a source image: a public
// http(s) URL or a data:image/...;base64, URI whose payload decodes.
func checkImageRef(name, s string) *apiError {
	if rest, ok := strings.CutPrefix(s, "data:"); ok {
		meta, payload, ok := strings.Cut(rest, ",")
		if !ok || !strings.HasPrefix(meta, "image/") || !strings.HasSuffix(meta, ";base64") {
			return badRequest(codeInvalidField, name+" must be a data:image/<type>;base64,<data> URI")
		}
		if payload == "" {
			return badRequest(codeInvalidField, name+" holds an empty data URI")
		}
		if _, err := base64.StdEncoding.DecodeString(payload); err != nil {
			return badRequest(codeInvalidField, fmt.Sprintf("%s is not valid base64: %v", name, err))
		}
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return badRequest(codeInvalidField, name+" must be an http(s) URL or a data:image/...;base64, URI")
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

// asInteger accepts a JSON number with no fractional part (4 and 4.0 alike)
// within the range a float64 holds exactly.
func asInteger(name string, v any) (int64, *apiError) {
	num, ok := v.(json.Number)
	if !ok {
		return 0, badRequest(codeInvalidField, name+" must be a number")
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, badRequest(codeInvalidField, fmt.Sprintf("%s must be a whole number, got %s", name, num))
	}
	return int64(f), nil
}

// fingerprint identifies a request by what it asks for, not how it is
// spelled: sha256 of the endpoint path, a newline, and the canonical JSON of
// the body (the body as received, no defaults filled in).
func fingerprint(endpoint string, body []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("decoding body: %w", err)
	}
	var buf bytes.Buffer
	buf.WriteString(endpoint)
	buf.WriteByte('\n')
	if err := writeCanonical(&buf, v); err != nil {
		return "", err
	}
	sum := sha256.Sum256(buf.Bytes())
	return hex.EncodeToString(sum[:]), nil
}

// writeCanonical writes v as compact JSON with object keys sorted, strings
// without HTML escaping, and numbers normalised (see normalNumber).
func writeCanonical(buf *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeCanonical(buf, k); err != nil {
				return err
			}
			buf.WriteByte(':')
			if err := writeCanonical(buf, v[k]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeCanonical(buf, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case string:
		enc := json.NewEncoder(buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return fmt.Errorf("encoding string: %w", err)
		}
		buf.Truncate(buf.Len() - 1) // Encode appends a newline
	case json.Number:
		s, err := normalNumber(v)
		if err != nil {
			return err
		}
		buf.WriteString(s)
	case bool:
		buf.WriteString(strconv.FormatBool(v))
	case nil:
		buf.WriteString("null")
	default:
		return fmt.Errorf("unexpected JSON value of type %T", v)
	}
	return nil
}

// normalNumber spells a JSON number one way: whole numbers below 1e21 as
// plain integers (4, 4.0 and 4e0 all become 4), others as the shortest
// decimal that round-trips through float64.
func normalNumber(n json.Number) (string, error) {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return "", fmt.Errorf("number %s: %w", n, err)
	}
	if f == 0 {
		return "0", nil // also folds -0
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64), nil
	}
	return strconv.FormatFloat(f, 'g', -1, 64), nil
}
