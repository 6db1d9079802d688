package luma

import (
	"encoding/json"
	"testing"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/schema"
	"github.com/genform/genform/internal/schema/schematest"
)

const lumaImageID = "123e4567-e89b-12d3-a456-426614174000"

func TestLumaBodies(t *testing.T) {
	tests := []schematest.BodyCase{
		{
			Name: "photon image", Model: "photon-1", Kind: addrs.Image,
			Common: map[string]any{schema.Prompt: "a fox", schema.AspectRatio: "21:9"},
			Input:  map[string]any{"format": "png"},
			Want:   map[string]any{"prompt": "a fox", "aspect_ratio": "21:9", "format": "png"},
		},
		{
			Name: "ray text to video", Model: "ray-2", Kind: addrs.Video,
			Common: map[string]any{schema.Prompt: "waves", schema.Duration: json.Number("9"), schema.Resolution: json.Number("1080")},
			Input:  map[string]any{"loop": true},
			Want:   map[string]any{"prompt": "waves", "duration": "9s", "resolution": "1080p", "loop": true},
		},
		{
			Name: "4k is 2160 lines", Model: "ray-flash-2", Kind: addrs.Video,
			Common: map[string]any{schema.Resolution: float64(2160)},
			Want:   map[string]any{"resolution": "4k"},
		},
		{
			Name: "source_image is frame0", Model: "ray-2", Kind: addrs.Video,
			Common: map[string]any{schema.Prompt: "p", schema.SourceImage: "https://cdn.example/a.jpg"},
			Want: map[string]any{"prompt": "p", "keyframes": map[string]any{
				"frame0": map[string]any{"type": "image", "url": "https://cdn.example/a.jpg"},
			}},
		},
		{
			Name: "two key frames, a URL and a generation", Model: "ray-2", Kind: addrs.Video,
			Common: map[string]any{schema.SourceImages: []any{"https://cdn.example/a.jpg", lumaImageID}},
			Want: map[string]any{"keyframes": map[string]any{
				"frame0": map[string]any{"type": "image", "url": "https://cdn.example/a.jpg"},
				"frame1": map[string]any{"type": "generation", "id": lumaImageID},
			}},
		},
		{
			Name: "a data URI is refused", Model: "ray-2", Kind: addrs.Video,
			Common:  map[string]any{schema.SourceImage: "data:image/png;base64,AA=="},
			WantErr: "data: URI",
		},
		{
			Name: "an output held only as bytes has no URL", Model: "ray-2", Kind: addrs.Video,
			Common:  map[string]any{schema.SourceImages: []any{"https://cdn.example/a.jpg", ""}},
			WantErr: "source_images[1] is neither an http(s) URL nor the generation_id",
		},
		{
			Name: "three key frames", Model: "ray-2", Kind: addrs.Video,
			Common:  map[string]any{schema.SourceImages: []any{lumaImageID, lumaImageID, lumaImageID}},
			WantErr: "one or two key frames",
		},
		{
			Name: "both source attributes", Model: "ray-2", Kind: addrs.Video,
			Common:  map[string]any{schema.SourceImage: lumaImageID, schema.SourceImages: []any{lumaImageID}},
			WantErr: "set one",
		},
		{
			Name: "a resolution Luma does not make", Model: "ray-2", Kind: addrs.Video,
			Common:  map[string]any{schema.Resolution: json.Number("480")},
			WantErr: "540, 720, 1080 or 2160",
		},
		{
			Name: "seed is not mapped", Model: "photon-1", Kind: addrs.Image,
			Common:  map[string]any{schema.Seed: json.Number("3")},
			WantErr: "does not map seed",
		},
		{
			Name: "the model is the block's", Model: "photon-1", Kind: addrs.Image,
			Input:   map[string]any{"model": "photon-flash-1"},
			WantErr: `input sets "model"`,
		},
		{
			Name: "keyframes set twice", Model: "ray-2", Kind: addrs.Video,
			Common:  map[string]any{schema.SourceImage: lumaImageID},
			Input:   map[string]any{"keyframes": map[string]any{}},
			WantErr: "set it once",
		},
	}
	schematest.Bodies(t, Table, tests)
}

func TestLumaTables(t *testing.T) {
	luma := Table
	if luma.Recovery != schema.RecoverByListing || luma.Cancel || luma.KeyEnv != "LUMAAI_API_KEY" {
		t.Errorf("luma: recovery %v, cancel %v, key %s", luma.Recovery, luma.Cancel, luma.KeyEnv)
	}
	if luma.Limits.Parallelism != 10 || luma.Limits.RequestsPerMinute != 20 {
		t.Errorf("limits %+v, want Ray's 10 at once and 20 creates a minute", luma.Limits)
	}
	for _, m := range []string{"photon-1", "photon-flash-1"} {
		c := luma.Caps(m)
		if !c.Makes(addrs.Image) || c.Makes(addrs.Video) || c.Takes(schema.Seed) || c.Takes(schema.NegativePrompt) || c.MostImages() != 1 {
			t.Errorf("%s caps %+v: images only, one a request, no seed or negative prompt", m, c)
		}
	}
	for _, m := range []string{"ray-2", "ray-flash-2"} {
		c := luma.Caps(m)
		if !c.Makes(addrs.Video) || c.MostSeconds() != 9 || c.MaxSourceImages != 2 || !c.Takes(schema.SourceImages) || c.Takes(schema.Seed) {
			t.Errorf("%s caps %+v", m, c)
		}
	}
	if c := luma.Caps("ray-3"); !c.Takes(schema.Prompt) || len(c.Attrs) != 1 {
		t.Errorf("an unlisted model takes %+v, want prompt alone", c)
	}
}
