package replicate

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/provider"
)

// PublicURL is where Replicate's API is.
const PublicURL = "https://api.replicate.com"

// refusals are the create answers that made no prediction: an
// unauthenticated key (401), too little credit (402), a forbidden or
// unknown model or version (403, 404), an invalid input or version
// (422). Replicate answers each with a problem document, never with a
// prediction.
var refusals = []int{
	http.StatusUnauthorized, http.StatusPaymentRequired, http.StatusForbidden,
	http.StatusNotFound, http.StatusUnprocessableEntity,
}

// Provider is Replicate's predictions API behind the provider seam.
type Provider struct {
	provider.Base
	now func() time.Time

	// predictions follows the predictions, holding the answer of each
	// Status saw succeed for the Result that follows.
	predictions provider.Polled[prediction]
}

var (
	_ provider.Provider  = (*Provider)(nil)
	_ provider.Recoverer = (*Provider)(nil)
)

// New is Replicate's API as cfg configures it.
func New(cfg provider.Config) (*Provider, error) {
	// The key is checked by reading its account (GET /v1/account),
	// which makes nothing. Only a 401 refuses the key ("Unauthenticated"):
	// a 403 to a create is a model or version the account may not run
	// (Replicate's HTTP reference, predictions.create), and fails that
	// instance alone. A 403 to the check, a read of the key's own
	// account, can only be about the key.
	b, err := provider.NewBase("replicate", cfg, PublicURL,
		provider.Auth{Scheme: "Bearer", KeyRefusals: []int{http.StatusUnauthorized}},
		apiclient.Call{Method: http.MethodGet, Path: "/v1/account", KeyRefusals: []int{http.StatusUnauthorized, http.StatusForbidden}})
	if err != nil {
		return nil, err
	}
	p := &Provider{Base: b, now: time.Now}
	p.predictions = provider.Polled[prediction]{
		Get: p.get, StatusOf: statusOf, Noun: "replicate: prediction", DoneRaw: statusSucceeded, Hold: true,
	}
	return p, nil
}

// Handle is what following a prediction needs: the URLs its create
// answer named.
type Handle struct {
	Get    string `json:"get"`
	Cancel string `json:"cancel"`
}

// target is a request's target read: the model (owner/name, "" for a
// bare hash) and the version (the hash, "" for an official model).
type target struct{ model, version string }

var hashRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

func parseTarget(t string) (target, error) {
	name, hash, pinned := strings.Cut(t, ":")
	switch {
	case !pinned && hashRE.MatchString(t):
		return target{version: t}, nil
	case pinned && !hashRE.MatchString(hash):
		return target{}, fmt.Errorf("replicate: version %q: the version after the colon is not a 64-digit hash", t)
	}
	owner, model, ok := strings.Cut(name, "/")
	if !ok || owner == "" || model == "" || strings.ContainsAny(model, "/ ") || strings.Contains(owner, " ") {
		return target{}, fmt.Errorf("replicate: model %q is not owner/name, owner/name:version or a version hash", t)
	}
	return target{model: name, version: hash}, nil
}

// minCancelAfter is the shortest Cancel-After sent: a deadline closer
// than that is left to the context alone.
const minCancelAfter = 5 * time.Second

// Submit creates the prediction, once.
func (p *Provider) Submit(ctx context.Context, r provider.Request) (provider.Job, error) {
	t, err := parseTarget(r.Target)
	if err != nil {
		return provider.Job{}, err
	}
	var call apiclient.Call
	if t.version == "" {
		owner, name, _ := strings.Cut(t.model, "/")
		call.Path = "/v1/models/" + url.PathEscape(owner) + "/" + url.PathEscape(name) + "/predictions"
		call.Body, err = json.Marshal(struct {
			Input json.RawMessage `json:"input"`
		}{r.Body})
	} else {
		call.Path = "/v1/predictions"
		call.Body, err = json.Marshal(struct {
			Version string          `json:"version"`
			Input   json.RawMessage `json:"input"`
		}{r.Target, r.Body})
	}
	if err != nil {
		return provider.Job{}, fmt.Errorf("building the create request: %w", err)
	}
	call.Method, call.Create, call.Refusals, call.Final = http.MethodPost, true, refusals, outOfCredit
	if h := cancelAfter(ctx, p.now()); h != "" {
		call.Header = map[string]string{"Cancel-After": h}
	}
	b, err := p.Client.Do(ctx, call)
	if err != nil {
		return provider.Job{}, err
	}
	var a prediction
	if err := json.Unmarshal(b, &a); err != nil || !provider.ValidID(a.ID) {
		// A 2xx is a prediction made, and paid for; only its id is lost.
		return provider.Job{}, fmt.Errorf("%w: POST %s: the answer names no prediction id", provider.ErrPossiblyPaid, call.Path)
	}
	h, _ := json.Marshal(Handle{Get: a.URLs.Get, Cancel: a.URLs.Cancel})
	return provider.Job{ID: a.ID, Kind: r.Kind, Handle: h}, nil
}

