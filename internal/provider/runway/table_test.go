package runway

import (
	"testing"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/schema"
	"github.com/genform/genform/internal/schema/schematest"
)

func TestRunwayBodies(t *testing.T) {
	tests := []schematest.BodyCase{
		{
			Name: "gen4_image at 1080p", Model: "gen4_image", Kind: addrs.Image,
			Common: map[string]any{schema.Prompt: "a fox", schema.Seed: float64(7), schema.AspectRatio: "16:9"},
			Input:  map[string]any{"referenceImages": []any{map[string]any{"uri": "https://x/r.png", "tag": "fox"}}},
			Want: map[string]any{"promptText": "a fox", "seed": float64(7), "ratio": "1920:1080",
				"referenceImages": []any{map[string]any{"uri": "https://x/r.png", "tag": "fox"}}},
		},
		{
			Name: "gen4_image at 720p", Model: "gen4_image", Kind: addrs.Image,
			Common: map[string]any{schema.Prompt: "p", schema.AspectRatio: "21:9", schema.Resolution: float64(720)},
			Want:   map[string]any{"promptText": "p", "ratio": "1680:720"},
		},
		{
			Name: "gen4_image ratio given in input", Model: "gen4_image", Kind: addrs.Image,
			Common: map[string]any{schema.Prompt: "p"}, Input: map[string]any{"ratio": "1168:880"},
			Want: map[string]any{"promptText": "p", "ratio": "1168:880"},
		},
		{
			Name: "gen4_image without a ratio refused", Model: "gen4_image", Kind: addrs.Image,
			Common: map[string]any{schema.Prompt: "p"}, Fails: true,
		},
		{
			Name: "gen4_image at a resolution it has not", Model: "gen4_image", Kind: addrs.Image,
			Common: map[string]any{schema.Prompt: "p", schema.AspectRatio: "1:1", schema.Resolution: float64(480)}, Fails: true,
		},
		{
			Name: "gen4_image_turbo needs references", Model: "gen4_image_turbo", Kind: addrs.Image,
			Common: map[string]any{schema.Prompt: "p", schema.AspectRatio: "1:1"}, Fails: true,
		},
		{
			Name: "gen4.5 from text, duration sent when unset", Model: "gen4.5", Kind: addrs.Video,
			Common: map[string]any{schema.Prompt: "waves", schema.AspectRatio: "9:16", schema.Seed: float64(1)},
			Want:   map[string]any{"promptText": "waves", "ratio": "720:1280", "seed": float64(1), "duration": float64(5)},
		},
		{
			Name: "gen4.5 from text takes no square", Model: "gen4.5", Kind: addrs.Video,
			Common: map[string]any{schema.Prompt: "waves", schema.AspectRatio: "1:1"}, Fails: true,
		},
		{
			Name: "gen4.5 from a first frame, square", Model: "gen4.5", Kind: addrs.Video,
			Common: map[string]any{schema.Prompt: "waves", schema.AspectRatio: "1:1", schema.SourceImage: "data:image/png;base64,AA==", schema.Duration: float64(10)},
			Want:   map[string]any{"promptText": "waves", "ratio": "960:960", "promptImage": "data:image/png;base64,AA==", "duration": float64(10)},
		},
		{
			Name: "gen4_turbo needs an image", Model: "gen4_turbo", Kind: addrs.Video,
			Common: map[string]any{schema.Prompt: "waves", schema.AspectRatio: "16:9"}, Fails: true,
		},
		{
			Name: "veo3.1 first and last frames", Model: "veo3.1", Kind: addrs.Video,
			Common: map[string]any{schema.Prompt: "a door opens", schema.NegativePrompt: "blur", schema.AspectRatio: "16:9", schema.Resolution: float64(1080),
				schema.SourceImages: []any{"https://x/a.png", "https://x/b.png"}, schema.Duration: float64(6)},
			Want: map[string]any{"promptText": "a door opens", "negativePrompt": "blur", "ratio": "1920:1080", "duration": float64(6),
				"promptImage": []any{
					map[string]any{"uri": "https://x/a.png", "position": "first"},
					map[string]any{"uri": "https://x/b.png", "position": "last"},
				}},
		},
		{
			Name: "unlisted model passes input through", Model: "veo3", Kind: addrs.Video,
			Common: map[string]any{schema.Prompt: "x"}, Input: map[string]any{"ratio": "1280:720", "audio": false},
			Want: map[string]any{"promptText": "x", "ratio": "1280:720", "audio": false},
		},
		{
			Name: "a field set twice refused", Model: "gen4_image", Kind: addrs.Image,
			Common: map[string]any{schema.Prompt: "x", schema.AspectRatio: "1:1"}, Input: map[string]any{"ratio": "1024:1024"}, Fails: true,
		},
	}
	schematest.Bodies(t, Table, tests)
}

func TestRunwayTables(t *testing.T) {
	p := Table
	if p == nil || p.Recovery != schema.RecoverNone || !p.Cancel || p.KeyEnv != "RUNWAYML_API_SECRET" {
		t.Fatalf("runway's table: %+v", p)
	}
	if p.Limits.Parallelism != 1 || p.Limits.MaxParallelism != 20 || p.Limits.RequestsPerMinute != 0 {
		t.Errorf("limits %+v", p.Limits)
	}
	for id, m := range runwayModels {
		c := p.Caps(id)
		for _, a := range c.AspectRatios {
			if m.ratioForm == ratioAspect {
				continue // sent as it is
			}
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
		if c.Takes(schema.Seed) && (id == "gpt_image_2" || id == "wan3" || id == "hailuo3") {
			t.Errorf("%s takes no seed", id)
		}
	}
	if c := p.Caps("veo3.1_fast"); c.MaxSourceImages != 2 || !c.Takes(schema.SourceImages) {
		t.Errorf("veo3.1_fast takes a first and a last frame: %+v", c)
	}
	if c := p.Caps("gen4.5"); c.Takes(schema.SourceImages) || !c.Takes(schema.SourceImage) {
		t.Errorf("gen4.5 takes a first frame only: %+v", c)
	}
}

// gemini_omni_flash: 720p landscape or portrait, a first frame only,
// 3 to 10 seconds, sent 5 when duration is unset; the ratio follows
// resolution and aspect ratio, and Pixels reads it back.
func TestOmniFlash(t *testing.T) {
	schematest.Bodies(t, Table, []schematest.BodyCase{
		{
			Name: "text", Model: "gemini_omni_flash", Kind: addrs.Video,
			Common: map[string]any{schema.Prompt: "p", schema.AspectRatio: "9:16"},
			Want:   map[string]any{"promptText": "p", "ratio": "720:1280", "duration": float64(5)},
		},
		{
			Name: "first frame", Model: "gemini_omni_flash", Kind: addrs.Video,
			Common: map[string]any{schema.Prompt: "p", schema.AspectRatio: "16:9", schema.SourceImage: "https://a/1.png", schema.Duration: float64(10)},
			Want:   map[string]any{"promptText": "p", "ratio": "1280:720", "promptImage": "https://a/1.png", "duration": float64(10)},
		},
		{
			Name: "no square", Model: "gemini_omni_flash", Kind: addrs.Video,
			Common: map[string]any{schema.Prompt: "p", schema.AspectRatio: "1:1"}, Fails: true,
		},
	})
	if w, h, ok := Table.Pixels("gemini_omni_flash", addrs.Video, map[string]any{"ratio": "720:1280"}); !ok || w != 720 || h != 1280 {
		t.Errorf("Pixels: %dx%d %v", w, h, ok)
	}
}
