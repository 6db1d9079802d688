package fal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/provider"
)

// PublicURL is where fal's queue API is.
const PublicURL = "https://queue.fal.run"

// PlatformURL is where fal's Platform API is (docs.fal.ai, Platform APIs:
// "servers: https://api.fal.ai/v1"; read 2026-12-07): the key is checked
// there. A provider block's base_url (a simulator) serves both.
const PlatformURL = "https://api.fal.ai"

// refusals are the submit answers that made, and charged, nothing. A
// submit that queues a request answers its request_id ("fal assigns a
// request_id and places the request in the persistent queue", docs.fal.ai,
// Understanding Requests; read 2026-12-07), and fal bills a request's
// outputs or inference, never time in the queue ("You pay only for
// successful outputs", Model APIs › Pricing). An error answer to the
// submit carries no request_id: no request exists, so none can run or be
// billed. fal's FAQ ("a 422 may still be charged if a runner spent GPU
// time") is about a request that reached a runner and ended 422, its
// result, never a submit answered 422. So the submit's 400 (a malformed
// request), 401 (the key), 402 and 403 (an account fal rejects: "your
// account is locked and API requests will be rejected", FAQ), 404 (a
// model id fal does not serve) and 422 (an input refused) are refusals,
// in fal's words; a 5xx stays possibly paid, since a gateway may have
// forwarded a request that was queued.
var refusals = []int{
	http.StatusBadRequest, http.StatusUnauthorized, http.StatusPaymentRequired,
	http.StatusForbidden, http.StatusNotFound, http.StatusUnprocessableEntity,
}

// keyRefusals are the statuses that refuse the key: 401 alone
// (docs.fal.ai, Platform APIs › Authentication, troubleshooting: "401
// Unauthorized: verify your API key is correct"). fal's 403 is a locked
// account (its users' reports: 403 "User is locked. Reason: Exhausted
// balance"), or a key without a Platform API's scope, never a wrong key.
var keyRefusals = []int{http.StatusUnauthorized}

// Provider is fal's queue API behind the provider seam.
type Provider struct {
	provider.Base
	// platform is the client of fal's Platform API, where the key is
	// checked: its own origin (api.fal.ai), or the base URL a provider
	// block sets.
	platform *apiclient.Client
	// results holds the result a Status read of a COMPLETED request, for
	// the Result that follows: its flags are read before the request is
	// taken as done.
	results provider.Held[result]
}

var _ provider.Provider = (*Provider)(nil)

// New is fal's queue API as cfg configures it.
func New(cfg provider.Config) (*Provider, error) {
	// The queue API takes "Authorization: Key $FAL_KEY"; the files are
	// public URLs on fal's CDN (fal.media), fetched without the key.
	auth := provider.Auth{Scheme: "Key", PublicFiles: true, KeyRefusals: keyRefusals}
	b, err := provider.NewBase("fal", cfg, PublicURL, auth, keyCheck)
	if err != nil {
		return nil, err
	}
	platform, err := provider.NewClient(cfg, PlatformURL, auth)
	if err != nil {
		return nil, fmt.Errorf("fal: %w", err)
	}
	return &Provider{Base: b, platform: platform}, nil
}

// keyCheck is the request that checks the key: the price of one model on
// fal's Platform API, GET /v1/models/pricing?endpoint_id=… ("Authentication:
// Required. Users must provide a valid API key"; docs.fal.ai, Platform APIs
// › Models › Pricing, read 2026-12-07). It makes nothing and costs nothing.
var keyCheck = apiclient.Call{Method: http.MethodGet, Path: "/v1/models/pricing?endpoint_id=fal-ai/flux/schnell"}

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
	b, err := p.Client.Do(ctx, apiclient.Call{Method: http.MethodPost, Path: path, Body: r.Body, Create: true, Refusals: refusals, Final: capReached})
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

// lockedRE matches fal's answer to a request of a locked account: "User
// is locked. Reason: Exhausted balance. Top up your balance at
// fal.ai/dashboard/billing." (403, as fal's users report it in its issue
// tracker, https://github.com/fal-ai/fal/issues/1112, /1147 and /1162;
// read 2026-12-07), or
// another reason ("Admin lock"). fal's FAQ: "When your credit balance
// drops below your account's lock threshold, your account is locked and
// API requests will be rejected."
var lockedRE = regexp.MustCompile(`(?i)\buser is locked\b`)

// capReached ends a submit refused because the account is locked (its
// balance spent) at once, as provider.ErrCapReached in fal's words: every
// other submit would be refused alike, so the apply stops instead of
// failing each one. A 402 (payment required) is the same cap.
func capReached(e *apiclient.Error) error {
	if e.HTTPStatus == http.StatusPaymentRequired ||
		(e.HTTPStatus == http.StatusForbidden && lockedRE.MatchString(e.Message)) {
		return fmt.Errorf("%w (the fal account is locked, or out of credit): %w", provider.ErrCapReached, e)
	}
	return nil
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
// its type is content_policy_violation. COMPLETED without one is done
// only once its result says no image was flagged: the result is read
// there and then (and held for Result), and a request whose safety
// checker flagged an image ended refused (see flagged). A status fal does
// not document is shown and followed.
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
			break
		}
		res, raw, err := p.fetchResult(ctx, j, h)
		if err != nil {
			return provider.Status{}, err
		}
		if reason := res.flagged(j.ID); reason != "" {
			s.State, s.Reason, s.Refused = provider.Failed, reason, true
			break
		}
		p.results.Keep(j.ID, res, raw)
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
	// HasNSFW is the safety checker's verdict: a list of booleans, one
	// per image ("Whether the generated images contain NSFW concepts",
	// the FLUX endpoints' output schema in fal-js
	// libs/client/src/types/endpoints.ts, has_nsfw_concepts:
	// Array<boolean>), or one boolean on an endpoint that makes one image
	// (VTONOutput there). NSFWDetected is the same list under the name
	// the Stable Diffusion endpoints give it (nsfw_content_detected: "If
	// the safety check is disabled, this field will have a false for
	// each generated image"). Read 2026-12-07.
	HasNSFW      json.RawMessage `json:"has_nsfw_concepts"`
	NSFWDetected json.RawMessage `json:"nsfw_content_detected"`
	Image        *struct {
		URL string `json:"url"`
	} `json:"image"`
	Video *struct {
		URL string `json:"url"`
	} `json:"video"`
	Prompt  any             `json:"prompt"`
	Timings json.RawMessage `json:"timings"`
}

