package simulator

import (
	"net/http"
	"strings"
	"testing"
)

// send sends a request without a body and, unlike doAs, never follows a
// redirect, so a test sees exactly what the simulator answered.
func (h *harness) send(token, method, path string) response {
	h.t.Helper()
	client := *h.srv.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return h.roundTrip(&client, h.request(token, method, path, nil))
}

// TestRouting pins which answer every kind of path and method gets: under
// /v1 the token is checked before the path, so a request without one learns
// nothing about which paths exist; media and /_sim/jobs need no token and
// are not API requests; 404 and 405 are JSON error bodies; and no path is
// ever answered with a redirect, not even one that is not in clean form.
func TestRouting(t *testing.T) {
	h := newHarness(t, Options{})
	id := h.create(pathT2V, `{"prompt":"a"}`)
	h.finish()

	const (
		anon  = ""
		token = testToken
	)
	tests := []struct {
		method, path, token string
		status              int
		code                any    // of an error answer with a body
		allow               string // Allow header of a 405
		api                 bool   // counted as an API request
	}{
		// Under /v1, authentication comes before routing.
		{"POST", pathT2I, anon, 401, codeUnauthorized, "", true},
		{"GET", "/v1/elsewhere", anon, 401, codeUnauthorized, "", true},
		{"DELETE", pathT2I, anon, 401, codeUnauthorized, "", true},
		{"GET", "/v1", anon, 401, codeUnauthorized, "", true},
		{"GET", "/v1/jobs//status", anon, 401, codeUnauthorized, "", true},

		{"GET", "/v1/jobs/{id}/status", token, 200, nil, "", true},
		{"GET", "/v1/creation/{id}", token, 200, nil, "", true},
		{"POST", "/v1/creation/{id}/watermark-free-url", token, 200, nil, "", true},

		{"GET", "/v1", token, 404, codeNotFound, "", true},
		{"GET", "/v1/", token, 404, codeNotFound, "", true},
		{"GET", "/v1/elsewhere", token, 404, codeNotFound, "", true},
		{"GET", "/v1/creation", token, 404, codeNotFound, "", true},
		{"GET", "/v1/creation/", token, 404, codeNotFound, "", true},
		{"GET", "/v1/creation/{id}/", token, 404, codeNotFound, "", true},
		{"POST", pathT2I + "/", token, 404, codeNotFound, "", true},
		{"GET", "/v1/jobs//status", token, 404, codeNotFound, "", true},
		{"GET", "/v1/x/../jobs/{id}/status", token, 404, codeNotFound, "", true},
		{"POST", "/v1/creation/..", token, 404, codeNotFound, "", true},

		{"GET", pathT2I, token, 405, codeNotFound, "POST", true},
		{"GET", pathAFC, token, 405, codeNotFound, "POST", true},
		{"DELETE", "/v1/jobs/{id}/status", token, 405, codeNotFound, "GET", true},
		{"HEAD", "/v1/jobs/{id}/status", token, 405, nil, "GET", true},
		{"HEAD", "/v1/creation/{id}", token, 405, nil, "GET", true},
		{"PUT", "/v1/creation/{id}", token, 405, codeNotFound, "GET", true},
		{"GET", "/v1/creation/{id}/watermark-free-url", token, 405, codeNotFound, "POST", true},

		// Outside /v1 no token is asked for, and nothing counts against RPM.
		{"GET", "/", anon, 404, codeNotFound, "", false},
		{"GET", "/elsewhere", anon, 404, codeNotFound, "", false},
		{"GET", "/elsewhere", token, 404, codeNotFound, "", false},
		{"GET", "//v1/jobs/text2image", anon, 404, codeNotFound, "", false},

		{"GET", "/media/{id}/" + assetVideo, anon, 200, nil, "", false},
		{"HEAD", "/media/{id}/" + assetVideo, anon, 200, nil, "", false},
		{"GET", "/media/avatar/u-1.png", anon, 200, nil, "", false},
		{"POST", "/media/{id}/" + assetVideo, anon, 405, codeNotFound, "GET, HEAD", false},
		{"GET", "/media", anon, 404, codeNotFound, "", false},
		{"GET", "/media/", anon, 404, codeNotFound, "", false},
		{"GET", "/media/{id}", anon, 404, codeNotFound, "", false},
		{"POST", "/media/{id}", anon, 404, codeNotFound, "", false},
		{"GET", "/media/{id}/nothing.png", anon, 404, codeNotFound, "", false},
		{"GET", "/media/x/../{id}/" + assetVideo, anon, 404, codeNotFound, "", false},

		{"GET", "/_sim/jobs", anon, 200, nil, "", false},
		{"HEAD", "/_sim/jobs", anon, 200, nil, "", false},
		{"POST", "/_sim/jobs", anon, 405, codeNotFound, "GET", false},
		{"GET", "/_sim/jobs/", anon, 404, codeNotFound, "", false},
	}
	for _, tt := range tests {
		name := tt.method + " " + tt.path
		if tt.token == anon {
			name += " without token"
		}
		t.Run(name, func(t *testing.T) {
			before := h.sim.Jobs().Requests
			r := h.send(tt.token, tt.method, strings.ReplaceAll(tt.path, "{id}", id))
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.body)
			}
			if tt.code != nil {
				if code := r.errorCode(t); code != tt.code {
					t.Errorf("code %v, want %v", code, tt.code)
				}
			}
			if allow := r.header.Get("Allow"); allow != tt.allow {
				t.Errorf("Allow %q, want %q", allow, tt.allow)
			}
			if counted := h.sim.Jobs().Requests - before; counted != map[bool]int{true: 1}[tt.api] {
				t.Errorf("counted as %d API requests, want api=%v", counted, tt.api)
			}
		})
	}
}

