package runway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/provider"
)

// PublicURL is where Runway's API is.
const PublicURL = "https://api.dev.runwayml.com"

// APIVersion is the X-Runway-Version every request carries: the version
// the official clients send, which the API requires.
const APIVersion = "2024-11-06"

// version is the header every request carries.
var version = map[string]string{"X-Runway-Version": APIVersion}

// refusals are the create answers Runway's reference documents as not
// to be retried, each a request it did not act on: a problem with an
// input (400), a key it does not accept (401), an endpoint or model it
// does not have (404), a method it does not take (405).
var refusals = []int{
	http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound, http.StatusMethodNotAllowed,
}

// Provider is Runway's API behind the provider seam.
type Provider struct {
	provider.Base
	// tasks follows the tasks. It holds no answer: Runway's URLs expire
	// within a day or two and a new GET of the task hands out fresh
	// ones, so each Result asks again.
	tasks provider.Polled[task]
}

var _ provider.Provider = (*Provider)(nil)

// New is Runway's API as cfg configures it.
func New(cfg provider.Config) (*Provider, error) {
	// The key is checked by reading its organization (GET
	// /v1/organization: its tier, credits and usage), which makes nothing.
	// Runway's error reference names 401 alone for a key ("The provided
	// API key is not valid"; docs.dev.runwayml.com/api-details/errors,
	// read 2026-12-07) and lists no 403: any other refusal fails its
	// request only. A 403 to the check, a read of the key's own
	// organization, can only be about the key.
	b, err := provider.NewBase("runway", cfg, PublicURL,
		provider.Auth{Scheme: "Bearer", KeyRefusals: []int{http.StatusUnauthorized}},
		apiclient.Call{Method: http.MethodGet, Path: "/v1/organization", Header: version,
			KeyRefusals: []int{http.StatusUnauthorized, http.StatusForbidden}})
	if err != nil {
		return nil, err
	}
	p := &Provider{Base: b}
	p.tasks = provider.Polled[task]{Get: p.get, StatusOf: statusOf, Noun: "runway: task", DoneRaw: statusSucceeded}
	return p, nil
}

// modelRE is a model id as Runway spells them ("gen4_image", "gen4.5",
// "veo3.1_fast").
var modelRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// endpoint is the create path of a request: text_to_image for an image;
// for a video, video_to_video when it has a source video (videoUri, as
// aleph2 and gemini_omni_flash take it, or promptVideo, as Seedance,
// Hailuo and gemini_omni_flash_1.1 do; @runwayml/sdk 4.20.1
// video-to-video.ts), image_to_video when it has a promptImage, and
// text_to_video otherwise.
func endpoint(kind addrs.Kind, body map[string]json.RawMessage) (string, error) {
	switch kind {
	case addrs.Image:
		return "/v1/text_to_image", nil
	case addrs.Video:
		_, uri := body["videoUri"]
		_, video := body["promptVideo"]
		if uri || video {
			return "/v1/video_to_video", nil
		}
		if _, ok := body["promptImage"]; ok {
			return "/v1/image_to_video", nil
		}
		return "/v1/text_to_video", nil
	}
	return "", fmt.Errorf("runway makes images and videos, not %s", kind)
}

// dailyLimitRE matches the message of a 429 that says the account's
// daily generations limit is reached (Runway's: "Your daily task limit
// has been reached."), which no wait within an apply lifts.
var dailyLimitRE = regexp.MustCompile(`(?i)\bdaily\b.*\blimit\b|\bquota\b`)

// noCreditsRE matches the message of a create the organization's credits
// do not cover: "You do not have enough credits to run this task." (as
// Runway's API answered a user of sdk-node,
// https://github.com/runwayml/sdk-node/issues/28,
// where a maintainer confirms an unfunded account cannot generate; read
// 2026-12-07). Runway's monthly spend limit caps the credits an
// organization may buy in 30 days ("You will be prevented from purchasing
// more than this amount", docs.dev.runwayml.com/usage/tiers), so a
// monthly cap reached shows as this answer once the credits are spent.
var noCreditsRE = regexp.MustCompile(`(?i)\bnot have enough credits\b|\binsufficient credits?\b`)

// capReached ends a create refused for the daily limit, or for credits
// spent, at once, as provider.ErrCapReached with Runway's words; any
// other 429 stays a throttle, sent again after its wait.
func capReached(e *apiclient.Error) error {
	switch {
	case e.HTTPStatus == http.StatusTooManyRequests && dailyLimitRE.MatchString(e.Message):
		return fmt.Errorf("%w (Runway's daily generations of this model): %w", provider.ErrCapReached, e)
	case e.HTTPStatus >= 400 && e.HTTPStatus < 500 && noCreditsRE.MatchString(e.Message):
		return fmt.Errorf("%w (the Runway organization's credits are spent): %w", provider.ErrCapReached, e)
	}
	return nil
}

