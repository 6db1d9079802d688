package fal

import (
	"testing"
	"time"

	"github.com/genform/genform/internal/simulator/simkit"
	"github.com/genform/genform/internal/simulator/simkit/simtest"
)

// TestAnswersNameTheirRequest: fal's client reads the request id of a
// result (Result.requestId, which subscribe and queue.result return)
// from the X-Fal-Request-Id header, not from the body.
func TestAnswersNameTheirRequest(t *testing.T) {
	c := simtest.NewClock(simtest.Epoch)
	_, srv := simtest.Start(t, New, simkit.Options{Token: "k", Latency: time.Second, Now: c.Now})
	_, _, a := do(t, srv, "POST", "/fal-ai/flux/schnell", "k", `{"prompt":"a cat"}`)
	id, _ := a["request_id"].(string)
	c.Advance(2 * time.Second)
	for _, u := range []string{a["status_url"].(string), a["response_url"].(string)} {
		if code, h, body := do(t, srv, "GET", u, "k", ""); code != 200 || h.Get("X-Fal-Request-Id") != id {
			t.Errorf("GET %s: %d, X-Fal-Request-Id %q, want %q (%v)", u, code, h.Get("X-Fal-Request-Id"), id, body)
		}
	}
}
