package replicate

import (
	"testing"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/schema"
	"github.com/genform/genform/internal/schema/schematest"
)

// TestBodies: the common attributes map to replicate's fields, input passes
// through unchanged, and what replicate does not take is refused.
func TestBodies(t *testing.T) {
	schematest.Bodies(t, Table, []schematest.BodyCase{
		{
			Name: "replicate flux schnell", Model: "black-forest-labs/flux-schnell",
			Common: map[string]any{schema.Prompt: "a fox", schema.Seed: float64(1), schema.ImageNumber: float64(2), schema.AspectRatio: "21:9"},
			Input:  map[string]any{"go_fast": true},
			Want:   map[string]any{"prompt": "a fox", "seed": float64(1), "num_outputs": float64(2), "aspect_ratio": "21:9", "go_fast": true},
		},
		{
			Name: "replicate pinned version", Model: "owner/Name:" + "abc",
			Common: map[string]any{schema.Prompt: "x"},
			Want:   map[string]any{"prompt": "x"},
		},
		{
			Name: "replicate set twice refused", Model: "black-forest-labs/flux-schnell",
			Common: map[string]any{schema.Prompt: "x"}, Input: map[string]any{"prompt": "y"}, Fails: true,
		},
		{
			Name: "replicate resolution not mapped", Model: "black-forest-labs/flux-schnell",
			Common: map[string]any{schema.Resolution: float64(720)}, Fails: true,
		},
		{
			Name: "replicate kling first frame", Model: "kwaivgi/kling-v2.1",
			Common: map[string]any{schema.Prompt: "waves", schema.SourceImage: "https://x/y.png", schema.Duration: float64(10)},
			Want:   map[string]any{"prompt": "waves", "start_image": "https://x/y.png", "duration": float64(10)},
		},
	})
}

// TestTable: a pinned version of a listed model takes what the model
// takes; a lost create is found again by listing.
func TestTable(t *testing.T) {
	if Table.Recovery != schema.RecoverByListing {
		t.Errorf("recovery: %v", Table.Recovery)
	}
	if c := Table.Caps("black-forest-labs/flux-schnell:0123"); c.MostImages() != 4 || c.Counted[0] != "num_outputs" {
		t.Errorf("a pinned flux-schnell takes %+v", c)
	}
}

// FLUX.1 [dev] maps as schnell does; Veo 3 Fast takes its first frame as
// image and is sent the duration plan counts.
func TestCurrentModels(t *testing.T) {
	schematest.Bodies(t, Table, []schematest.BodyCase{
		{
			Name: "flux dev", Model: "black-forest-labs/flux-dev",
			Common: map[string]any{schema.Prompt: "p", schema.ImageNumber: float64(4), schema.AspectRatio: "21:9"},
			Want:   map[string]any{"prompt": "p", "num_outputs": float64(4), "aspect_ratio": "21:9"},
		},
		{
			Name: "veo 3 fast from an image", Model: "google/veo-3-fast", Kind: addrs.Video,
			Common: map[string]any{schema.Prompt: "p", schema.SourceImage: "https://a/1.png"},
			Want:   map[string]any{"prompt": "p", "image": "https://a/1.png", "duration": float64(8)},
		},
		{
			Name: "veo 3 fast of 4 seconds", Model: "google/veo-3-fast", Kind: addrs.Video,
			Common: map[string]any{schema.Prompt: "p", schema.Duration: float64(4)},
			Want:   map[string]any{"prompt": "p", "duration": float64(4)},
		},
	})
	if c := Table.Caps("black-forest-labs/flux-dev"); c.MostImages() != 4 || !c.Takes(schema.Seed) {
		t.Errorf("flux dev: %+v", c)
	}
}
