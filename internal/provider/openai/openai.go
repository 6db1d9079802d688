package openai

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/provider"
)

// PublicURL is where OpenAI's API is; its paths start with /v1.
const PublicURL = "https://api.openai.com"

// The Images API's create paths: a generation from a prompt, and an edit
// that starts from images (createImageEdit, multipart/form-data).
const (
	generationsPath = "/v1/images/generations"
	editsPath       = "/v1/images/edits"
)

// refusals are the create answers that made nothing: an invalid request
// or one the safety system refused (400), the key refused (401), a
// region or a model the key may not use (403, 404). OpenAI answers each
// with an error object in place of images, and bills images, which such
// an answer has none of.
var refusals = []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound}

// keyRefusals are the statuses that refuse the key on any request: 401.
// checkRefusals are those of the key's check, a read of its own models:
// 401, and 403 (a country or region not supported, or an account refused).
var (
	keyRefusals   = []int{http.StatusUnauthorized}
	checkRefusals = []int{http.StatusUnauthorized, http.StatusForbidden}
)

// contentCodes are the error codes of a request refused for its content:
// moderation_blocked (the GPT image models' safety system),
// content_policy_violation (the DALL·E models'), and
// image_content_policy_violation (the code the official clients list for
// an image the Responses API refused).
var contentCodes = map[string]bool{
	"moderation_blocked":             true,
	"content_policy_violation":       true,
	"image_content_policy_violation": true,
}

// quotaCode is the error code of a 429 that no wait lifts: the account's
// credits or monthly budget are spent.
const quotaCode = "insufficient_quota"

// The statuses the adapter reports. The API has none: its answer is the
// result, so the adapter names what the answer was.
const (
	// rawGenerated: the answer carried the images.
	rawGenerated = "generated"
)

// Provider is OpenAI's Images API behind the provider seam. Submit hands
// the images an answer carried to the caller with the job (Job.Answer),
// which keeps them; it also holds them in memory for Status and Result,
// until the images handed over pass a limit.
// Download (the base's) streams only an output that has a URL (a DALL·E
// model's): the GPT image models' outputs have none, their bytes are in
// Output.Data.
type Provider struct {
	provider.Base
	now  func() time.Time
	held *holder
}

var _ provider.Provider = (*Provider)(nil)

// New is OpenAI's Images API as cfg configures it.
func New(cfg provider.Config) (*Provider, error) {
	// The key is checked by listing the models it can use (GET
	// /v1/models), which makes nothing. Only a 401 refuses the key
	// (OpenAI's error codes guide: "401 - Invalid Authentication",
	// "Incorrect API key provided"; read 2026-12-07): a 403 to a create is
	// about that request, a model the organisation must be verified for
	// ("Your organization must be verified to use the model …", as users'
	// logs in public issue threads show it) or a region, and fails that
	// instance alone. A 403 to the check, a list of the key's own models,
	// can only be about the key's account, and stops the apply.
	b, err := provider.NewBase("openai", cfg, PublicURL, provider.Auth{Scheme: "Bearer", KeyRefusals: keyRefusals},
		apiclient.Call{Method: http.MethodGet, Path: "/v1/models", KeyRefusals: checkRefusals})
	if err != nil {
		return nil, err
	}
	return &Provider{Base: b, now: time.Now, held: newHolder(handedLimit)}, nil
}

// Handle is what the state records of a job: what its answer was, never
// the images. It lets a process that did not send the request say what
// became of it.
type Handle struct {
	// Created is the answer's created time (Unix seconds), and Images how
	// many images it carried.
	Created int64 `json:"created,omitempty"`
	Images  int   `json:"images,omitempty"`
	// Refusal is the safety system's refusal, in its words with its code,
	// when the request was refused for its content.
	Refusal string `json:"refusal,omitempty"`
	// Code is that refusal's error code.
	Code string `json:"code,omitempty"`
}

// Submit sends the generation, once, and waits for its answer: the
// request is synchronous, bounded by ctx (the generation's timeout), not
// by the client's request timeout. A request with an image (source_image
// or source_images) is an edit, sent as a multipart form to
// /v1/images/edits with its images as files (see editForm); any other is
// a generation, JSON to /v1/images/generations. The images the answer
// carries are held for Status and Result under an id the adapter makes.
// A request the safety system refuses becomes a job that ended refused,
// so that it is recorded as such and never sent again; any other refusal
// is an error that made nothing; an answer lost or unreadable is possibly
// paid.
func (p *Provider) Submit(ctx context.Context, r provider.Request) (provider.Job, error) {
	if r.Kind != addrs.Image {
		return provider.Job{}, fmt.Errorf("openai: the Images API makes images, not %s", r.Kind)
	}
	in, most, err := requestInput(r)
	if err != nil {
		return provider.Job{}, err
	}
	call := apiclient.Call{
		Method: http.MethodPost, Path: generationsPath,
		Create: true, Refusals: refusals, Synchronous: true, MaxAnswer: most, Final: capReached,
	}
	if _, edit := in["image"]; edit {
		// The images are read (a URL fetched) before anything is sent to
		// OpenAI: a source that cannot be had costs nothing.
		call.Path = editsPath
		if call.Body, call.ContentType, err = p.editForm(ctx, in); err != nil {
			return provider.Job{}, err
		}
	} else if call.Body, err = encodeJSON(in); err != nil {
		return provider.Job{}, err
	}
	b, err := p.Client.Do(ctx, call)
	if err != nil {
		if se, ok := errors.AsType[*apiclient.Error](err); ok && se.HTTPStatus == http.StatusBadRequest && contentCodes[se.Code] {
			return p.refused(r, se), nil
		}
		return provider.Job{}, err
	}
	res, created, err := readAnswer(b)
	if err != nil {
		// A 2xx answer is images made, and billed; only their bytes are lost.
		return provider.Job{}, fmt.Errorf("%w: POST %s: %v", provider.ErrPossiblyPaid, call.Path, err)
	}
	if created <= 0 {
		created = p.now().Unix()
	}
	sum := sha256.Sum256(b)
	id := p.held.add(fmt.Sprintf("img-%d-%s", created, hex.EncodeToString(sum[:8])), &held{
		status: provider.Status{Raw: rawGenerated, State: provider.Done, Known: true, Progress: 1},
		res:    res,
	})
	res.CreationID = id
	// The images go to the caller with the job (Answer), which keeps
	// them: the copy held here for Status and Result counts as handed
	// over, and may be released once the images held pass the limit.
	p.held.handOut(id)
	h, _ := json.Marshal(Handle{Created: created, Images: len(res.Outputs)})
	return provider.Job{ID: id, Kind: r.Kind, Target: r.Target, Handle: h, Answer: res}, nil
}

