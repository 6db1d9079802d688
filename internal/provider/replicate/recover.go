package replicate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"time"

	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/provider"
)

// Recover finds the prediction a create of r made between since and
// until, when its answer was lost. It lists the account's predictions
// created in that window, widened by a minute each side for clock skew
// (GET /v1/predictions with created_after and created_before, newest
// first, following "next"), and takes the one that matches all of:
//
//   - its model is r's owner/name (not checked for a bare version hash);
//   - its version is r's version hash, when r names one;
//   - its input equals r's body as JSON values (key order and spacing
//     aside);
//   - its source is "api" (or not given), and its created_at is inside the
//     widened window.
//
// No match is (Job{}, false, nil). More than one is an error: genform
// cannot tell which one is its own, and the create stays possibly paid.
// Replicate removes an API prediction's input an hour after it finished,
// so only a create lost within about an hour can be found.
func (p *Provider) Recover(ctx context.Context, r provider.Request, since, until time.Time) (provider.Job, bool, error) {
	t, err := parseTarget(r.Target)
	if err != nil {
		return provider.Job{}, false, err
	}
	var want any
	if err := json.Unmarshal(r.Body, &want); err != nil {
		return provider.Job{}, false, fmt.Errorf("recovering a prediction: the request body is not JSON: %w", err)
	}
	win := provider.WindowOf(since, until)
	q := url.Values{}
	q.Set("created_after", win.From.UTC().Format(time.RFC3339Nano))
	q.Set("created_before", win.To.UTC().Format(time.RFC3339Nano))
	call := apiclient.Call{Method: http.MethodGet, Path: "/v1/predictions?" + q.Encode()}
	var found []prediction
	for page := 0; page < provider.MaxListPages; page++ {
		b, err := p.Client.Do(ctx, call)
		if err != nil {
			return provider.Job{}, false, fmt.Errorf("recovering a prediction: %w", err)
		}
		var a struct {
			Next    *string      `json:"next"`
			Results []prediction `json:"results"`
		}
		if err := json.Unmarshal(b, &a); err != nil {
			return provider.Job{}, false, fmt.Errorf("recovering a prediction: decoding the list: %w", err)
		}
		older := false
		for _, pr := range a.Results {
			before, inside, _ := win.Place(pr.CreatedAt)
			older = older || before
			if inside && matches(pr, t, want) {
				found = append(found, pr)
			}
		}
		if older || a.Next == nil || *a.Next == "" {
			break
		}
		call = apiclient.Call{Method: http.MethodGet, URL: *a.Next}
	}
	pr, ok, err := provider.OnlyMatch("prediction", found, func(pr prediction) string { return pr.ID })
	if !ok {
		return provider.Job{}, false, err
	}
	h, _ := json.Marshal(Handle{Get: pr.URLs.Get, Cancel: pr.URLs.Cancel})
	return provider.Job{ID: pr.ID, Kind: r.Kind, Handle: h}, true, nil
}

// matches reports whether pr is a prediction of t with input want.
func matches(pr prediction, t target, want any) bool {
	if t.model != "" && pr.Model != t.model {
		return false
	}
	if t.version != "" && pr.Version != t.version {
		return false
	}
	if pr.Source != "" && pr.Source != "api" {
		return false
	}
	var got any
	if len(bytes.TrimSpace(pr.Input)) == 0 || json.Unmarshal(pr.Input, &got) != nil {
		return false
	}
	return reflect.DeepEqual(got, want)
}
