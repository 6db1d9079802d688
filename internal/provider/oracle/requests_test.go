package oracle_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/schema"
	"github.com/genform/genform/internal/simulator/simkit"
)

// sent is one request a simulator received: what genform's adapter sent.
type sent struct {
	Method, Path, ContentType string
	Body                      []byte
	// What names the request genform was asked for.
	What string
}

// recorder keeps the requests with a body that reach the handler behind
// it, as they arrived.
type recorder struct {
	mu   sync.Mutex
	what string
	got  []sent
}

func (rec *recorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch {
			b, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
			rec.mu.Lock()
			if len(b) > 0 {
				rec.got = append(rec.got, sent{Method: r.Method, Path: r.URL.Path, ContentType: r.Header.Get("Content-Type"), Body: b, What: rec.what})
			}
			rec.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
}

// asked is a request genform is asked for, and what it is.
type asked struct {
	req  provider.Request
	what string
}

// sentByGenform sends, through r's adapter, every request genform builds
// for r in the tables and its registration: its conformance and live
// requests, and for each model of its table and each kind the model
// makes, one request per aspect ratio and per duration the model takes,
// and one from a source image and from source images where it takes
// them, each with every other common attribute it takes (see variants).
// It returns what the simulator received, and notes what genform could
// not build or the simulator refused.
func sentByGenform(t *testing.T, r *provider.Registration) ([]sent, []string) {
	t.Helper()
	rec := &recorder{}
	url := serve(t, r, simkit.Options{Latency: 10 * time.Millisecond, DailyCap: -1, RPM: -1}, rec.wrap)
	p, err := r.New(provider.Config{BaseURL: url, Key: r.Conformance.Key, RequestsPerMinute: 0})
	if err != nil {
		t.Fatal(err)
	}
	reqs, notes := requestsOf(r)
	for _, a := range reqs {
		rec.mu.Lock()
		rec.what = a.what
		rec.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_, err := p.Submit(ctx, a.req)
		cancel()
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s: the simulator refused what genform sent: %v", a.what, err))
		}
	}
	return rec.got, notes
}

// requestsOf lists the requests of r genform builds (see sentByGenform),
// and notes the variants its tables refuse to build.
func requestsOf(r *provider.Registration) ([]asked, []string) {
	var out []asked
	var notes []string
	const prompt = "a lighthouse at dusk, watercolour"
	c := r.Conformance
	if c.Image != nil {
		out = append(out, asked{c.Image(prompt), "the conformance image request"})
	}
	if c.Video != nil {
		out = append(out, asked{c.Video(prompt), "the conformance video request"})
	}
	if r.Live != nil {
		out = append(out, asked{*r.Live, "the live test's request"})
	}
	t := r.Table
	for _, model := range t.ModelIDs() {
		caps := t.Caps(model)
		for _, kind := range caps.Kinds {
			for _, v := range variants(caps) {
				what := fmt.Sprintf("model %s, %s, %s", model, kind, v.name)
				input := exampleInput[r.Name()+"/"+model]
				body, err := t.Body(model, kind, v.common, input)
				if err != nil && v.common[schema.Resolution] != nil {
					// A resolution the model does not make at this ratio:
					// the request without it.
					delete(v.common, schema.Resolution)
					body, err = t.Body(model, kind, v.common, input)
				}
				if err != nil {
					notes = append(notes, fmt.Sprintf("%s: genform builds no request: %v", what, err))
					continue
				}
				b, err := json.Marshal(body)
				if err != nil {
					notes = append(notes, fmt.Sprintf("%s: %v", what, err))
					continue
				}
				out = append(out, asked{provider.Request{Kind: kind, Target: model, Body: b}, what})
			}
		}
	}
	return out, notes
}

// exampleInput is the input a model needs that no common attribute
// sets, as its table's refusal asks for it, by provider/model.
var exampleInput = map[string]map[string]any{
	"runway/gen4_image_turbo": {"referenceImages": []any{map[string]any{"uri": "https://example.com/reference.png"}}},
}

// variant is a set of common attributes, by common name, as a block sets
// them.
type variant struct {
	name   string
	common map[string]any
}

// variants are the common attribute sets of a model: every attribute it
// takes but the source images, once per aspect ratio and once per
// duration (the first of the other), and with a source image and with
// source images where it takes them.
func variants(c schema.Caps) []variant {
	ratios := append([]string(nil), c.AspectRatios...)
	sort.Strings(ratios)
	durations := append([]int64(nil), c.Durations...)
	slices.Sort(durations)
	base := func(ratio string, duration int64) map[string]any {
		m := map[string]any{}
		for _, name := range c.Attrs {
			switch name {
			case schema.Prompt:
				m[name] = "a lighthouse at dusk, watercolour"
			case schema.NegativePrompt:
				m[name] = "blurry"
			case schema.Seed:
				m[name] = float64(42)
			case schema.Resolution:
				m[name] = float64(720)
			case schema.ImageNumber:
				// The fewest the model makes, to keep what the
				// simulator renders small: the field is checked, not
				// the count.
				n := int64(1)
				if len(c.ImageNumbers) > 0 {
					n = slices.Min(c.ImageNumbers)
				}
				m[name] = float64(n)
			case schema.AspectRatio:
				if ratio != "" {
					m[name] = ratio
				}
			case schema.Duration:
				if duration > 0 {
					m[name] = float64(duration)
				}
			}
		}
		return m
	}
	firstRatio, firstDuration := "", c.DefaultDuration
	if len(ratios) > 0 {
		firstRatio = ratios[0]
	}
	if len(durations) > 0 {
		firstDuration = durations[0]
	}
	var out []variant
	for _, r := range ratios {
		out = append(out, variant{"aspect_ratio " + r, base(r, firstDuration)})
	}
	for _, d := range durations {
		out = append(out, variant{fmt.Sprintf("duration %d", d), base(firstRatio, d)})
	}
	if len(out) == 0 {
		out = append(out, variant{"every attribute it takes", base(firstRatio, firstDuration)})
	}
	const first, last = "https://example.com/first.png", "https://example.com/last.png"
	if c.Takes(schema.SourceImage) {
		m := base(firstRatio, firstDuration)
		m[schema.SourceImage] = first
		out = append(out, variant{"from a source image", m})
	}
	if c.Takes(schema.SourceImages) && c.MaxSourceImages > 0 {
		m := base(firstRatio, firstDuration)
		m[schema.SourceImages] = []any{first, last}[:min(2, c.MaxSourceImages)]
		out = append(out, variant{"from source images", m})
	}
	return out
}
