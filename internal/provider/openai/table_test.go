package openai

import (
	"testing"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/schema"
	"github.com/genform/genform/internal/schema/schematest"
)

func TestOpenAIBody(t *testing.T) {
	tests := []schematest.BodyCase{
		{
			Name: "count and ratio mapped, input passed through", Model: "gpt-image-2",
			Common: map[string]any{schema.Prompt: "a fox", schema.ImageNumber: float64(3), schema.AspectRatio: "3:2"},
			Input:  map[string]any{"quality": "high", "background": "transparent", "output_format": "webp"},
			Want: map[string]any{"prompt": "a fox", "n": float64(3), "size": "1536x1024",
				"quality": "high", "background": "transparent", "output_format": "webp"},
		},
		{
			Name: "portrait", Model: "gpt-image-2.5-flare", Common: map[string]any{schema.Prompt: "p", schema.AspectRatio: "2:3"},
			Want: map[string]any{"prompt": "p", "size": "1024x1536"},
		},
		{
			Name: "a size of its own in input", Model: "gpt-image-2", Common: map[string]any{schema.Prompt: "p"},
			Input: map[string]any{"size": "1536x864"},
			Want:  map[string]any{"prompt": "p", "size": "1536x864"},
		},
		{
			Name: "a source image starts an edit", Model: "gpt-image-2",
			Common: map[string]any{schema.Prompt: "add a boat", schema.SourceImage: "data:image/png;base64,iVBORw0KGgo="},
			Want:   map[string]any{"prompt": "add a boat", "image": "data:image/png;base64,iVBORw0KGgo="},
		},
		{
			Name: "source images start an edit of several", Model: "gpt-image-1.5",
			Common: map[string]any{schema.Prompt: "p", schema.SourceImages: []any{"https://example.com/a.png", "data:image/png;base64,iVBORw0KGgo="}},
			Want:   map[string]any{"prompt": "p", "image": []any{"https://example.com/a.png", "data:image/png;base64,iVBORw0KGgo="}},
		},
		{
			Name: "one source or several, not both", Model: "gpt-image-2",
			Common:  map[string]any{schema.SourceImage: "https://example.com/a.png", schema.SourceImages: []any{"https://example.com/b.png"}},
			WantErr: "set one of them",
		},
		{
			Name: "a source that is no image link", Model: "gpt-image-2",
			Common: map[string]any{schema.SourceImage: "boat.png"}, WantErr: "source_image must be an http(s) URL or a data:image",
		},
		{
			Name: "no standard size for the ratio", Model: "gpt-image-2",
			Common: map[string]any{schema.AspectRatio: "16:9"}, WantErr: "set size in input",
		},
		{
			Name: "size set twice", Model: "gpt-image-2",
			Common: map[string]any{schema.AspectRatio: "1:1"}, Input: map[string]any{"size": "1024x1024"}, WantErr: "set it once",
		},
		{
			Name: "seed is not a field", Model: "gpt-image-2",
			Common: map[string]any{schema.Seed: float64(4)}, WantErr: "does not map seed",
		},
		{
			Name: "negative prompt is not a field", Model: "gpt-image-2",
			Common: map[string]any{schema.NegativePrompt: "blur"}, WantErr: "does not map negative_prompt",
		},
		{
			Name: "the model is the block's", Model: "gpt-image-2",
			Input: map[string]any{"model": "gpt-image-1"}, WantErr: "model",
		},
		{
			Name: "no stream", Model: "gpt-image-2",
			Input: map[string]any{"stream": true}, WantErr: "stream",
		},
		{
			Name: "stream false is the default", Model: "gpt-image-2",
			Common: map[string]any{schema.Prompt: "p"}, Input: map[string]any{"stream": false},
			Want: map[string]any{"prompt": "p", "stream": false},
		},
		{
			Name: "no partial images", Model: "gpt-image-2",
			Input: map[string]any{"partial_images": float64(2)}, WantErr: "partial_images",
		},
		{
			Name: "no video", Model: "gpt-image-2", Kind: addrs.Video,
			Common: map[string]any{schema.Prompt: "p"}, WantErr: "makes images",
		},
	}
	schematest.Bodies(t, Table, tests)
}

