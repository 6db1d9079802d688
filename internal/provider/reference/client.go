package reference

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/apiclient"
)

// Client is the typed client of the reference service's seven endpoints
// (docs/service.md): their paths, bodies and answers, in the
// {"status","value"} envelope. Every request goes through the shared
// HTTP client (package apiclient), which owns the budget, the retries,
// the rule for creates, the token and the downloads.
type Client struct {
	*apiclient.Client
}

// NewClient is the reference service's client over c.
func NewClient(c *apiclient.Client) *Client { return &Client{Client: c} }

// call sends a request of the reference API, its answer read out of the
// envelope.
func (c *Client) call(ctx context.Context, method, path string, body []byte, create bool) ([]byte, error) {
	return c.Do(ctx, apiclient.Call{Method: method, Path: path, Body: body, Create: create,
		Decode: func(b []byte) ([]byte, error) { return decodeEnvelope(b) }})
}

// Create sends a job-creation request to endpoint with body sent byte for
// byte (the canonical JSON built by package config), and returns the
// generation_id. A failure that leaves it unknown whether the job was
// created wraps ErrAmbiguousCreate.
func (c *Client) Create(ctx context.Context, endpoint addrs.Endpoint, body []byte) (string, error) {
	path := endpoint.Path()
	if _, ok := addrs.EndpointOf(path); !ok {
		return "", fmt.Errorf("unknown job endpoint %v", endpoint)
	}
	if !json.Valid(body) {
		return "", fmt.Errorf("POST %s: the request body is not valid JSON", path)
	}
	op := http.MethodPost + " " + path
	value, err := c.call(ctx, http.MethodPost, path, body, true)
	if err != nil {
		return "", err
	}
	var v struct {
		GenerationID string `json:"generation_id"`
	}
	if err := decodeValue(value, &v); err != nil {
		return "", fmt.Errorf("%w: %s: decoding the answer: %w", apiclient.ErrAmbiguousCreate, op, err)
	}
	if v.GenerationID == "" {
		return "", fmt.Errorf(`%w: %s: the answer has no "generation_id"`, apiclient.ErrAmbiguousCreate, op)
	}
	if err := apiclient.CheckID(`the answer's "generation_id"`, v.GenerationID); err != nil {
		return "", fmt.Errorf("%w: %s: %w", apiclient.ErrAmbiguousCreate, op, err)
	}
	return v.GenerationID, nil
}

// TextToImageRequest is the body of Text to Image. Pointer and omitempty
// fields stay out of the JSON when unset, so the service's defaults apply.
type TextToImageRequest struct {
	Prompt         string         `json:"prompt"`
	NegativePrompt string         `json:"negative_prompt,omitempty"`
	IsPublic       *bool          `json:"is_public,omitempty"`
	Config         *ImageConfig   `json:"config,omitempty"`
	Settings       *ImageSettings `json:"settings,omitempty"`
}

// ImageConfig is the config object of Text to Image.
type ImageConfig struct {
	ImageNumber *int `json:"image_number,omitempty"`
}

// ImageSettings is the settings object of Text to Image.
type ImageSettings struct {
	Seed        *int64 `json:"seed,omitempty"`
	AspectRatio string `json:"aspect_ratio,omitempty"`
	Resolution  *int   `json:"resolution,omitempty"`
}

// ImageToVideoRequest is the body of Image to Video.
type ImageToVideoRequest struct {
	Prompt                 string              `json:"prompt,omitempty"`
	Config                 *ImageToVideoConfig `json:"config,omitempty"`
	IsPublic               *bool               `json:"is_public,omitempty"`
	IsEnablePromptEnhancer *bool               `json:"is_enable_prompt_enhancer,omitempty"`
	NegativePrompt         string              `json:"negative_prompt,omitempty"`
	GenMode                string              `json:"gen_mode,omitempty"`
	Settings               *VideoSettings      `json:"settings,omitempty"`
}

