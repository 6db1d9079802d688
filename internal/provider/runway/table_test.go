package runway

import (
	"testing"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/catalog"
	"github.com/genform/genform/internal/catalog/catalogtest"
)

func TestRunwayBodies(t *testing.T) {
	tests := []catalogtest.BodyCase{
		{
			Name: "gen4_image at 1080p", Model: "gen4_image", Kind: addrs.Image,
			Common: map[string]any{catalog.Prompt: "a fox", catalog.Seed: float64(7), catalog.AspectRatio: "16:9"},
			Input:  map[string]any{"referenceImages": []any{map[string]any{"uri": "https://x/r.png", "tag": "fox"}}},
			Want: map[string]any{"promptText": "a fox", "seed": float64(7), "ratio": "1920:1080",
				"referenceImages": []any{map[string]any{"uri": "https://x/r.png", "tag": "fox"}}},
		},
		{
			Name: "gen4_image at 720p", Model: "gen4_image", Kind: addrs.Image,
			Common: map[string]any{catalog.Prompt: "p", catalog.AspectRatio: "21:9", catalog.Resolution: float64(720)},
			Want:   map[string]any{"promptText": "p", "ratio": "1680:720"},
		},
		{
			Name: "gen4_image ratio given in input", Model: "gen4_image", Kind: addrs.Image,
			Common: map[string]any{catalog.Prompt: "p"}, Input: map[string]any{"ratio": "1168:880"},
			Want: map[string]any{"promptText": "p", "ratio": "1168:880"},
		},
		{
			Name: "gen4_image without a ratio refused", Model: "gen4_image", Kind: addrs.Image,
			Common: map[string]any{catalog.Prompt: "p"}, Fails: true,
		},
		{
			Name: "gen4_image at a resolution it has not", Model: "gen4_image", Kind: addrs.Image,
			Common: map[string]any{catalog.Prompt: "p", catalog.AspectRatio: "1:1", catalog.Resolution: float64(480)}, Fails: true,
		},
		{
			Name: "gen4_image_turbo needs references", Model: "gen4_image_turbo", Kind: addrs.Image,
			Common: map[string]any{catalog.Prompt: "p", catalog.AspectRatio: "1:1"}, Fails: true,
		},
		{
			Name: "gen4.5 from text, duration sent when unset", Model: "gen4.5", Kind: addrs.Video,
			Common: map[string]any{catalog.Prompt: "waves", catalog.AspectRatio: "9:16", catalog.Seed: float64(1)},
			Want:   map[string]any{"promptText": "waves", "ratio": "720:1280", "seed": float64(1), "duration": float64(5)},
		},
		{
			Name: "gen4.5 from text takes no square", Model: "gen4.5", Kind: addrs.Video,
			Common: map[string]any{catalog.Prompt: "waves", catalog.AspectRatio: "1:1"}, Fails: true,
		},
		{
			Name: "gen4.5 from a first frame, square", Model: "gen4.5", Kind: addrs.Video,
			Common: map[string]any{catalog.Prompt: "waves", catalog.AspectRatio: "1:1", catalog.SourceImage: "data:image/png;base64,AA==", catalog.Duration: float64(10)},
			Want:   map[string]any{"promptText": "waves", "ratio": "960:960", "promptImage": "data:image/png;base64,AA==", "duration": float64(10)},
		},
		{
			Name: "gen4_turbo needs an image", Model: "gen4_turbo", Kind: addrs.Video,
			Common: map[string]any{catalog.Prompt: "waves", catalog.AspectRatio: "16:9"}, Fails: true,
		},
		{
			Name: "veo3.1 first and last frames", Model: "veo3.1", Kind: addrs.Video,
			Common: map[string]any{catalog.Prompt: "a door opens", catalog.NegativePrompt: "blur", catalog.AspectRatio: "16:9", catalog.Resolution: float64(1080),
				catalog.SourceImages: []any{"https://x/a.png", "https://x/b.png"}, catalog.Duration: float64(6)},
			Want: map[string]any{"promptText": "a door opens", "negativePrompt": "blur", "ratio": "1920:1080", "duration": float64(6),
				"promptImage": []any{
					map[string]any{"uri": "https://x/a.png", "position": "first"},
					map[string]any{"uri": "https://x/b.png", "position": "last"},
				}},
		},
		{
			Name: "veo3 duration fixed at 8", Model: "veo3", Kind: addrs.Video,
			Common: map[string]any{catalog.Prompt: "rain", catalog.AspectRatio: "16:9"},
			Want:   map[string]any{"promptText": "rain", "ratio": "1280:720", "duration": float64(8)},
		},
		{
			Name: "unlisted model passes input through", Model: "seedance2", Kind: addrs.Video,
			Common: map[string]any{catalog.Prompt: "x"}, Input: map[string]any{"ratio": "1280:720", "audio": false},
			Want: map[string]any{"promptText": "x", "ratio": "1280:720", "audio": false},
		},
		{
			Name: "a field set twice refused", Model: "gen4_image", Kind: addrs.Image,
			Common: map[string]any{catalog.Prompt: "x", catalog.AspectRatio: "1:1"}, Input: map[string]any{"ratio": "1024:1024"}, Fails: true,
		},
	}
	catalogtest.Bodies(t, Table, tests)
}

func TestRunwayTables(t *testing.T) {
	p := Table
	if p == nil || p.Recovery != catalog.RecoverNone || !p.Cancel || p.KeyEnv != "RUNWAYML_API_SECRET" {
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
		if c.Takes(catalog.Seed) && (id == "veo3" || id == "veo3.1") {
			t.Errorf("%s takes no seed", id)
		}
	}
	if c := p.Caps("veo3.1_fast"); c.MaxSourceImages != 2 || !c.Takes(catalog.SourceImages) {
		t.Errorf("veo3.1_fast takes a first and a last frame: %+v", c)
	}
	if c := p.Caps("gen4.5"); c.Takes(catalog.SourceImages) || !c.Takes(catalog.SourceImage) {
		t.Errorf("gen4.5 takes a first frame only: %+v", c)
	}
}
