package lumaagents

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/provider"
)

// PublicURL is where Luma's Agents API is.
const PublicURL = "https://agents.lumalabs.ai/v1"

// refusals are the create answers that made nothing, each "No" in the
// error reference's "Retryable?" column: 400 invalid parameters, 401 a
// key it does not take, 402 too little balance (a cap, capReached), 403
// a suspended or deactivated client, 413 media over the size limit, 422
// a combination rejected or bad media data; and 404, an endpoint that is
// not there. Any other answer (429 aside, which is sent again after its
// wait) is possibly paid.
var refusals = []int{
	http.StatusBadRequest, http.StatusUnauthorized, http.StatusPaymentRequired,
	http.StatusForbidden, http.StatusNotFound, http.StatusRequestEntityTooLarge,
	http.StatusUnprocessableEntity,
}

// capReached ends a create answered 402 at once, as provider.ErrCapReached
// in Luma's words: the balance does not cover the generation ("402
// Insufficient balance: No — add funds", Error handling), and every other
// create would be answered alike.
func capReached(e *apiclient.Error) error {
	if e.HTTPStatus == http.StatusPaymentRequired {
		return fmt.Errorf("%w (too little balance on the Luma API account): %w", provider.ErrCapReached, e)
	}
	return nil
}

// Provider is Luma's Agents API behind the provider seam.
type Provider struct {
	provider.Base
	// generations follows the generations. It holds no answer: the output
	// URLs are presigned for an hour, and a new read hands out fresh
	// ones, so each Result asks again.
	generations provider.Polled[generation]
}

var _ provider.Provider = (*Provider)(nil)

// New is Luma's Agents API as cfg configures it.
func New(cfg provider.Config) (*Provider, error) {
	// The API has two endpoints, create and get, and no read that makes
	// nothing but one of a generation: no key check (a made-up id would
	// be an answer no document promises). A wrong key is refused, 401,
	// at the first create, which makes nothing.
	b, err := provider.NewBase(Table.Name, cfg, PublicURL, provider.Auth{Scheme: "Bearer"}, apiclient.Call{})
	if err != nil {
		return nil, err
	}
	p := &Provider{Base: b}
	p.generations = provider.Polled[generation]{
		Get: p.get, StatusOf: statusOf, Noun: "luma_agents: generation", DoneRaw: stateCompleted,
	}
	return p, nil
}

// types are the generation types each kind may set (GenerationCreateParams
// type); the first is the one a request that sets none is sent as.
var types = map[addrs.Kind][]string{
	addrs.Image: {"image", "image_edit"},
	addrs.Video: {"video", "video_edit", "video_reframe"},
}

// createBody is the body of a create of r: r's body, an object, with the
// model r targets and its type: the one the body sets, or the kind's
// (image_edit for an image with a source).
func createBody(r provider.Request) (map[string]any, error) {
	if !provider.ValidID(r.Target) {
		return nil, fmt.Errorf("luma_agents model %q is not a model id such as uni-1 or ray-3.2", r.Target)
	}
	allowed, ok := types[r.Kind]
	if !ok {
		return nil, fmt.Errorf("luma_agents makes images and videos, not %s", r.Kind)
	}
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.UseNumber()
	var body map[string]any
	if err := dec.Decode(&body); err != nil || body == nil {
		return nil, fmt.Errorf("luma_agents: the request body is not a JSON object")
	}
	if m, ok := body["model"]; ok && m != r.Target {
		return nil, fmt.Errorf("luma_agents: the request body names model %v, the request %s", m, r.Target)
	}
	body["model"] = r.Target
	switch t, ok := body["type"].(string); {
	case !ok && body["type"] != nil:
		return nil, fmt.Errorf("luma_agents: the request body's type is not a string")
	case !ok && r.Kind == addrs.Image && body["source"] != nil:
		body["type"] = "image_edit"
	case !ok:
		body["type"] = allowed[0]
	case !slices.Contains(allowed, t):
		return nil, fmt.Errorf("luma_agents: type %q makes no %s; a %s is one of %s", t, r.Kind, r.Kind, strings.Join(allowed, ", "))
	}
	return body, nil
}

// Submit creates the generation, once.
func (p *Provider) Submit(ctx context.Context, r provider.Request) (provider.Job, error) {
	body, err := createBody(r)
	if err != nil {
		return provider.Job{}, err
	}
	b, err := json.Marshal(body)
	if err != nil {
		return provider.Job{}, fmt.Errorf("building the create request: %w", err)
	}
	a, err := p.Client.Do(ctx, apiclient.Call{Method: http.MethodPost, Path: "/generations", Body: b, Create: true, Refusals: refusals, Final: capReached})
	if err != nil {
		return provider.Job{}, err
	}
	var g generation
	if err := json.Unmarshal(a, &g); err != nil || !provider.ValidID(g.ID) {
		// A 2xx is a generation made, and paid for; only its id is lost.
		return provider.Job{}, fmt.Errorf("%w: POST /generations: the answer names no generation id", provider.ErrPossiblyPaid)
	}
	return provider.Job{ID: g.ID, Kind: r.Kind}, nil
}

// generation is the part of a generation genform reads (Generation).
type generation struct {
	ID            string  `json:"id"`
	CreatedAt     string  `json:"created_at"`
	Model         string  `json:"model"`
	State         string  `json:"state"`
	Type          string  `json:"type"`
	FailureCode   *string `json:"failure_code"`
	FailureReason *string `json:"failure_reason"`
	Output        []struct {
		Type string `json:"type"`
		URL  string `json:"url"`
	} `json:"output"`
}

// get fetches the generation of j.
func (p *Provider) get(ctx context.Context, j provider.Job) (*generation, []byte, error) {
	return provider.FetchJob[generation](ctx, &p.Base, Table.Name, "generation", "/generations/", j.ID, nil)
}

// The states the reference lists, and the failure code of moderation.
const (
	stateQueued     = "queued"
	stateProcessing = "processing"
	stateCompleted  = "completed"
	stateFailed     = "failed"
	codeModerated   = "content_moderated"
)

// Status reads the generation's state.
func (p *Provider) Status(ctx context.Context, j provider.Job) (provider.Status, error) {
	return p.generations.Status(ctx, j)
}

func statusOf(g *generation) provider.Status {
	s := provider.Status{Raw: apiclient.Printable(g.State), Known: true}
	switch g.State {
	case stateQueued, stateProcessing:
	case stateCompleted:
		s.State, s.Progress = provider.Done, 1
	case stateFailed:
		var reason, code string
		if g.FailureReason != nil {
			reason = *g.FailureReason
		}
		if g.FailureCode != nil {
			code = *g.FailureCode
		}
		s.Fail(provider.FailureText(reason, code), "the generation failed")
		s.Refused = code == codeModerated
	default:
		s.Known = false
	}
	return s
}

// Result reads the completed generation anew (for fresh links) and takes
// its outputs.
func (p *Provider) Result(ctx context.Context, j provider.Job) (*provider.Result, error) {
	g, b, err := p.generations.Done(ctx, j)
	if err != nil {
		return nil, err
	}
	res := &provider.Result{CreationID: g.ID, Kind: j.Kind, Detail: b}
	for _, o := range g.Output {
		if o.URL != "" {
			res.Outputs = append(res.Outputs, provider.Output{URL: o.URL})
		}
	}
	if len(res.Outputs) == 0 {
		return nil, fmt.Errorf("luma_agents: generation %s is completed and names no output", g.ID)
	}
	return res, nil
}