// outOfCredit ends a create answered 402 (the account has too little
// credit) as a cap reached: every other create would be answered alike,
// so the apply stops in Replicate's words instead of failing each one.
func outOfCredit(e *apiclient.Error) error {
	if e.HTTPStatus == http.StatusPaymentRequired {
		return fmt.Errorf("%w (too little credit on the Replicate account): %w", provider.ErrCapReached, e)
	}
	return nil
}

// cancelAfter is the Cancel-After header for the time ctx leaves, in
// whole seconds ("1500s"), or "" without a deadline or with less than
// minCancelAfter left.
func cancelAfter(ctx context.Context, now time.Time) string {
	deadline, ok := ctx.Deadline()
	if !ok || deadline.Sub(now) < minCancelAfter {
		return ""
	}
	return strconv.FormatInt(int64(deadline.Sub(now)/time.Second), 10) + "s"
}

// prediction is the part of a prediction genform reads.
type prediction struct {
	ID          string          `json:"id"`
	Model       string          `json:"model"`
	Version     string          `json:"version"`
	Status      string          `json:"status"`
	Input       json.RawMessage `json:"input"`
	Output      json.RawMessage `json:"output"`
	Error       any             `json:"error"`
	Metrics     json.RawMessage `json:"metrics"`
	Source      string          `json:"source"`
	CreatedAt   string          `json:"created_at"`
	DataRemoved bool            `json:"data_removed"`
	URLs        struct {
		Get    string `json:"get"`
		Cancel string `json:"cancel"`
	} `json:"urls"`
}

// get fetches the prediction of j, from the get URL its create answer
// named.
func (p *Provider) get(ctx context.Context, j provider.Job) (*prediction, []byte, error) {
	var h Handle
	call := apiclient.Call{Method: http.MethodGet, Path: "/v1/predictions/" + url.PathEscape(j.ID)}
	if json.Unmarshal(j.Handle, &h) == nil && h.Get != "" {
		call.URL = h.Get
	}
	return provider.FetchCall[prediction](ctx, &p.Base, call, "prediction "+j.ID)
}

// The statuses Replicate documents.
const (
	statusStarting   = "starting"
	statusProcessing = "processing"
	statusSucceeded  = "succeeded"
	statusFailed     = "failed"
	statusCanceled   = "canceled"
	statusAborted    = "aborted"
)

// refusedRE matches the error of a prediction a safety checker refused:
// Replicate reports moderation as a failed prediction whose error names
// NSFW content, or sensitive or flagged content.
var refusedRE = regexp.MustCompile(`(?i)nsfw|flagged as sensitive|content (policy|moderation)|safety (checker|filter)`)

// Status reads the prediction's status.
func (p *Provider) Status(ctx context.Context, j provider.Job) (provider.Status, error) {
	return p.predictions.Status(ctx, j)
}

func statusOf(a *prediction) provider.Status {
	s := provider.Status{Raw: apiclient.Printable(a.Status), Known: true}
	switch a.Status {
	case statusStarting, statusProcessing:
	case statusSucceeded:
		s.State, s.Progress = provider.Done, 1
	case statusFailed:
		s.Fail(apiclient.Printable(provider.ErrorText(a.Error)), "the prediction failed")
		s.Refused = refusedRE.MatchString(s.Reason)
	case statusCanceled:
		s.State, s.Reason = provider.Failed, "the prediction was canceled (its Cancel-After deadline passed while it ran, or it was canceled)"
	case statusAborted:
		s.State, s.Reason = provider.Failed, "the prediction was aborted: its Cancel-After deadline passed before it started"
	default:
		s.Known = false
	}
	return s
}

// Result fetches the prediction and reads its output: a URL or a list of
// URLs. Replicate removes the output an hour after the prediction
// finished; a prediction read later has none, and that is an error.
func (p *Provider) Result(ctx context.Context, j provider.Job) (*provider.Result, error) {
	a, b, err := p.predictions.Done(ctx, j)
	if err != nil {
		return nil, err
	}
	res := &provider.Result{CreationID: a.ID, Kind: j.Kind, Detail: b, Version: apiclient.Printable(a.Version)}
	if len(a.Metrics) > 0 && string(a.Metrics) != "null" {
		res.Usage = a.Metrics
	}
	var in struct {
		Prompt any `json:"prompt"`
	}
	if json.Unmarshal(a.Input, &in) == nil {
		res.Prompt, _ = in.Prompt.(string)
	}
	var one string
	var many []string
	switch {
	case json.Unmarshal(a.Output, &one) == nil && one != "":
		many = []string{one}
	case json.Unmarshal(a.Output, &many) == nil && len(many) > 0:
	case a.DataRemoved:
		return nil, fmt.Errorf("replicate: prediction %s: its output was removed (Replicate keeps an API prediction's output for an hour)", a.ID)
	default:
		return nil, fmt.Errorf("replicate: prediction %s: its output is neither a URL nor a list of URLs", a.ID)
	}
	for i, u := range many {
		res.Outputs = append(res.Outputs, provider.Output{Index: i, URL: u})
	}
	return res, nil
}
