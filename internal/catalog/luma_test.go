package catalog

import (
	"encoding/json"
	"testing"

	"github.com/genform/genform/internal/addrs"
)

const lumaImageID = "123e4567-e89b-12d3-a456-426614174000"

func TestLumaBodies(t *testing.T) {
	tests := []bodyCase{
		{
			name: "photon image", model: "photon-1", kind: addrs.Image,
			common: map[string]any{Prompt: "a fox", AspectRatio: "21:9"},
			input:  map[string]any{"format": "png"},
			want:   map[string]any{"prompt": "a fox", "aspect_ratio": "21:9", "format": "png"},
		},
		{
			name: "ray text to video", model: "ray-2", kind: addrs.Video,
			common: map[string]any{Prompt: "waves", Duration: json.Number("9"), Resolution: json.Number("1080")},
			input:  map[string]any{"loop": true},
			want:   map[string]any{"prompt": "waves", "duration": "9s", "resolution": "1080p", "loop": true},
		},
		{
			name: "4k is 2160 lines", model: "ray-flash-2", kind: addrs.Video,
			common: map[string]any{Resolution: float64(2160)},
			want:   map[string]any{"resolution": "4k"},
		},
		{
			name: "source_image is frame0", model: "ray-2", kind: addrs.Video,
			common: map[string]any{Prompt: "p", SourceImage: "https://cdn.example/a.jpg"},
			want: map[string]any{"prompt": "p", "keyframes": map[string]any{
				"frame0": map[string]any{"type": "image", "url": "https://cdn.example/a.jpg"},
			}},
		},
		{
			name: "two key frames, a URL and a generation", model: "ray-2", kind: addrs.Video,
			common: map[string]any{SourceImages: []any{"https://cdn.example/a.jpg", lumaImageID}},
			want: map[string]any{"keyframes": map[string]any{
				"frame0": map[string]any{"type": "image", "url": "https://cdn.example/a.jpg"},
				"frame1": map[string]any{"type": "generation", "id": lumaImageID},
			}},
		},
		{
			name: "a data URI is refused", model: "ray-2", kind: addrs.Video,
			common:  map[string]any{SourceImage: "data:image/png;base64,AA=="},
			wantErr: "data: URI",
		},
		{
			name: "an output held only as bytes has no URL", model: "ray-2", kind: addrs.Video,
			common:  map[string]any{SourceImages: []any{"https://cdn.example/a.jpg", ""}},
			wantErr: "source_images[1] is neither an http(s) URL nor the generation_id",
		},
		{
			name: "three key frames", model: "ray-2", kind: addrs.Video,
			common:  map[string]any{SourceImages: []any{lumaImageID, lumaImageID, lumaImageID}},
			wantErr: "one or two key frames",
		},
		{
			name: "both source attributes", model: "ray-2", kind: addrs.Video,
			common:  map[string]any{SourceImage: lumaImageID, SourceImages: []any{lumaImageID}},
			wantErr: "set one",
		},
		{
			name: "a resolution Luma does not make", model: "ray-2", kind: addrs.Video,
			common:  map[string]any{Resolution: json.Number("480")},
			wantErr: "540, 720, 1080 or 2160",
		},
		{
			name: "seed is not mapped", model: "photon-1", kind: addrs.Image,
			common:  map[string]any{Seed: json.Number("3")},
			wantErr: "does not map seed",
		},
		{
			name: "the model is the block's", model: "photon-1", kind: addrs.Image,
			input:   map[string]any{"model": "photon-flash-1"},
			wantErr: `input sets "model"`,
		},
		{
			name: "keyframes set twice", model: "ray-2", kind: addrs.Video,
			common:  map[string]any{SourceImage: lumaImageID},
			input:   map[string]any{"keyframes": map[string]any{}},
			wantErr: "set it once",
		},
	}
	testBodies(t, "luma", tests)
}

func TestLumaTables(t *testing.T) {
	luma := Lookup("luma")
	if luma.Recovery != RecoverByListing || luma.Cancel || luma.KeyEnv != "LUMAAI_API_KEY" {
		t.Errorf("luma: recovery %v, cancel %v, key %s", luma.Recovery, luma.Cancel, luma.KeyEnv)
	}
	if luma.Limits.Parallelism != 10 || luma.Limits.RequestsPerMinute != 20 {
		t.Errorf("limits %+v, want Ray's 10 at once and 20 creates a minute", luma.Limits)
	}
	for _, m := range []string{"photon-1", "photon-flash-1"} {
		c := luma.Caps(m)
		if !c.Makes(addrs.Image) || c.Makes(addrs.Video) || c.Takes(Seed) || c.Takes(NegativePrompt) || c.MostImages() != 1 {
			t.Errorf("%s caps %+v: images only, one a request, no seed or negative prompt", m, c)
		}
	}
	for _, m := range []string{"ray-2", "ray-flash-2"} {
		c := luma.Caps(m)
		if !c.Makes(addrs.Video) || c.MostSeconds() != 9 || c.MaxSourceImages != 2 || !c.Takes(SourceImages) || c.Takes(Seed) {
			t.Errorf("%s caps %+v", m, c)
		}
	}
	if c := luma.Caps("ray-3"); !c.Takes(Prompt) || len(c.Attrs) != 1 {
		t.Errorf("an unlisted model takes %+v, want prompt alone", c)
	}
}
