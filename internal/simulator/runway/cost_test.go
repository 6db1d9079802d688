package runway_test

import (
	"testing"
	"time"

	"github.com/genform/genform/internal/simulator/simkit"
)

// TestTasksSayWhatTheyCost: the official client's types require
// estimatedCost of a create's answer and of a task not yet ended, and
// cost of one that ended (@runwayml/sdk 4.20.1, resources/tasks.ts): the
// estimate while it runs, what it cost once it succeeded, 0 once it
// failed or was cancelled (refunded).
func TestTasksSayWhatTheyCost(t *testing.T) {
	s := start(t, simkit.Options{})
	credits := func(m map[string]any, field string) float64 {
		t.Helper()
		c, _ := m[field].(map[string]any)
		n, ok := c["credits"].(float64)
		if !ok {
			t.Fatalf("%s.credits missing from %v", field, m)
		}
		return n
	}
	video := map[string]any{"model": "veo3.1", "promptText": "waves", "ratio": "1280:720", "duration": 4}
	code, created := s.do("POST", "/v1/text_to_video", video, nil)
	if code != 200 || credits(created, "estimatedCost") <= 0 {
		t.Fatalf("create: %d %v", code, created)
	}
	id := created["id"].(string)
	image := map[string]any{"model": "gen4_image", "promptText": "a cat", "ratio": "1080:1080"}
	failed := s.create("/v1/text_to_image", map[string]any{"model": "gen4_image", "promptText": "a cat [fail]", "ratio": "1080:1080"})
	cancelled := s.create("/v1/text_to_image", image)
	if _, m := s.do("GET", "/v1/tasks/"+id, nil, nil); m["status"] != "PENDING" || credits(m, "estimatedCost") != credits(created, "estimatedCost") {
		t.Errorf("a pending task: %v, want the create's estimate", m)
	}
	if code, _ := s.do("DELETE", "/v1/tasks/"+cancelled, nil, nil); code != 204 {
		t.Fatalf("cancel: %d", code)
	}
	if _, m := s.do("GET", "/v1/tasks/"+cancelled, nil, nil); m["status"] != "CANCELLED" || credits(m, "cost") != 0 {
		t.Errorf("a cancelled task: %v, want cost 0", m)
	}
	s.clock.Advance(time.Minute)
	if _, m := s.do("GET", "/v1/tasks/"+id, nil, nil); m["status"] != "SUCCEEDED" || credits(m, "cost") != credits(created, "estimatedCost") {
		t.Errorf("a succeeded task: %v, want its estimate as its cost", m)
	}
	if _, m := s.do("GET", "/v1/tasks/"+failed, nil, nil); m["status"] != "FAILED" || credits(m, "cost") != 0 {
		t.Errorf("a failed task: %v, want cost 0", m)
	}
}