// Submit creates the task, once: the request's body with "model" set to
// its target, posted to the endpoint of its kind.
func (p *Provider) Submit(ctx context.Context, r provider.Request) (provider.Job, error) {
	if !modelRE.MatchString(r.Target) {
		return provider.Job{}, fmt.Errorf("runway: model %q is not a model id such as gen4_image", r.Target)
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &body); err != nil || body == nil {
		return provider.Job{}, fmt.Errorf("runway: the request body is not a JSON object")
	}
	if m, ok := body["model"]; ok {
		var named string
		if json.Unmarshal(m, &named) != nil || named != r.Target {
			return provider.Job{}, fmt.Errorf("runway: input sets model %s, and the block's model is %q; set it once", m, r.Target)
		}
	}
	path, err := endpoint(r.Kind, body)
	if err != nil {
		return provider.Job{}, err
	}
	body["model"], _ = json.Marshal(r.Target)
	b, err := json.Marshal(body)
	if err != nil {
		return provider.Job{}, fmt.Errorf("building the create request: %w", err)
	}
	a, err := p.Client.Do(ctx, apiclient.Call{
		Method: http.MethodPost, Path: path, Body: b, Header: version,
		Create: true, Refusals: refusals, Final: capReached,
	})
	if err != nil {
		return provider.Job{}, err
	}
	var created struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(a, &created); err != nil || !provider.ValidID(created.ID) {
		// A 2xx is a task made, and paid for; only its id is lost.
		return provider.Job{}, fmt.Errorf("%w: POST %s: the answer names no task id", provider.ErrPossiblyPaid, path)
	}
	return provider.Job{ID: created.ID, Kind: r.Kind, Target: r.Target}, nil
}

// task is the part of a task genform reads.
type task struct {
	ID          string   `json:"id"`
	Status      string   `json:"status"`
	Progress    *float64 `json:"progress"`
	Failure     any      `json:"failure"`
	FailureCode string   `json:"failureCode"`
	Output      []string `json:"output"`
}

// get fetches the task of j, anew.
func (p *Provider) get(ctx context.Context, j provider.Job) (*task, []byte, error) {
	return provider.FetchJob[task](ctx, &p.Base, "runway", "task", "/v1/tasks/", j.ID, version)
}

// The statuses Runway documents.
const (
	statusPending   = "PENDING"
	statusThrottled = "THROTTLED"
	statusRunning   = "RUNNING"
	statusSucceeded = "SUCCEEDED"
	statusFailed    = "FAILED"
	statusCancelled = "CANCELLED"
)

// safetyPrefix begins the failure code of a task Runway's moderation
// refused, its input or its output.
const safetyPrefix = "SAFETY."

// Status reads the task's status.
func (p *Provider) Status(ctx context.Context, j provider.Job) (provider.Status, error) {
	return p.tasks.Status(ctx, j)
}

func statusOf(t *task) provider.Status {
	s := provider.Status{Raw: apiclient.Printable(t.Status), Known: true}
	switch t.Status {
	case statusPending:
	case statusThrottled:
		s.Throttled = true
	case statusRunning:
		if t.Progress != nil {
			s.Progress = min(max(*t.Progress, 0), 1)
		}
	case statusSucceeded:
		s.State, s.Progress = provider.Done, 1
	case statusFailed:
		s.Fail(provider.FailureText(provider.ErrorText(t.Failure), t.FailureCode), "the task failed")
		s.Refused = strings.HasPrefix(t.FailureCode, safetyPrefix)
	case statusCancelled:
		s.State, s.Reason = provider.Failed, "the task was cancelled (or deleted) on Runway"
	default:
		s.Known = false
	}
	return s
}

// Result fetches the task anew and reads its output, a list of URLs.
func (p *Provider) Result(ctx context.Context, j provider.Job) (*provider.Result, error) {
	t, b, err := p.tasks.Done(ctx, j)
	if err != nil {
		return nil, err
	}
	if len(t.Output) == 0 {
		return nil, fmt.Errorf("runway: task %s succeeded with no output", j.ID)
	}
	res := &provider.Result{CreationID: j.ID, Kind: j.Kind, Detail: b}
	for i, u := range t.Output {
		res.Outputs = append(res.Outputs, provider.Output{Index: i, URL: u})
	}
	return res, nil
}