// ImageToVideoConfig is the config object of Image to Video.
type ImageToVideoConfig struct {
	// SourceImage is an http(s) URL or a data:image/...;base64 URI.
	SourceImage string `json:"source_image,omitempty"`
}

// VideoSettings is the settings object of Image to Video and Key Frame
// Conditioning.
type VideoSettings struct {
	Seed     *int64   `json:"seed,omitempty"`
	Duration *float64 `json:"duration,omitempty"`
}

// KeyFrameRequest is the body of Key Frame Conditioning.
type KeyFrameRequest struct {
	Config         *KeyFrameConfig `json:"config,omitempty"`
	IsPublic       *bool           `json:"is_public,omitempty"`
	Prompt         string          `json:"prompt,omitempty"`
	NegativePrompt string          `json:"negative_prompt,omitempty"`
	Settings       *VideoSettings  `json:"settings,omitempty"`
}

// KeyFrameConfig is the config object of Key Frame Conditioning.
type KeyFrameConfig struct {
	SourceImages []string `json:"source_images,omitempty"`
	FrameIndices []int    `json:"frame_indices,omitempty"`
	InputWidth   *int     `json:"input_width,omitempty"`
	InputHeight  *int     `json:"input_height,omitempty"`
}

// TextToVideoRequest is the body of Text to Video.
type TextToVideoRequest struct {
	Prompt                 string               `json:"prompt,omitempty"`
	IsPublic               *bool                `json:"is_public,omitempty"`
	IsEnablePromptEnhancer *bool                `json:"is_enable_prompt_enhancer,omitempty"`
	NegativePrompt         string               `json:"negative_prompt,omitempty"`
	GenMode                string               `json:"gen_mode,omitempty"`
	Settings               *TextToVideoSettings `json:"settings,omitempty"`
}

// TextToVideoSettings is the settings object of Text to Video.
type TextToVideoSettings struct {
	Seed        *int64   `json:"seed,omitempty"`
	AspectRatio string   `json:"aspect_ratio,omitempty"`
	Duration    *float64 `json:"duration,omitempty"`
}

// TextToImage submits a Text to Image job and returns its generation_id.
func (c *Client) TextToImage(ctx context.Context, r TextToImageRequest) (string, error) {
	return c.createJSON(ctx, addrs.Text2Image, r)
}

// ImageToVideo submits an Image to Video job and returns its generation_id.
func (c *Client) ImageToVideo(ctx context.Context, r ImageToVideoRequest) (string, error) {
	return c.createJSON(ctx, addrs.Image2Video, r)
}

// KeyFrame submits a Key Frame Conditioning job and returns its
// generation_id.
func (c *Client) KeyFrame(ctx context.Context, r KeyFrameRequest) (string, error) {
	return c.createJSON(ctx, addrs.KeyFrames, r)
}

// TextToVideo submits a Text to Video job and returns its generation_id.
func (c *Client) TextToVideo(ctx context.Context, r TextToVideoRequest) (string, error) {
	return c.createJSON(ctx, addrs.Text2Video, r)
}

