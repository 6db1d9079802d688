package fal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/provider"
)

// PublicURL is where fal's queue API is.
const PublicURL = "https://queue.fal.run"

// refusals are the submit answers that made, and charged, nothing: the
// key refused (401), or an account fal does not serve (403: a locked
// account's requests are rejected, fal's FAQ says).
var refusals = []int{http.StatusUnauthorized, http.StatusForbidden}

// Provider is fal's queue API behind the provider seam.
type Provider struct {
	provider.Base
}

var _ provider.Provider = (*Provider)(nil)

// New is fal's queue API as cfg configures it.
func New(cfg provider.Config) (*Provider, error) {
	// The queue API takes "Authorization: Key $FAL_KEY"; the files are
	// public URLs on fal's CDN (fal.media), fetched without the key.
	b, err := provider.NewBase("fal", cfg, PublicURL, provider.Auth{Scheme: "Key", PublicFiles: true},
		apiclient.Call{Method: http.MethodGet, Path: "/fal-ai/flux/requests/" + noRequest + "/status"})
	if err != nil {
		return nil, err
	}
	return &Provider{Base: b}, nil
}

// Handle is what following a fal request needs: the URLs its submit
// answer named.
type Handle struct {
	StatusURL   string `json:"status_url"`
	ResponseURL string `json:"response_url"`
	CancelURL   string `json:"cancel_url"`
}

// modelPath escapes a model id ("fal-ai/flux/dev") as a path below the
// base URL, refusing one with an empty, "." or ".." segment.
func modelPath(model string) (string, error) {
	segs := strings.Split(model, "/")
	if len(segs) < 2 {
		return "", fmt.Errorf("fal model %q is not an id such as fal-ai/flux/dev", model)
	}
	for i, s := range segs {
		if s == "" || s == "." || s == ".." {
			return "", fmt.Errorf("fal model %q has an empty or relative segment", model)
		}
		segs[i] = url.PathEscape(s)
	}
	return "/" + strings.Join(segs, "/"), nil
}

// Submit posts the model's input to the queue, once. It refuses, before
// anything is sent, an input asking for sync_mode (validate refuses it
// too): fal would answer the media inline as data URIs, which genform
// does not keep, and charge for them all the same.
func (p *Provider) Submit(ctx context.Context, r provider.Request) (provider.Job, error) {
	path, err := modelPath(r.Target)
	if err != nil {
		return provider.Job{}, err
	}
	var in struct {
		SyncMode any `json:"sync_mode"`
	}
	if json.Unmarshal(r.Body, &in) == nil && in.SyncMode != nil && in.SyncMode != false {
		return provider.Job{}, errors.New("fal: the input sets sync_mode, with which fal returns the media inline as data URIs instead of file URLs, which genform does not keep; remove it: genform uses fal's queue and downloads the files")
	}
	b, err := p.Client.Do(ctx, apiclient.Call{Method: http.MethodPost, Path: path, Body: r.Body, Create: true, Refusals: refusals})
	if err != nil {
		return provider.Job{}, err
	}
	var a struct {
		RequestID string `json:"request_id"`
		Handle
	}
	if err := json.Unmarshal(b, &a); err != nil || !provider.ValidID(a.RequestID) ||
		!absolute(a.StatusURL) || !absolute(a.ResponseURL) {
		// The request is queued, and will be charged; what follows it is lost.
		return provider.Job{}, fmt.Errorf("%w: POST %s: the answer names no request id and status and response URLs", provider.ErrPossiblyPaid, path)
	}
	h, _ := json.Marshal(a.Handle)
	return provider.Job{ID: a.RequestID, Kind: r.Kind, Handle: h}, nil
}

