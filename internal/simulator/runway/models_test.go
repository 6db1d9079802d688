package runway_test

import (
	"net/http"
	"testing"

	"github.com/genform/genform/internal/simulator/simkit"
)

// TestTakesTheClientsNewestModels: the official client lists these
// models for each endpoint (@runwayml/sdk 4.20.1); the simulator must
// take them there, and still refuse a model on an endpoint that does not
// list it.
func TestTakesTheClientsNewestModels(t *testing.T) {
	s := start(t, simkit.Options{})
	image := "data:image/png;base64,iVBORw0KGgo="
	for _, c := range []struct {
		path, model string
		want        int
	}{
		{"/v1/text_to_image", "muse_image", http.StatusOK},
		{"/v1/text_to_image", "grok_imagine_image_2", http.StatusOK},
		{"/v1/text_to_image", "gpt_image_2_5_flare", http.StatusOK},
		{"/v1/text_to_image", "gpt_image_2_5_sunburst", http.StatusOK},
		{"/v1/image_to_video", "hailuo3", http.StatusOK},
		{"/v1/image_to_video", "h3_max", http.StatusOK},
		{"/v1/image_to_video", "gemini_omni_flash_1.1", http.StatusOK},
		{"/v1/text_to_video", "wan3", http.StatusOK},
		{"/v1/text_to_video", "wan3_prime", http.StatusOK},
		{"/v1/text_to_video", "seedance2_5", http.StatusOK},
		{"/v1/text_to_video", "grok_imagine_1_5", http.StatusOK},
		{"/v1/text_to_video", "gen4_turbo", http.StatusBadRequest},
		{"/v1/text_to_image", "wan3", http.StatusBadRequest},
	} {
		body := map[string]any{"model": c.model, "promptText": "a cat", "ratio": "1280:720"}
		if c.path == "/v1/image_to_video" {
			body["promptImage"] = image
		}
		if code, m := s.do("POST", c.path, body, nil); code != c.want {
			t.Errorf("POST %s model %s: %d %v, want %d", c.path, c.model, code, m, c.want)
		}
	}
}