// refused is the job of a request the safety system refused: it made
// nothing, and ended refused with OpenAI's words.
func (p *Provider) refused(r provider.Request, se *apiclient.Error) provider.Job {
	now := p.now()
	reason := apiclient.Printable(strings.TrimSpace(se.Message + " (" + se.Code + ")"))
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%s\x00%d", r.Target, r.Body, reason, now.UnixNano()))
	st := provider.Status{Raw: apiclient.Printable(se.Code), State: provider.Failed, Known: true, Reason: reason, Refused: true}
	id := p.held.add(fmt.Sprintf("img-%d-%s", now.Unix(), hex.EncodeToString(sum[:8])), &held{status: st})
	h, _ := json.Marshal(Handle{Refusal: reason, Code: se.Code})
	return provider.Job{ID: id, Kind: r.Kind, Target: r.Target, Handle: h}
}

// capReached ends a create answered 429 insufficient_quota at once: the
// account's credits or monthly budget are spent, which no wait lifts.
func capReached(e *apiclient.Error) error {
	if e.HTTPStatus == http.StatusTooManyRequests &&
		(e.Code == quotaCode || strings.Contains(e.Message, "exceeded your current quota")) {
		return fmt.Errorf("%w: %w", provider.ErrCapReached, e)
	}
	return nil
}

// requestInput is r's body with the model set to its target, and the
// largest answer its images can make. It refuses, before anything is
// sent, a body that is not a JSON object, one naming another model, and
// one asking for a streamed answer.
func requestInput(r provider.Request) (map[string]any, int64, error) {
	model := r.Target
	if !provider.ValidID(model) || strings.Contains(model, "/") {
		return nil, 0, fmt.Errorf("openai: model %q is not a model id such as gpt-image-2", model)
	}
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.UseNumber()
	var in map[string]any
	if err := dec.Decode(&in); err != nil || in == nil {
		return nil, 0, fmt.Errorf("openai: the request body is not a JSON object")
	}
	if m, ok := in["model"]; ok && m != model {
		return nil, 0, fmt.Errorf("openai: the request body names model %v, but the request is for %s", m, model)
	}
	if v, ok := in["stream"]; ok && v != nil && v != false {
		return nil, 0, fmt.Errorf("openai: the request asks for a streamed answer; genform reads the whole answer")
	}
	in["model"] = model
	return in, answerLimit(in["n"], in["size"]), nil
}

// encodeJSON is a generation's body: in as JSON, its strings as written.
func encodeJSON(in map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(in); err != nil {
		return nil, fmt.Errorf("openai: encoding the request: %w", err)
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}

// The bounds of an answer: at most 10 images a request, and none larger
// than 3840x2160 (Images API reference, createImage: n and size).
const (
	maxImages = 10
	maxPixels = 3840 * 2160
)

// answerLimit is the largest answer a request of n images of size can
// bring: each image as an 8-bit RGBA PNG stored uncompressed (a filter
// byte a row, deflate's block headers, a margin for chunks), in base64,
// and a mebibyte for the rest of the answer. A valid answer never
// reaches it; a larger one is a broken service, and is refused before it
// fills the memory.
func answerLimit(nv, sizev any) int64 {
	n := int64(1) // the API's default
	if nv != nil {
		n = maxImages
		if num, ok := nv.(json.Number); ok {
			if i, err := num.Int64(); err == nil && i >= 1 && i <= maxImages {
				n = i
			}
		}
	}
	pixels, rows := int64(maxPixels), int64(3840)
	if s, ok := sizev.(string); ok {
		ws, hs, _ := strings.Cut(s, "x")
		w, err1 := strconv.ParseInt(ws, 10, 32)
		h, err2 := strconv.ParseInt(hs, 10, 32)
		if err1 == nil && err2 == nil && w > 0 && h > 0 && w*h <= maxPixels {
			pixels, rows = w*h, h
		}
	}
	raw := 4*pixels + rows
	png := raw + raw/100 + 64<<10
	return n*int64(base64.StdEncoding.EncodedLen(int(png))) + 1<<20
}