func absolute(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// handleOf is what follows j: the URLs its submit answer named, or, for a
// request genform did not submit (one adopted by import), the URLs fal's
// queue gives every request of the model's app, built from the model as
// fal's clients build them (the app is the model id's first two
// segments).
func (p *Provider) handleOf(j provider.Job) (Handle, error) {
	var h Handle
	if len(j.Handle) == 0 && j.Target != "" && provider.ValidID(j.ID) {
		segs := strings.Split(j.Target, "/")
		if len(segs) >= 2 {
			app, err := modelPath(strings.Join(segs[:2], "/"))
			if err != nil {
				return h, err
			}
			base := strings.TrimRight(p.Client.BaseURL(), "/") + app + "/requests/" + url.PathEscape(j.ID)
			return Handle{StatusURL: base + "/status", ResponseURL: base, CancelURL: base + "/cancel"}, nil
		}
	}
	if err := json.Unmarshal(j.Handle, &h); err != nil || h.StatusURL == "" || h.ResponseURL == "" {
		return h, fmt.Errorf("fal request %s: its record holds no status and response URLs", j.ID)
	}
	return h, nil
}

// The statuses fal documents.
const (
	statusInQueue    = "IN_QUEUE"
	statusInProgress = "IN_PROGRESS"
	statusCompleted  = "COMPLETED"
)

// contentPolicy is the error type of a request fal's moderation refused.
const contentPolicy = "content_policy_violation"

// Status reads the request's status URL. COMPLETED with an error (fal's
// clients read "error" and "error_type" there) is a failure, refused when
// its type is content_policy_violation; a status fal does not document is
// shown and followed.
func (p *Provider) Status(ctx context.Context, j provider.Job) (provider.Status, error) {
	h, err := p.handleOf(j)
	if err != nil {
		return provider.Status{}, err
	}
	b, err := p.Client.Do(ctx, apiclient.Call{Method: http.MethodGet, URL: h.StatusURL})
	if err != nil {
		return provider.Status{}, err
	}
	var a struct {
		Status    string `json:"status"`
		Error     any    `json:"error"`
		ErrorType string `json:"error_type"`
	}
	if err := json.Unmarshal(b, &a); err != nil {
		return provider.Status{}, fmt.Errorf("GET %s: decoding the status: %w", redact(h.StatusURL), err)
	}
	s := provider.Status{Raw: apiclient.Printable(a.Status), Known: true}
	switch a.Status {
	case statusInQueue, statusInProgress:
	case statusCompleted:
		s.State, s.Progress = provider.Done, 1
		if msg := provider.ErrorText(a.Error); msg != "" || a.ErrorType != "" {
			s.State = provider.Failed
			s.Reason = provider.FailureText(msg, a.ErrorType)
			s.Refused = a.ErrorType == contentPolicy
		}
	default:
		s.Known = false
	}
	return s, nil
}

// redact is a URL without its query, for messages.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "the URL fal handed out"
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return u.String()
}

// result is the part of a result document genform reads.
type result struct {
	Images []struct {
		URL string `json:"url"`
	} `json:"images"`
	Image *struct {
		URL string `json:"url"`
	} `json:"image"`
	Video *struct {
		URL string `json:"url"`
	} `json:"video"`
	Prompt  any             `json:"prompt"`
	Timings json.RawMessage `json:"timings"`
}

// Result fetches the result document from the response URL; fal keeps it
// only a short time, so it is fetched as soon as the status is COMPLETED.
// A request that failed answers its error here (fal's model errors, 422,
// or request errors): that error is returned.
func (p *Provider) Result(ctx context.Context, j provider.Job) (*provider.Result, error) {
	h, err := p.handleOf(j)
	if err != nil {
		return nil, err
	}
	b, err := p.Client.Do(ctx, apiclient.Call{Method: http.MethodGet, URL: h.ResponseURL})
	if err != nil {
		var se *apiclient.Error
		if errors.As(err, &se) {
			return nil, fmt.Errorf("fal request %s failed: %w", j.ID, err)
		}
		return nil, err
	}
	var a result
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, fmt.Errorf("GET %s: decoding the result: %w", redact(h.ResponseURL), err)
	}
	res := &provider.Result{CreationID: j.ID, Detail: b, Kind: j.Kind}
	if s, ok := a.Prompt.(string); ok {
		res.Prompt = s
	}
	if len(a.Timings) > 0 && string(a.Timings) != "null" {
		res.Usage = a.Timings
	}
	switch {
	case a.Video != nil && a.Video.URL != "":
		res.Kind = addrs.Video
		res.Outputs = []provider.Output{{URL: a.Video.URL}}
	case len(a.Images) > 0:
		res.Kind = addrs.Image
		for i, im := range a.Images {
			res.Outputs = append(res.Outputs, provider.Output{Index: i, URL: im.URL})
		}
	case a.Image != nil && a.Image.URL != "":
		res.Kind = addrs.Image
		res.Outputs = []provider.Output{{URL: a.Image.URL}}
	default:
		return nil, fmt.Errorf("fal request %s: its result names no images[].url nor video.url", j.ID)
	}
	return res, nil
}

// noRequest is a request id no submit ever had: asking its status checks
// the key without making anything.
const noRequest = "00000000-0000-4000-8000-000000000000"

// CheckCredentials asks the status of a request that does not exist
// (fal documents no endpoint that checks a key): a key fal refuses is
// answered 401 or 403, which matches apiclient.ErrUnauthorized; a key it
// accepts, 404.
func (p *Provider) CheckCredentials(ctx context.Context) error {
	err := p.Base.CheckCredentials(ctx)
	var se *apiclient.Error
	if errors.As(err, &se) && se.HTTPStatus == http.StatusNotFound {
		return nil
	}
	return err
}