// fetchResult fetches the result document of j from its response URL. A
// request that failed answers its error there (fal's model errors, 422,
// or request errors): that error is returned.
func (p *Provider) fetchResult(ctx context.Context, j provider.Job, h Handle) (*result, []byte, error) {
	b, err := p.Client.Do(ctx, apiclient.Call{Method: http.MethodGet, URL: h.ResponseURL})
	if err != nil {
		var se *apiclient.Error
		if errors.As(err, &se) {
			return nil, nil, fmt.Errorf("fal request %s failed: %w", j.ID, err)
		}
		return nil, nil, err
	}
	var a result
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, nil, fmt.Errorf("GET %s: decoding the result: %w", redact(h.ResponseURL), err)
	}
	return &a, b, nil
}

// flagged is why the request id's result is no result, when its safety
// checker flagged an image, in fal's terms; "" when it flagged none.
//
// fal's FLUX endpoints (and many others) run a safety checker (input
// enable_safety_checker, "Default value: true") and finish COMPLETED
// with the flag set in has_nsfw_concepts and the flagged image replaced:
// "Usually when the image is fully black, it means it might've hit some
// sort of safety check in the model itself, such as NSFW content" (a fal
// maintainer at https://github.com/fal-ai/fal-js/issues/41; read 2026-12-07). A flagged image is the
// provider's moderation refusing it, never the instance's file.
//
// When only some images of a request are flagged (2 of 4), the request
// is refused whole and none of its files is kept: the instance declared
// its N images, and a record of fewer would be an instance other than
// the one declared, whose missing files no later plan could make without
// sending the same request again (likely flagged again, and paid again
// for all N). The unflagged images were paid for; they stay in fal's
// request history under the request's id (the output "won't be available
// in the request history" only with sync_mode, which genform never
// sends), and on its CDN for at least 7 days.
func (a *result) flagged(id string) string {
	field, verdict := "has_nsfw_concepts", a.HasNSFW
	if len(verdict) == 0 || string(verdict) == "null" {
		field, verdict = "nsfw_content_detected", a.NSFWDetected
	}
	var list []bool
	if err := json.Unmarshal(verdict, &list); err != nil {
		var one bool
		if json.Unmarshal(verdict, &one) != nil {
			return "" // absent, or a shape fal does not document: no flag
		}
		list = []bool{one}
	}
	var which []string
	for i, f := range list {
		if f {
			which = append(which, strconv.Itoa(i+1))
		}
	}
	if len(which) == 0 {
		return ""
	}
	n := max(len(a.Images), len(list))
	if len(list) == 1 && n == 1 {
		return fmt.Sprintf("fal's safety checker flagged the image as NSFW (%s: [true]) and replaced it, normally with a black image; genform keeps no file of request %s", field, id)
	}
	return fmt.Sprintf("fal's safety checker flagged image %s of %d as NSFW (%s: %s) and replaced it, normally with a black image; genform keeps none of the %d, since the instance asked for all of them: the unflagged ones stay in fal's request history under request %s",
		strings.Join(which, ", "), n, field, apiclient.Printable(string(verdict)), n, id)
}

// Result reads the result document, the one Status held or fetched anew
// from the response URL; fal keeps it only a short time, so it is read as
// soon as the status is COMPLETED. A result whose safety checker flagged
// an image is an error: it has no files to keep.
func (p *Provider) Result(ctx context.Context, j provider.Job) (*provider.Result, error) {
	a, b, ok := p.results.Take(j.ID)
	if !ok {
		h, err := p.handleOf(j)
		if err != nil {
			return nil, err
		}
		if a, b, err = p.fetchResult(ctx, j, h); err != nil {
			return nil, err
		}
	}
	if reason := a.flagged(j.ID); reason != "" {
		return nil, fmt.Errorf("fal request %s was refused by its moderation: %s", j.ID, reason)
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

// CheckCredentials checks the key on fal's Platform API (keyCheck),
// which makes nothing: a key fal refuses is answered 401, which matches
// apiclient.ErrUnauthorized. Any other refusal says nothing against the
// key (a 403 is a key without that API's scope, "Your API key may not have
// Admin permissions", Platform APIs › Authentication; a 404 an address
// that serves the queue alone): the first submit, refused for free,
// would tell. It never asks the status of a made-up request, an answer no
// fal document promises.
func (p *Provider) CheckCredentials(ctx context.Context) error {
	return p.platform.Probe(ctx, keyCheck)
}
