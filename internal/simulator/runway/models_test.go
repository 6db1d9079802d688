package runway_test

import (
	"net/http"
	"testing"

	"github.com/genform/genform/internal/simulator/simkit"
)

// TestValidatesEachModelAsTheClientTypesIt: each model is taken at the
// endpoints the official client lists it for (@runwayml/sdk 4.20.1),
// with the ratios, durations and fields its type gives it there, and
// refused with a 400 that names what is wrong otherwise.
func TestValidatesEachModelAsTheClientTypesIt(t *testing.T) {
	s := start(t, simkit.Options{})
	image := "data:image/png;base64,iVBORw0KGgo="
	for _, c := range []struct {
		name, path string
		body       map[string]any
		want       int
	}{
		{"a new image model at one of its ratios", "/v1/text_to_image",
			map[string]any{"model": "gpt_image_2", "promptText": "a cat", "ratio": "1920:1088", "outputCount": 2, "quality": "low"}, http.StatusOK},
		{"a new image model at a ratio its type does not list", "/v1/text_to_image",
			map[string]any{"model": "gpt_image_2", "promptText": "a cat", "ratio": "1280:720"}, http.StatusBadRequest},
		{"a value of a typed field the type does not list", "/v1/text_to_image",
			map[string]any{"model": "gpt_image_2", "promptText": "a cat", "ratio": "1920:1088", "quality": "ultra"}, http.StatusBadRequest},
		{"seed on a model whose type has none", "/v1/text_to_image",
			map[string]any{"model": "gpt_image_2", "promptText": "a cat", "ratio": "1920:1088", "seed": 1}, http.StatusBadRequest},
		{"an aspect-ratio model", "/v1/text_to_video",
			map[string]any{"model": "hailuo3", "promptText": "a cat", "ratio": "16:9", "resolution": "768p", "duration": 6}, http.StatusOK},
		{"a resolution-only model from an image", "/v1/image_to_video",
			map[string]any{"model": "happyhorse_1_0", "promptImage": image, "resolution": "1080p", "duration": 5}, http.StatusOK},
		{"ratio where the model's type has none", "/v1/image_to_video",
			map[string]any{"model": "happyhorse_1_0", "promptImage": image, "ratio": "1280:720"}, http.StatusBadRequest},
		{"seedance2 lets the model choose the length", "/v1/text_to_video",
			map[string]any{"model": "seedance2", "promptText": "a cat", "ratio": "1920:1080", "duration": "auto", "seed": 3}, http.StatusOK},
		{"seedance2 from reference images", "/v1/image_to_video",
			map[string]any{"model": "seedance2", "promptText": "a cat", "promptImage": []any{map[string]any{"uri": image}, map[string]any{"uri": image}, map[string]any{"uri": image}}}, http.StatusOK},
		{"gen4.5 past its 10 seconds", "/v1/text_to_video",
			map[string]any{"model": "gen4.5", "promptText": "a cat", "ratio": "1280:720", "duration": 11}, http.StatusBadRequest},
		{"veo3.1 at a length its type does not list", "/v1/text_to_video",
			map[string]any{"model": "veo3.1", "promptText": "a cat", "ratio": "1920:1080", "duration": 5}, http.StatusBadRequest},
		{"a required field left out", "/v1/text_to_video",
			map[string]any{"model": "wan3", "ratio": "1280:720"}, http.StatusBadRequest},
		{"video to video", "/v1/video_to_video",
			map[string]any{"model": "aleph2", "videoUri": "https://example.com/in.mp4", "promptText": "make it snow"}, http.StatusOK},
		{"veo3, which the client no longer lists", "/v1/text_to_video",
			map[string]any{"model": "veo3", "promptText": "a cat", "ratio": "1280:720", "duration": 8}, http.StatusBadRequest},
		{"gen4_turbo from text", "/v1/text_to_video",
			map[string]any{"model": "gen4_turbo", "promptText": "a cat", "ratio": "1280:720"}, http.StatusBadRequest},
		{"a video model at the image endpoint", "/v1/text_to_image",
			map[string]any{"model": "wan3", "promptText": "a cat", "ratio": "1280:720"}, http.StatusBadRequest},
	} {
		if code, m := s.do("POST", c.path, c.body, nil); code != c.want {
			t.Errorf("%s: POST %s %v: %d %v, want %d", c.name, c.path, c.body, code, m, c.want)
		}
	}
}