// TestGateBeforeRouting pins the order of the steps under /v1: the token,
// then the RPM limit, then injected errors, and only then the path and
// method. Media and /_sim/jobs pass none of these steps.
func TestGateBeforeRouting(t *testing.T) {
	t.Run("injected errors", func(t *testing.T) {
		h := newHarness(t, Options{ErrorRate: 1})
		for _, tt := range []struct {
			token, method, path string
			status              int
		}{
			{"", "GET", "/v1/elsewhere", http.StatusUnauthorized},
			{testToken, "GET", "/v1/elsewhere", http.StatusInternalServerError},
			{testToken, "DELETE", pathT2I, http.StatusInternalServerError},
			{"", "GET", "/media/avatar/u-1.png", http.StatusOK},
			{"", "GET", "/_sim/jobs", http.StatusOK},
			{"", "GET", "/elsewhere", http.StatusNotFound},
		} {
			if r := h.send(tt.token, tt.method, tt.path); r.status != tt.status {
				t.Errorf("%s %s (token %q): %d %s, want %d", tt.method, tt.path, tt.token, r.status, r.body, tt.status)
			}
		}
	})
	t.Run("RPM", func(t *testing.T) {
		h := newHarness(t, Options{RPM: 1})
		// A 401 does not use up the budget; an unknown path does.
		if r := h.send("", "GET", "/v1/elsewhere"); r.status != http.StatusUnauthorized {
			t.Fatalf("no token: %d %s, want 401", r.status, r.body)
		}
		if r := h.send(testToken, "GET", "/v1/elsewhere"); r.status != http.StatusNotFound {
			t.Fatalf("first request: %d %s, want 404", r.status, r.body)
		}
		r := h.send(testToken, "DELETE", pathT2I)
		if r.status != http.StatusTooManyRequests || r.errorCode(t) != codeMaxRequests || r.header.Get("Allow") != "" {
			t.Fatalf("second request: %d Allow %q %s, want 429 %s before any 405", r.status, r.header.Get("Allow"), r.body, codeMaxRequests)
		}
		for _, path := range []string{"/media/avatar/u-1.png", "/_sim/jobs"} {
			if r := h.send("", "GET", path); r.status != http.StatusOK {
				t.Errorf("GET %s while throttled: %d %s", path, r.status, r.body)
			}
		}
		if rep := h.sim.Jobs(); rep.Requests != 3 || rep.Throttled != 1 {
			t.Errorf("report: %d requests, %d throttled; want 3 and 1", rep.Requests, rep.Throttled)
		}
	})
}
