package config

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/simulator"
)

// A value made from another resource is not known when the configuration
// is validated or planned. Apply expands the resource again once it is, and
// that expansion checks it against the service's rules like any other: an
// instance whose request the service would refuse has no instance to
// submit, only the diagnostic.
func TestRulesOfValuesKnownAtApply(t *testing.T) {
	const src = `
image "hero" {
  prompt       = "a lighthouse"
  image_number = 2
}

video "clip" {
  source_image = image.hero.outputs[0].media_url
}

video "morph" {
  source_images = image.hero.outputs[*].media_url
  frame_indices = [0, length(image.hero.outputs) * 16]
  input_width   = 1280
  input_height  = 720
}
`
	c := mustLoad(t, src, Options{}) // nothing of image.hero is known yet
	hero := c.Resource(res("image.hero"))
	heroInsts, diags := c.Expand(hero, Scope{})
	if diags.HasErrors() {
		t.Fatal(diagList(diags))
	}
	for _, name := range []string{"video.clip", "video.morph"} {
		insts, diags := c.Expand(c.Resource(res(name)), Scope{})
		if diags.HasErrors() || insts[0].Request != nil {
			t.Errorf("%s before image.hero exists: request %s, %s", name, insts[0].Request, diagList(diags))
		}
	}

	// image.hero succeeded with URLs the service would not take, and two
	// outputs, which puts the second key frame at 32, past a 4-second video.
	scope := Scope{res("image.hero"): ResourceValue(hero, heroInsts, map[addrs.Instance]cty.Value{
		inst("image.hero"): InstanceValue("c", "g", "succeed", []OutputValue{
			{ID: "0", MediaURL: "https://cdn.example.com/a b.png"},
			{ID: "1", MediaURL: "https://cdn.example.com/b.png"},
		}),
	})}
	for _, tt := range []struct {
		name, summary, detail string
	}{
		{"video.clip", "Invalid source_image", "percent-encoded"},
		{"video.morph", "Invalid source_images", "source_images[0] must be an http(s) URL with spaces"},
		{"video.morph", "Invalid frame_indices", "frame_indices[1] must be a frame position from 0 to 31 for a 4-second video"},
	} {
		insts, diags := c.Expand(c.Resource(res(tt.name)), scope)
		if insts != nil {
			t.Errorf("%s: Expand returned %d instances to submit", tt.name, len(insts))
		}
		found := false
		for _, d := range diags {
			found = found || d.Summary == tt.summary && strings.Contains(d.Detail, tt.detail)
		}
		if !found {
			t.Errorf("%s: no %q saying %q; got:\n%s", tt.name, tt.summary, tt.detail, diagList(diags))
		}
	}
}

// Every request config builds from testdata/valid, the edges of the
// service's rules among them, is one the simulator accepts: config and the
// simulator read the same rules.
func TestSimulatorAcceptsValidRequests(t *testing.T) {
	c, diags := loadTest(filepath.Join("testdata", "valid"), Options{})
	if diags.HasErrors() {
		t.Fatal(diagList(diags))
	}
	sim, err := simulator.New(simulator.Options{Token: "t", Latency: time.Millisecond, MaxConcurrent: -1, RPM: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	sent := 0
	for _, in := range expandAll(t, c, nil) {
		if in.Request == nil {
			continue // made from a resource not generated yet
		}
		req := httptest.NewRequest("POST", in.Endpoint.Path(), bytes.NewReader(in.Request))
		req.Header.Set("Authorization", "Bearer t")
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		sim.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Errorf("%s: %d %s", in.Addr, rec.Code, rec.Body)
		}
		sent++
	}
	if sent < 10 {
		t.Errorf("only %d requests were known", sent)
	}
}
