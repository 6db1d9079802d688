package luma

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"time"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/provider"
)

// pageSize is the generations a list page asks for (the reference's
// default).
const pageSize = 100

// Recover finds the generation a create of r made between since and
// until, when its answer was lost. It reads the account's generations
// (GET /generations, limit and offset), newest first as Luma answers
// them, until a page holds none created since the window opened (the
// reference states no order; were it another, a lost create would be
// missed, never taken twice), and takes the one that matches all of:
//
//   - its created_at is inside the window, widened by a minute each side
//     for clock skew;
//   - its model is r's target, and its generation_type r's kind (each
//     when it names one);
//   - its request holds every field of the create genform sent (r's body
//     with the model), equal as JSON values: Luma's echo may add fields
//     genform left out, such as generation_type.
//
// No match is (Job{}, false, nil). More than one is an error: genform
// cannot tell which one is its own, and the create stays possibly paid.
func (p *Provider) Recover(ctx context.Context, r provider.Request, since, until time.Time) (provider.Job, bool, error) {
	sent, err := createBody(r)
	if err != nil {
		return provider.Job{}, false, err
	}
	want, err := jsonValues(sent)
	if err != nil {
		return provider.Job{}, false, fmt.Errorf("recovering a generation: %w", err)
	}
	kind := map[addrs.Kind]string{addrs.Image: "image", addrs.Video: "video"}[r.Kind]
	win := provider.WindowOf(since, until)
	seen := map[string]bool{}
	var found []generation
	for page, offset := 0, 0; page < provider.MaxListPages; page++ {
		q := url.Values{}
		q.Set("limit", strconv.Itoa(pageSize))
		q.Set("offset", strconv.Itoa(offset))
		b, err := p.Client.Do(ctx, apiclient.Call{Method: http.MethodGet, Path: "/generations?" + q.Encode()})
		if err != nil {
			return provider.Job{}, false, fmt.Errorf("recovering a generation: %w", err)
		}
		var a struct {
			Generations []generation `json:"generations"`
			HasMore     *bool        `json:"has_more"`
		}
		if err := json.Unmarshal(b, &a); err != nil {
			return provider.Job{}, false, fmt.Errorf("recovering a generation: decoding the list: %w", err)
		}
		recent := false
		for _, g := range a.Generations {
			before, inside, ok := win.Place(g.CreatedAt)
			if !ok || seen[g.ID] {
				continue
			}
			seen[g.ID] = true
			recent = recent || !before
			if inside && matches(g, r.Target, kind, want) {
				found = append(found, g)
			}
		}
		offset += len(a.Generations)
		if !recent || len(a.Generations) == 0 || (a.HasMore != nil && !*a.HasMore) {
			break
		}
	}
	g, ok, err := provider.OnlyMatch("generation", found, func(g generation) string { return g.ID })
	if !ok {
		return provider.Job{}, false, err
	}
	return provider.Job{ID: g.ID, Kind: r.Kind}, true, nil
}

// matches reports whether g is a generation of model and kind whose
// request holds every field of want.
func matches(g generation, model, kind string, want map[string]any) bool {
	if g.Model != "" && g.Model != model {
		return false
	}
	if g.GenerationType != "" && kind != "" && g.GenerationType != kind {
		return false
	}
	var got map[string]any
	if len(bytes.TrimSpace(g.Request)) == 0 || json.Unmarshal(g.Request, &got) != nil {
		return false
	}
	for k, v := range want {
		if !reflect.DeepEqual(got[k], v) {
			return false
		}
	}
	return true
}

// jsonValues is body as json.Unmarshal gives it back, so that it
// compares with a decoded echo value by value.
func jsonValues(body map[string]any) (map[string]any, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	return v, nil
}
