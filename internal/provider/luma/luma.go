package luma

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/provider"
)

// PublicURL is where Luma's Dream Machine API is.
const PublicURL = "https://api.lumalabs.ai/dream-machine/v1"

// refusals are the create answers that made nothing. Luma's error
// reference lists the create errors as returned by the create call
// itself, before a generation exists, without their status: genform
// takes the two statuses of a request refused as invalid, 400 and 422
// (the schema's validation), as those; 401 and 403 refuse the key (Luma's
// API error guide: 401 "Invalid or missing API key", 403 "Access denied",
// a suspended or deactivated account), 402 is too little credit (a cap,
// capReached), and 404 is an endpoint that is not there. Any other answer
// is possibly paid.
var refusals = []int{
	http.StatusBadRequest, http.StatusUnauthorized, http.StatusPaymentRequired,
	http.StatusForbidden, http.StatusNotFound, http.StatusUnprocessableEntity,
}

// capReached ends a create answered 402 at once, as provider.ErrCapReached
// in Luma's words: the account's credits do not cover the generation,
// which Luma charges before it makes anything ("We pre-charge your account
// to ensure sufficient credits for the generation", docs.lumalabs.ai,
// FAQ), and every other create would be answered alike. 402 is the status
// Luma's API error guide gives "Insufficient credits" (docs.agents.lumalabs.ai,
// Error handling, "402 Insufficient credits: No, add credits"; read
// 2026-12-07); the Dream Machine reference names no status for it.
func capReached(e *apiclient.Error) error {
	if e.HTTPStatus == http.StatusPaymentRequired {
		return fmt.Errorf("%w (too little credit on the Luma API account): %w", provider.ErrCapReached, e)
	}
	return nil
}

// Provider is Luma's Dream Machine API behind the provider seam.
type Provider struct {
	provider.Base
	// generations follows the generations, holding the answer of each
	// Status saw completed for the Result that follows.
	generations provider.Polled[generation]
}

var (
	_ provider.Provider  = (*Provider)(nil)
	_ provider.Recoverer = (*Provider)(nil)
)

// New is Luma's API as cfg configures it.
func New(cfg provider.Config) (*Provider, error) {
	// The key is checked by reading its credit balance (GET /credits),
	// which makes nothing.
	b, err := provider.NewBase("luma", cfg, PublicURL, provider.Auth{Scheme: "Bearer"}, apiclient.Call{Method: http.MethodGet, Path: "/credits"})
	if err != nil {
		return nil, err
	}
	p := &Provider{Base: b}
	p.generations = provider.Polled[generation]{
		Get: p.get, StatusOf: statusOf, Noun: "luma: generation", DoneRaw: stateCompleted, Hold: true,
	}
	return p, nil
}

// createPath is the create endpoint of kind.
func createPath(kind addrs.Kind) (string, error) {
	switch kind {
	case addrs.Image:
		return "/generations/image", nil
	case addrs.Video:
		return "/generations/video", nil
	}
	return "", fmt.Errorf("luma makes images and videos, not %s", kind)
}

// createBody is the body of a create of r: r's body, an object, with
// the model r targets.
func createBody(r provider.Request) (map[string]any, error) {
	if !provider.ValidID(r.Target) {
		return nil, fmt.Errorf("luma model %q is not a model id such as photon-1 or ray-2", r.Target)
	}
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.UseNumber()
	var body map[string]any
	if err := dec.Decode(&body); err != nil || body == nil {
		return nil, fmt.Errorf("luma: the request body is not a JSON object")
	}
	if m, ok := body["model"]; ok && m != r.Target {
		return nil, fmt.Errorf("luma: the request body names model %v, the request %s", m, r.Target)
	}
	body["model"] = r.Target
	return body, nil
}

