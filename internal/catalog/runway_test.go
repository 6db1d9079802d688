package catalog

import (
	"testing"

	"github.com/genform/genform/internal/addrs"
)

func TestRunwayBodies(t *testing.T) {
	tests := []bodyCase{
		{
			name: "gen4_image at 1080p", model: "gen4_image", kind: addrs.Image,
			common: map[string]any{Prompt: "a fox", Seed: float64(7), AspectRatio: "16:9"},
			input:  map[string]any{"referenceImages": []any{map[string]any{"uri": "https://x/r.png", "tag": "fox"}}},
			want: map[string]any{"promptText": "a fox", "seed": float64(7), "ratio": "1920:1080",
				"referenceImages": []any{map[string]any{"uri": "https://x/r.png", "tag": "fox"}}},
		},
		{
			name: "gen4_image at 720p", model: "gen4_image", kind: addrs.Image,
			common: map[string]any{Prompt: "p", AspectRatio: "21:9", Resolution: float64(720)},
			want:   map[string]any{"promptText": "p", "ratio": "1680:720"},
		},
		{
			name: "gen4_image ratio given in input", model: "gen4_image", kind: addrs.Image,
			common: map[string]any{Prompt: "p"}, input: map[string]any{"ratio": "1168:880"},
			want: map[string]any{"promptText": "p", "ratio": "1168:880"},
		},
		{
			name: "gen4_image without a ratio refused", model: "gen4_image", kind: addrs.Image,
			common: map[string]any{Prompt: "p"}, fails: true,
		},
		{
			name: "gen4_image at a resolution it has not", model: "gen4_image", kind: addrs.Image,
			common: map[string]any{Prompt: "p", AspectRatio: "1:1", Resolution: float64(480)}, fails: true,
		},
		{
			name: "gen4_image_turbo needs references", model: "gen4_image_turbo", kind: addrs.Image,
			common: map[string]any{Prompt: "p", AspectRatio: "1:1"}, fails: true,
		},
		{
			name: "gen4.5 from text, duration sent when unset", model: "gen4.5", kind: addrs.Video,
			common: map[string]any{Prompt: "waves", AspectRatio: "9:16", Seed: float64(1)},
			want:   map[string]any{"promptText": "waves", "ratio": "720:1280", "seed": float64(1), "duration": float64(5)},
		},
		{
			name: "gen4.5 from text takes no square", model: "gen4.5", kind: addrs.Video,
			common: map[string]any{Prompt: "waves", AspectRatio: "1:1"}, fails: true,
		},
		{
			name: "gen4.5 from a first frame, square", model: "gen4.5", kind: addrs.Video,
			common: map[string]any{Prompt: "waves", AspectRatio: "1:1", SourceImage: "data:image/png;base64,AA==", Duration: float64(10)},
			want:   map[string]any{"promptText": "waves", "ratio": "960:960", "promptImage": "data:image/png;base64,AA==", "duration": float64(10)},
		},
		{
			name: "gen4_turbo needs an image", model: "gen4_turbo", kind: addrs.Video,
			common: map[string]any{Prompt: "waves", AspectRatio: "16:9"}, fails: true,
		},
		{
			name: "veo3.1 first and last frames", model: "veo3.1", kind: addrs.Video,
			common: map[string]any{Prompt: "a door opens", NegativePrompt: "blur", AspectRatio: "16:9", Resolution: float64(1080),
				SourceImages: []any{"https://x/a.png", "https://x/b.png"}, Duration: float64(6)},
			want: map[string]any{"promptText": "a door opens", "negativePrompt": "blur", "ratio": "1920:1080", "duration": float64(6),
				"promptImage": []any{
					map[string]any{"uri": "https://x/a.png", "position": "first"},
					map[string]any{"uri": "https://x/b.png", "position": "last"},
				}},
		},
		{
			name: "veo3 duration fixed at 8", model: "veo3", kind: addrs.Video,
			common: map[string]any{Prompt: "rain", AspectRatio: "16:9"},
			want:   map[string]any{"promptText": "rain", "ratio": "1280:720", "duration": float64(8)},
		},
		{
			name: "unlisted model passes input through", model: "seedance2", kind: addrs.Video,
			common: map[string]any{Prompt: "x"}, input: map[string]any{"ratio": "1280:720", "audio": false},
			want: map[string]any{"promptText": "x", "ratio": "1280:720", "audio": false},
		},
		{
			name: "a field set twice refused", model: "gen4_image", kind: addrs.Image,
			common: map[string]any{Prompt: "x", AspectRatio: "1:1"}, input: map[string]any{"ratio": "1024:1024"}, fails: true,
		},
	}
	testBodies(t, "runway", tests)
}

func TestRunwayTables(t *testing.T) {
	p := Lookup("runway")
	if p == nil || p.Recovery != RecoverNone || !p.Cancel || p.KeyEnv != "RUNWAYML_API_SECRET" {
		t.Fatalf("runway's table: %+v", p)
	}
	if p.Limits.Parallelism != 1 || p.Limits.MaxParallelism != 20 || p.Limits.RequestsPerMinute != 0 {
		t.Errorf("limits %+v", p.Limits)
	}
	for id, m := range runwayModels {
		c := p.Caps(id)
		for _, a := range c.AspectRatios {
			found := false
			for _, byAspect := range m.ratios {
				_, ok := byAspect[a]
				found = found || ok
			}
			if !found {
				t.Errorf("%s lists aspect ratio %s with no pixel ratio", id, a)
			}
		}
		if c.Makes(addrs.Video) && (c.DefaultDuration == 0 || c.MostSeconds() < c.DefaultDuration || c.Counted[0] != "duration") {
			t.Errorf("%s: durations %+v", id, c)
		}
		if c.Takes(Seed) && (id == "veo3" || id == "veo3.1") {
			t.Errorf("%s takes no seed", id)
		}
	}
	if c := p.Caps("veo3.1_fast"); c.MaxSourceImages != 2 || !c.Takes(SourceImages) {
		t.Errorf("veo3.1_fast takes a first and a last frame: %+v", c)
	}
	if c := p.Caps("gen4.5"); c.Takes(SourceImages) || !c.Takes(SourceImage) {
		t.Errorf("gen4.5 takes a first frame only: %+v", c)
	}
}