func TestOpenAITables(t *testing.T) {
	p := Table
	if p.KeyEnv != "OPENAI_API_KEY" || p.Recovery != schema.RecoverNone || p.Cancel || !p.InlineOutputs || p.Limits.RequestsPerMinute != 5 {
		t.Errorf("openai's provider row: %+v", p)
	}
	for _, m := range []string{"gpt-image-2", "gpt-image-2-2026-04-21", "gpt-image-2.5-sunburst-2026-09-08", "gpt-image-2.6-sunburst", "gpt-image-2.6-flare", "gpt-image-1-mini"} {
		c := p.Caps(m)
		if !p.Listed(m) || c.MostImages() != 10 || !c.Takes(schema.AspectRatio) || c.Takes(schema.Seed) || c.Takes(schema.NegativePrompt) || c.Makes(addrs.Video) ||
			!c.Takes(schema.SourceImage) || !c.Takes(schema.SourceImages) || c.MaxSourceImages != 16 {
			t.Errorf("%s: listed %v, caps %+v", m, p.Listed(m), c)
		}
	}
	// Retired: listed with their shutdown dates (the deprecations page),
	// so that validate names the day and what OpenAI names in their place;
	// a dated snapshot of a retired model retires with it.
	for _, tt := range []struct {
		model                string
		deprecated, shutDown schema.Date
		successor            string
	}{
		{"gpt-image-1.5", "2026-06-02", "2026-12-01", "gpt-image-2.6-sunburst or gpt-image-2.6-flare"},
		{"gpt-image-1.5-2025-12-16", "2026-06-02", "2026-12-01", "gpt-image-2.6-sunburst or gpt-image-2.6-flare"},
		{"gpt-image-1-mini", "2026-06-02", "2026-12-01", "gpt-image-2.6-sunburst or gpt-image-2.6-flare"},
		{"chatgpt-image-latest", "2026-06-02", "2026-12-01", "gpt-image-2.6-sunburst or gpt-image-2.6-flare"},
		{"gpt-image-1", "", "2026-10-23", ""},
	} {
		c := p.Caps(tt.model)
		if !p.Listed(tt.model) || c.Deprecated != tt.deprecated || c.ShutDown != tt.shutDown || c.Successor != tt.successor {
			t.Errorf("%s: listed %v, %q %q %q", tt.model, p.Listed(tt.model), c.Deprecated, c.ShutDown, c.Successor)
		}
	}
	for _, m := range []string{"gpt-image-2", "gpt-image-2.5-flare", "gpt-image-2.6-sunburst"} {
		if c := p.Caps(m); c.ShutDown != "" || c.Deprecated != "" {
			t.Errorf("%s has a retirement: %q %q", m, c.Deprecated, c.ShutDown)
		}
	}
	if c := p.Caps("gpt-image-9"); c.Takes(schema.ImageNumber) || c.Takes(schema.AspectRatio) || c.MostImages() != 1 || len(c.Counted) != 0 || !schema.IsCountKey("n") {
		t.Errorf("the general capabilities: %+v", c)
	}
}

// A dated snapshot of a listed model takes what the model takes, one
// released after the tables were written included; a date that is not
// one, or a snapshot of an unlisted model, is taken as any other model.
func TestDatedSnapshots(t *testing.T) {
	p := Table
	for _, tt := range []struct {
		model  string
		listed bool
	}{
		{"gpt-image-2", true},
		{"gpt-image-2-2026-04-21", true},
		{"gpt-image-2-2027-03-01", true},
		{"gpt-image-2-2027-13-01", false},
		{"gpt-image-9-2027-03-01", false},
	} {
		if got := p.Listed(tt.model); got != tt.listed {
			t.Errorf("Listed(%q) = %v, want %v", tt.model, got, tt.listed)
		}
		if takes := p.Caps(tt.model).Takes(schema.AspectRatio); takes != tt.listed {
			t.Errorf("Caps(%q) takes aspect_ratio: %v, want %v", tt.model, takes, tt.listed)
		}
	}
}