// Submit creates the generation, once.
func (p *Provider) Submit(ctx context.Context, r provider.Request) (provider.Job, error) {
	path, err := createPath(r.Kind)
	if err != nil {
		return provider.Job{}, err
	}
	body, err := createBody(r)
	if err != nil {
		return provider.Job{}, err
	}
	b, err := json.Marshal(body)
	if err != nil {
		return provider.Job{}, fmt.Errorf("building the create request: %w", err)
	}
	a, err := p.Client.Do(ctx, apiclient.Call{Method: http.MethodPost, Path: path, Body: b, Create: true, Refusals: refusals, Final: capReached})
	if err != nil {
		return provider.Job{}, err
	}
	var g generation
	if err := json.Unmarshal(a, &g); err != nil || !provider.ValidID(g.ID) {
		// A 2xx is a generation made, and paid for; only its id is lost.
		return provider.Job{}, fmt.Errorf("%w: POST %s: the answer names no generation id", provider.ErrPossiblyPaid, path)
	}
	return provider.Job{ID: g.ID, Kind: r.Kind}, nil
}

// generation is the part of a generation genform reads.
type generation struct {
	ID             string          `json:"id"`
	GenerationType string          `json:"generation_type"`
	State          string          `json:"state"`
	FailureReason  *string         `json:"failure_reason"`
	CreatedAt      string          `json:"created_at"`
	Model          string          `json:"model"`
	Request        json.RawMessage `json:"request"`
	Assets         *struct {
		Image string `json:"image"`
		Video string `json:"video"`
	} `json:"assets"`
}

// get fetches the generation of j.
func (p *Provider) get(ctx context.Context, j provider.Job) (*generation, []byte, error) {
	return provider.FetchJob[generation](ctx, &p.Base, "luma", "generation", "/generations/", j.ID, nil)
}

// The states Luma documents.
const (
	stateQueued    = "queued"
	stateDreaming  = "dreaming"
	stateCompleted = "completed"
	stateFailed    = "failed"
)

// refusedRE matches the failure reasons Luma's error reference lists
// under moderation: "Contains blacklisted words", "Frame moderation
// failed", "Advanced prompt moderation failed".
var refusedRE = regexp.MustCompile(`(?i)blacklisted words|moderation failed`)

// Status reads the generation's state.
func (p *Provider) Status(ctx context.Context, j provider.Job) (provider.Status, error) {
	return p.generations.Status(ctx, j)
}

func statusOf(g *generation) provider.Status {
	s := provider.Status{Raw: apiclient.Printable(g.State), Known: true}
	switch g.State {
	case stateQueued, stateDreaming:
	case stateCompleted:
		s.State, s.Progress = provider.Done, 1
	case stateFailed:
		var reason string
		if g.FailureReason != nil {
			reason = provider.FailureText(*g.FailureReason, "")
		}
		s.Fail(reason, "the generation failed")
		s.Refused = refusedRE.MatchString(s.Reason)
	default:
		s.Known = false
	}
	return s
}

// Result fetches the completed generation and reads its one asset:
// assets.image or assets.video.
func (p *Provider) Result(ctx context.Context, j provider.Job) (*provider.Result, error) {
	g, b, err := p.generations.Done(ctx, j)
	if err != nil {
		return nil, err
	}
	res := &provider.Result{CreationID: g.ID, Kind: j.Kind, Detail: b}
	var req struct {
		Prompt any `json:"prompt"`
	}
	if json.Unmarshal(g.Request, &req) == nil {
		res.Prompt, _ = req.Prompt.(string)
	}
	var asset string
	switch {
	case g.Assets == nil:
	case g.Assets.Video != "":
		res.Kind, asset = addrs.Video, g.Assets.Video
	case g.Assets.Image != "":
		res.Kind, asset = addrs.Image, g.Assets.Image
	}
	if asset == "" {
		return nil, fmt.Errorf("luma: generation %s is completed and names no assets.image nor assets.video", g.ID)
	}
	res.Outputs = []provider.Output{{URL: asset}}
	return res, nil
}
