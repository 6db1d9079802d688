package fal

import (
	"errors"
	"testing"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/schema"
	"github.com/genform/genform/internal/schema/schematest"
)

// fal's sync_mode returns the media inline (data URIs) instead of file
// URLs: refused, on its key, unless false (fal's default) or null.
func TestFalSyncMode(t *testing.T) {
	schematest.Bodies(t, Table, []schematest.BodyCase{
		{
			Name: "sync_mode true refused", Model: "fal-ai/flux/schnell",
			Common: map[string]any{schema.Prompt: "p"}, Input: map[string]any{"sync_mode": true},
			WantErr: "returns the media inline as data URIs instead of file URLs",
		},
		{
			Name: "sync_mode true refused on a model the tables do not list", Model: "someone/else",
			Common: map[string]any{schema.Prompt: "p"}, Input: map[string]any{"sync_mode": true},
			WantErr: "genform uses fal's queue and downloads the files",
		},
		{
			Name: "sync_mode as a string refused", Model: "fal-ai/flux/schnell",
			Common: map[string]any{schema.Prompt: "p"}, Input: map[string]any{"sync_mode": "true"},
			WantErr: "sync_mode",
		},
		{
			Name: "sync_mode false passes", Model: "fal-ai/flux/schnell",
			Common: map[string]any{schema.Prompt: "p"}, Input: map[string]any{"sync_mode": false},
			Want: map[string]any{"prompt": "p", "sync_mode": false},
		},
	})
	_, err := Table.Body("fal-ai/flux/dev", 0, nil, map[string]any{"sync_mode": true})
	if ie, ok := errors.AsType[*schema.InputError](err); !ok || ie.Key != "sync_mode" {
		t.Errorf("Body's error %v names no input key sync_mode", err)
	}
}

// TestBodies: the common attributes map to fal's fields, input passes
// through unchanged, and what fal does not take is refused.
func TestBodies(t *testing.T) {
	schematest.Bodies(t, Table, []schematest.BodyCase{
		{
			Name: "fal flux dev maps count and ratio", Model: "fal-ai/flux/dev",
			Common: map[string]any{schema.Prompt: "a fox", schema.Seed: float64(7), schema.ImageNumber: float64(3), schema.AspectRatio: "16:9"},
			Input:  map[string]any{"guidance_scale": 3.5},
			Want:   map[string]any{"prompt": "a fox", "seed": float64(7), "num_images": float64(3), "image_size": "landscape_16_9", "guidance_scale": 3.5},
		},
		{
			Name: "fal flux schnell portrait", Model: "fal-ai/flux/schnell",
			Common: map[string]any{schema.Prompt: "p", schema.AspectRatio: "9:16"},
			Want:   map[string]any{"prompt": "p", "image_size": "portrait_16_9"},
		},
		{
			Name: "fal unknown ratio refused", Model: "fal-ai/flux/dev",
			Common: map[string]any{schema.AspectRatio: "21:9"}, Fails: true,
		},
		{
			Name: "fal input passes through unchanged", Model: "fal-ai/some/video",
			Common: map[string]any{schema.Prompt: "waves"},
			Input:  map[string]any{"duration": "5", "nested": map[string]any{"a": []any{float64(1)}}},
			Want:   map[string]any{"prompt": "waves", "duration": "5", "nested": map[string]any{"a": []any{float64(1)}}},
		},
		{
			Name: "fal attribute set twice refused", Model: "fal-ai/flux/dev",
			Common: map[string]any{schema.ImageNumber: float64(2)}, Input: map[string]any{"num_images": float64(2)}, Fails: true,
		},
		{
			Name: "fal resolution not mapped", Model: "fal-ai/flux/dev",
			Common: map[string]any{schema.Resolution: float64(720)}, Fails: true,
		},
		{
			Name: "fal kling image to video", Model: "fal-ai/kling-video/v2.1/standard/image-to-video",
			Common: map[string]any{schema.Prompt: "waves", schema.SourceImage: "data:image/png;base64,AA==", schema.Duration: float64(5), schema.NegativePrompt: "blur"},
			Want:   map[string]any{"prompt": "waves", "image_url": "data:image/png;base64,AA==", "duration": "5", "negative_prompt": "blur"},
		},
	})
}

// TestTable: fal's FLUX models take up to 4 images, and a model the
// tables do not list makes images and videos from the prompt alone; a
// lost submit is not found again.
func TestTable(t *testing.T) {
	if Table.Recovery != schema.RecoverNone {
		t.Errorf("recovery: %v", Table.Recovery)
	}
	for _, m := range []string{"fal-ai/flux/schnell", "fal-ai/flux/dev"} {
		if c := Table.Caps(m); c.MostImages() != 4 || !c.Takes(schema.ImageNumber) {
			t.Errorf("%s caps %+v", m, c)
		}
	}
	if c := Table.Caps("someone/else"); !c.Makes(addrs.Video) || c.Takes(schema.Seed) {
		t.Errorf("fal general caps %+v", c)
	}
}
