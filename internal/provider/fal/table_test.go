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

// The current models: FLUX1.1 [pro], Kling 3 (first and last frames,
// durations written as strings), Veo 3.1 (durations as "8s",
// resolutions as "1080p"); a video model is sent its default duration,
// and one that makes videos from an image needs one.
func TestCurrentModels(t *testing.T) {
	schematest.Bodies(t, Table, []schematest.BodyCase{
		{
			Name: "flux pro", Model: "fal-ai/flux-pro/v1.1",
			Common: map[string]any{schema.Prompt: "p", schema.Seed: float64(3), schema.AspectRatio: "1:1"},
			Want:   map[string]any{"prompt": "p", "seed": float64(3), "image_size": "square_hd"},
		},
		{
			Name: "kling 3 first and last frames", Kind: addrs.Video, Model: "fal-ai/kling-video/v3/pro/image-to-video",
			Common: map[string]any{schema.Prompt: "p", schema.SourceImages: []any{"https://a/1.png", "https://a/2.png"}, schema.Duration: float64(12)},
			Want:   map[string]any{"prompt": "p", "start_image_url": "https://a/1.png", "end_image_url": "https://a/2.png", "duration": "12"},
		},
		{
			Name: "kling 3 first frame, default duration", Kind: addrs.Video, Model: "fal-ai/kling-video/v3/standard/image-to-video",
			Common: map[string]any{schema.Prompt: "p", schema.SourceImage: "https://a/1.png"},
			Want:   map[string]any{"prompt": "p", "start_image_url": "https://a/1.png", "duration": "5"},
		},
		{
			Name: "kling 3 needs an image", Model: "fal-ai/kling-video/v3/standard/image-to-video", Kind: addrs.Video,
			Common: map[string]any{schema.Prompt: "p"}, WantErr: "makes videos from an image",
		},
		{
			Name: "kling 3 text", Kind: addrs.Video, Model: "fal-ai/kling-video/v3/pro/text-to-video",
			Common: map[string]any{schema.Prompt: "p", schema.AspectRatio: "9:16"},
			Want:   map[string]any{"prompt": "p", "aspect_ratio": "9:16", "duration": "5"},
		},
		{
			Name: "veo 3.1 at 1080p", Kind: addrs.Video, Model: "fal-ai/veo3.1",
			Common: map[string]any{schema.Prompt: "p", schema.Resolution: float64(1080), schema.Duration: float64(6), schema.NegativePrompt: "n"},
			Want:   map[string]any{"prompt": "p", "resolution": "1080p", "duration": "6s", "negative_prompt": "n"},
		},
		{
			Name: "veo 3.1 fast at 4k, default duration", Kind: addrs.Video, Model: "fal-ai/veo3.1/fast",
			Common: map[string]any{schema.Prompt: "p", schema.Resolution: float64(2160)},
			Want:   map[string]any{"prompt": "p", "resolution": "4k", "duration": "8s"},
		},
		{
			Name: "veo 3.1 no 540p", Kind: addrs.Video, Model: "fal-ai/veo3.1",
			Common: map[string]any{schema.Prompt: "p", schema.Resolution: float64(540)}, WantErr: "720, 1080 or 2160",
		},
		{
			Name: "veo 3.1 from an image", Kind: addrs.Video, Model: "fal-ai/veo3.1/image-to-video",
			Common: map[string]any{schema.Prompt: "p", schema.SourceImage: "https://a/1.png"},
			Want:   map[string]any{"prompt": "p", "image_url": "https://a/1.png", "duration": "8s"},
		},
	})
}

// The size a request asks for, which prices by the megapixel and by the
// resolution follow.
func TestPixels(t *testing.T) {
	for _, tt := range []struct {
		model string
		kind  addrs.Kind
		body  map[string]any
		w, h  int
		ok    bool
	}{
		{"fal-ai/flux/schnell", addrs.Image, map[string]any{}, 1024, 768, true},
		{"fal-ai/flux/dev", addrs.Image, map[string]any{"image_size": "square_hd"}, 1024, 1024, true},
		{"fal-ai/flux/dev", addrs.Image, map[string]any{"image_size": map[string]any{"width": float64(2048), "height": float64(1024)}}, 2048, 1024, true},
		{"fal-ai/flux-pro/v1.1", addrs.Image, map[string]any{"image_size": "portrait_16_9"}, 576, 1024, true},
		{"fal-ai/flux/dev", addrs.Image, map[string]any{"image_size": "huge"}, 0, 0, false},
		{"someone/else", addrs.Image, map[string]any{}, 0, 0, false},
		{"fal-ai/veo3.1", addrs.Video, map[string]any{"duration": "8s"}, 1280, 720, true},
		{"fal-ai/veo3.1", addrs.Video, map[string]any{"resolution": "4k", "aspect_ratio": "9:16"}, 2160, 3840, true},
		{"fal-ai/kling-video/v3/pro/text-to-video", addrs.Video, map[string]any{}, 0, 0, false},
	} {
		w, h, ok := Table.Pixels(tt.model, tt.kind, tt.body)
		if w != tt.w || h != tt.h || ok != tt.ok {
			t.Errorf("%s %v: %dx%d %v, want %dx%d %v", tt.model, tt.body, w, h, ok, tt.w, tt.h, tt.ok)
		}
	}
}
