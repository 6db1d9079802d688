package runway_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/provider/providertest"
	"github.com/genform/genform/internal/provider/runway"
	"github.com/genform/genform/internal/schema"
	"github.com/genform/genform/internal/simulator/simkit"
)

// TestNewModelsReachTheirEndpoints: a block's common attributes on the
// models @runwayml/sdk 4.20.1 lists beside gen4 become the fields each
// model's own type has, and the adapter posts them to the endpoint the
// client lists the model at, where the simulator (holding each model to
// its type) takes them.
func TestNewModelsReachTheirEndpoints(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	const first, last = "https://example.com/first.png", "https://example.com/last.png"
	for _, c := range []struct {
		name, model string
		kind        addrs.Kind
		common      map[string]any
		input       map[string]any
		endpoint    string
		want        map[string]any
	}{
		{"gpt_image_2 at 16:9, two images", "gpt_image_2", addrs.Image,
			map[string]any{schema.Prompt: "a cat", schema.AspectRatio: "16:9", schema.ImageNumber: float64(2)}, nil,
			"/v1/text_to_image", map[string]any{"promptText": "a cat", "ratio": "1920:1088", "outputCount": float64(2)}},
		{"gemini_image3_pro square", "gemini_image3_pro", addrs.Image,
			map[string]any{schema.Prompt: "a cat", schema.AspectRatio: "1:1"}, nil,
			"/v1/text_to_image", map[string]any{"promptText": "a cat", "ratio": "1024:1024"}},
		{"seedance2 from text at 1080p", "seedance2", addrs.Video,
			map[string]any{schema.Prompt: "waves", schema.AspectRatio: "16:9", schema.Resolution: float64(1080), schema.Seed: float64(4), schema.Duration: float64(12)}, nil,
			"/v1/text_to_video", map[string]any{"promptText": "waves", "ratio": "1920:1080", "seed": float64(4), "duration": float64(12)}},
		{"seedance2 at its default 720p, between two frames", "seedance2", addrs.Video,
			map[string]any{schema.Prompt: "day to night", schema.AspectRatio: "9:16", schema.SourceImages: []any{first, last}}, nil,
			"/v1/image_to_video", map[string]any{"promptText": "day to night", "ratio": "720:1280", "duration": float64(5),
				"promptImage": []any{map[string]any{"uri": first, "position": "first"}, map[string]any{"uri": last, "position": "last"}}}},
		{"happyhorse_1_0 from an image: resolution, no ratio", "happyhorse_1_0", addrs.Video,
			map[string]any{schema.Prompt: "the boats rock", schema.Resolution: float64(1080), schema.SourceImage: first}, nil,
			"/v1/image_to_video", map[string]any{"promptText": "the boats rock", "resolution": "1080p", "promptImage": first, "duration": float64(5)}},
		{"happyhorse_1_0 from text: resolution picks the ratio", "happyhorse_1_0", addrs.Video,
			map[string]any{schema.Prompt: "a horse", schema.AspectRatio: "1:1", schema.Resolution: float64(1080)}, nil,
			"/v1/text_to_video", map[string]any{"promptText": "a horse", "ratio": "1440:1440", "duration": float64(5)}},
		{"hailuo3 takes the aspect ratio itself", "hailuo3", addrs.Video,
			map[string]any{schema.Prompt: "rain", schema.AspectRatio: "21:9", schema.Resolution: float64(768), schema.Duration: float64(6)}, nil,
			"/v1/text_to_video", map[string]any{"promptText": "rain", "ratio": "21:9", "resolution": "768p", "duration": float64(6)}},
		{"h3_max: a resolution and a seed, no ratio", "h3_max", addrs.Video,
			map[string]any{schema.Prompt: "a kite", schema.Seed: float64(1), schema.Resolution: float64(768), schema.SourceImage: first}, nil,
			"/v1/image_to_video", map[string]any{"promptText": "a kite", "seed": float64(1), "resolution": "768p", "promptImage": first, "duration": float64(5)}},
		{"gemini_omni_flash_1.1 in 4k", "gemini_omni_flash_1.1", addrs.Video,
			map[string]any{schema.Prompt: "a city", schema.AspectRatio: "16:9", schema.Resolution: float64(2160), schema.Duration: float64(10)}, nil,
			"/v1/text_to_video", map[string]any{"promptText": "a city", "ratio": "3840:2160", "duration": float64(10)}},
		{"veo3.1 takes a seed now", "veo3.1", addrs.Video,
			map[string]any{schema.Prompt: "a door", schema.AspectRatio: "16:9", schema.Seed: float64(8)}, nil,
			"/v1/text_to_video", map[string]any{"promptText": "a door", "ratio": "1280:720", "seed": float64(8), "duration": float64(8)}},
		{"a source video goes to video_to_video", "aleph2", addrs.Video,
			map[string]any{schema.Prompt: "make it snow"}, map[string]any{"videoUri": "https://example.com/in.mp4"},
			"/v1/video_to_video", map[string]any{"promptText": "make it snow", "videoUri": "https://example.com/in.mp4"}},
	} {
		body, err := runway.Table.Body(c.model, c.kind, c.common, c.input)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(body, c.want) {
			t.Errorf("%s: body %v, want %v", c.name, body, c.want)
			continue
		}
		if _, err := h.Submit(providertest.Request(c.kind, c.model, body)); err != nil {
			t.Errorf("%s: the simulator refused it: %v", c.name, err)
			continue
		}
		rep := h.Sim.Jobs()
		got := rep.Jobs[len(rep.Jobs)-1]
		var sent map[string]any
		if err := json.Unmarshal(got.Body, &sent); err != nil || got.Endpoint != c.endpoint || sent["model"] != c.model {
			t.Errorf("%s: created at %s with %s", c.name, got.Endpoint, got.Body)
		}
	}
}