func (c *Client) createJSON(ctx context.Context, endpoint addrs.Endpoint, v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // prompts go out as written, not as \u0026
	if err := enc.Encode(v); err != nil {
		return "", fmt.Errorf("encoding the request for %s: %w", endpoint, err)
	}
	return c.Create(ctx, endpoint, bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// State is a job status normalised to what genform acts on.
type State int

// The normalised states of a job.
const (
	// StateRunning covers pending, processing, post_processing and any
	// value the service documents nowhere.
	StateRunning State = iota
	// StateDone is succeed: the detail and outputs can be fetched.
	StateDone
	// StateFailed is failed: the job ended without outputs.
	StateFailed
)

// String is the state's lowercase name.
func (s State) String() string {
	switch s {
	case StateRunning:
		return "running"
	case StateDone:
		return "done"
	case StateFailed:
		return "failed"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// ParseState normalises a raw status value of the service. known is false
// for a value the service does not document; it then counts as running, so
// the job is polled until its timeout rather than abandoned, and the caller
// logs it.
func ParseState(raw string) (state State, known bool) {
	switch strings.ToLower(strings.TrimSpace(raw)) {
	case "pending", "processing", "post_processing":
		return StateRunning, true
	case "succeed":
		return StateDone, true
	case "failed":
		return StateFailed, true
	}
	return StateRunning, false
}

// Status is the answer of Get Creation Status.
type Status struct {
	// Raw is the status value as the service sent it, through Printable:
	// it is shown and kept, never parsed again.
	Raw string
	// State is Raw normalised.
	State State
	// Known is false when Raw is not a documented value.
	Known bool
	// Progress is the job's progress as a fraction from 0 to 1. A value
	// above 1 is read as a percentage, the other reading a service might
	// use; the result is clamped to [0, 1].
	Progress float64
}

// Status fetches the status of a job.
func (c *Client) Status(ctx context.Context, creationID string) (Status, error) {
	if err := apiclient.CheckID("creation id", creationID); err != nil {
		return Status{}, fmt.Errorf("status: %w", err)
	}
	path := "/v1/jobs/" + url.PathEscape(creationID) + "/status"
	op := http.MethodGet + " " + path
	value, err := c.call(ctx, http.MethodGet, path, nil, false)
	if err != nil {
		return Status{}, err
	}
	var v struct {
		Status   *string  `json:"status"`
		Progress *float64 `json:"progress"`
	}
	if err := decodeValue(value, &v); err != nil {
		return Status{}, fmt.Errorf("%s: decoding the answer: %w", op, err)
	}
	if v.Status == nil {
		return Status{}, fmt.Errorf(`%s: the answer has no "status"`, op)
	}
	s := Status{Raw: apiclient.Printable(*v.Status)}
	s.State, s.Known = ParseState(*v.Status)
	if v.Progress != nil {
		s.Progress = normaliseProgress(*v.Progress)
	}
	return s, nil
}

// credentialsProbeID is the creation id CheckCredentials asks about: the
// nil UUID, which no job can have (the service's ids are random UUIDs,
// whose version digit is never 0).
const credentialsProbeID = "00000000-0000-0000-0000-000000000000"

// CheckCredentials asks the service, with one cheap authenticated request
// that creates nothing, whether it accepts the token: the status of a job
// that cannot exist. A service that accepts the token answers 404 ("the
// generation does not exist", docs/service.md); a 401 or 403 gives an
// error matching ErrUnauthorized. Any other answer of the service says
// nothing against the token and gives nil. A service that cannot be
// reached gives an error matching ErrUnreachable, and one that keeps
// failing (429 or 5xx once the retries are spent) its last error.
func (c *Client) CheckCredentials(ctx context.Context) error {
	return c.Probe(ctx, apiclient.Call{Method: http.MethodGet, Path: "/v1/jobs/" + credentialsProbeID + "/status",
		Decode: func(b []byte) ([]byte, error) { return decodeEnvelope(b) }})
}

func normaliseProgress(p float64) float64 {
	if p > 1 {
		p /= 100
	}
	return min(max(p, 0), 1)
}

// Creation is the creation detail, every field the service lists (see
// docs/service.md), spelled as the service spells it.
type Creation struct {
	CreationID     string           `json:"creation_id"`
	UserID         string           `json:"user_id"`
	Username       string           `json:"username"`
	Avatar         string           `json:"avatar"`
	Type           string           `json:"type"`
	InputType      string           `json:"input_type"`
	Prompt         string           `json:"prompt"`
	NegativePrompt string           `json:"negative_prompt"`
	CreateTime     string           `json:"create_time"`
	UpdateTime     string           `json:"update_time"`
	Status         string           `json:"status"`
	VideoURL       string           `json:"video_url"`
	ThumbnailURL   string           `json:"thumbnail_url"`
	Settings       CreationSettings `json:"settings"`
	Commits        CreationCommits  `json:"commits"`
	OutputType     string           `json:"output_type"`
	Outputs        []CreationOutput `json:"outputs"`

	// Raw is the value object exactly as received, for the state file.
	Raw json.RawMessage `json:"-"`
}

// CreationSettings is the settings object of a creation detail.
type CreationSettings struct {
	FPS    float64 `json:"fps"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

// CreationCommits is the commits object of a creation detail: the
// platform's social counters.
type CreationCommits struct {
	LikeCount     float64 `json:"like_count"`
	IsLike        bool    `json:"is_like"`
	CollectsCount float64 `json:"collects_count"`
	IsCollect     bool    `json:"is_collect"`
}

// CreationOutput is one generated file of a creation.
type CreationOutput struct {
	ID           string `json:"id"`
	MediaURL     string `json:"media_url"`
	ThumbnailURL string `json:"thumbnail_url"`
}

// Detail fetches the creation detail of a job; the service allows it once
// the status is succeed.
func (c *Client) Detail(ctx context.Context, creationID string) (*Creation, error) {
	if err := apiclient.CheckID("creation id", creationID); err != nil {
		return nil, fmt.Errorf("detail: %w", err)
	}
	path := "/v1/creation/" + url.PathEscape(creationID)
	op := http.MethodGet + " " + path
	value, err := c.call(ctx, http.MethodGet, path, nil, false)
	if err != nil {
		return nil, err
	}
	var cr Creation
	if err := decodeValue(value, &cr); err != nil {
		return nil, fmt.Errorf("%s: decoding the answer: %w", op, err)
	}
	// The detail of another creation than the one asked for would be
	// recorded, and its files kept, under this one's name.
	if cr.CreationID != "" {
		if err := apiclient.CheckID(`the answer's "creation_id"`, cr.CreationID); err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		if cr.CreationID != creationID {
			return nil, fmt.Errorf("%s: the answer is the detail of creation %s, not of %s, which was asked for", op, cr.CreationID, creationID)
		}
	}
	for i, o := range cr.Outputs {
		if o.ID != "" {
			if err := apiclient.CheckID(fmt.Sprintf(`the answer's "outputs[%d].id"`, i), o.ID); err != nil {
				return nil, fmt.Errorf("%s: %w", op, err)
			}
		}
	}
	cr.Raw = value
	return &cr, nil
}

// WatermarkFreeURL is a temporary download link of a video without its
// watermark.
type WatermarkFreeURL struct {
	URL string
	// ExpireTime is when the link stops working; zero when the service did
	// not say.
	ExpireTime time.Time
}

// WatermarkFreeURL asks the service for a watermark-free download link of a
// video creation. Each call mints a new link, so it is retried like a read.
func (c *Client) WatermarkFreeURL(ctx context.Context, creationID string) (*WatermarkFreeURL, error) {
	if err := apiclient.CheckID("creation id", creationID); err != nil {
		return nil, fmt.Errorf("watermark-free URL: %w", err)
	}
	path := "/v1/creation/" + url.PathEscape(creationID) + "/watermark-free-url"
	op := http.MethodPost + " " + path
	value, err := c.call(ctx, http.MethodPost, path, nil, false)
	if err != nil {
		return nil, err
	}
	var v struct {
		URL        string `json:"url"`
		ExpireTime string `json:"expire_time"`
	}
	if err := decodeValue(value, &v); err != nil {
		return nil, fmt.Errorf("%s: decoding the answer: %w", op, err)
	}
	if v.URL == "" {
		return nil, fmt.Errorf(`%s: the answer has no "url"`, op)
	}
	w := &WatermarkFreeURL{URL: v.URL}
	if v.ExpireTime != "" {
		t, err := time.Parse(time.RFC3339Nano, v.ExpireTime)
		if err != nil {
			return nil, fmt.Errorf(`%s: "expire_time" %q is not an ISO 8601 time: %w`, op, v.ExpireTime, err)
		}
		w.ExpireTime = t.UTC()
	}
	return w, nil
}