// TestNewModelsRefuseWhatTheirTypesLack: what a model's type has no
// field for is refused before anything is sent, saying why.
func TestNewModelsRefuseWhatTheirTypesLack(t *testing.T) {
	for _, c := range []struct {
		name, model string
		common      map[string]any
	}{
		{"an aspect ratio with an image where the video takes its shape", "happyhorse_1_0",
			map[string]any{schema.Prompt: "x", schema.AspectRatio: "16:9", schema.SourceImage: "https://example.com/a.png"}},
		{"a resolution h3_max does not make", "h3_max", map[string]any{schema.Prompt: "x", schema.Resolution: float64(1080)}},
		{"a resolution seedance2_fast does not make", "seedance2_fast", map[string]any{schema.Prompt: "x", schema.AspectRatio: "16:9", schema.Resolution: float64(1080)}},
		{"an image model with no ratio", "gpt_image_2", map[string]any{schema.Prompt: "x"}},
	} {
		if body, err := runway.Table.Body(c.model, addrs.Video, c.common, nil); err == nil {
			t.Errorf("%s: built %v", c.name, body)
		}
	}
	caps := runway.Table.Caps("gpt_image_2")
	if caps.Takes(schema.Seed) || caps.MostImages() != 10 {
		t.Errorf("gpt_image_2: %+v", caps)
	}
	if _, listed := runway.Table.Models["veo3"]; listed {
		t.Error("veo3 is listed, though the client lists it for no endpoint")
	}
}

// TestCreditsOfNewModels: what a request costs in Runway's credits, at
// the prices read.
func TestCreditsOfNewModels(t *testing.T) {
	for _, c := range []struct {
		model string
		kind  addrs.Kind
		body  map[string]any
		want  int
		known bool
	}{
		{"gen4_image", addrs.Image, map[string]any{"ratio": "1920:1080"}, 8, true},
		{"gen4_image", addrs.Image, map[string]any{"ratio": "1080:1080"}, 8, true},
		{"gen4_image", addrs.Image, map[string]any{"ratio": "1280:720"}, 5, true},
		{"gen4_image_turbo", addrs.Image, map[string]any{"ratio": "720:720"}, 2, true},
		{"muse_image", addrs.Image, map[string]any{"ratio": "1600:1600", "outputCount": float64(3)}, 3, true},
		{"gen4.5", addrs.Video, map[string]any{"duration": float64(10)}, 120, true},
		{"gen4_turbo", addrs.Video, map[string]any{"duration": float64(5)}, 25, true},
		{"veo3.1", addrs.Video, map[string]any{"duration": float64(8)}, 160, true},
		{"veo3.1_fast", addrs.Video, map[string]any{"duration": float64(4)}, 40, true},
		{"seedance2", addrs.Video, map[string]any{"duration": float64(5)}, 0, false},
		{"gen4.5", addrs.Video, map[string]any{"duration": "auto"}, 0, false},
	} {
		got, ok := runway.Credits(c.model, c.kind, c.body)
		if got != c.want || ok != c.known {
			t.Errorf("%s %v: %d credits (%v), want %d (%v)", c.model, c.body, got, ok, c.want, c.known)
		}
	}
}
