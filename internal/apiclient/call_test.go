package apiclient

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/genform/genform/internal/apiclient/apitest"
)

// TestDoSpeaksAProvidersAPI: a call's answer comes back as it is, scrubbed
// of the token; the token goes with the scheme asked for, to the base URL's
// origin only (an absolute URL elsewhere gets none); a "detail" error body
// is the error's message; the create rule holds.
func TestDoSpeaksAProvidersAPI(t *testing.T) {
	other := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		apitest.WriteJSON(w, 200, `{"status":"COMPLETED"}`)
	})
	srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		switch r.URL.Path {
		case "/ok":
			apitest.WriteJSON(w, 200, `{"echo":"`+apitest.Token+`","request_id":"r1"}`)
		case "/refused":
			apitest.WriteJSON(w, 422, `{"detail":[{"loc":["body","prompt"],"msg":"field required","type":"missing"}]}`)
		case "/create":
			apitest.WriteJSON(w, 500, `{"detail":"internal error"}`)
		}
	})
	c, _ := newClient(t, srv.URL, func(cfg *Config) { cfg.AuthScheme = "Key" })
	ctx := context.Background()

	b, err := c.Do(ctx, Call{Method: http.MethodGet, Path: "/ok", Header: map[string]string{"X-Api-Version": "2024-11-06"}})
	if err != nil || strings.Contains(string(b), apitest.Token) || !strings.Contains(string(b), `"request_id":"r1"`) {
		t.Fatalf("answer %s, %v", b, err)
	}
	if got := srv.Requests()[0].Auth; got != "Key "+apitest.Token {
		t.Errorf("Authorization = %q, want the Key scheme", got)
	}
	if _, err := c.Do(ctx, Call{Method: http.MethodGet, URL: other.URL + "/requests/r1/status"}); err != nil {
		t.Fatal(err)
	}
	if got := other.Requests()[0].Auth; got != "" {
		t.Errorf("the token went to another origin: %q", got)
	}

	// A 422 may have been charged where the provider says so; where it
	// documents that it made nothing, it is a refusal.
	_, err = c.Do(ctx, Call{Method: http.MethodPost, Path: "/refused", Body: []byte(`{}`), Create: true})
	if !errors.Is(err, ErrAmbiguousCreate) {
		t.Errorf("a 422 by default = %v, want ambiguous", err)
	}
	_, err = c.Do(ctx, Call{Method: http.MethodPost, Path: "/refused", Body: []byte(`{}`), Create: true, Refusals: []int{400, 401, 403, 404, 422}})
	var se *Error
	if !errors.As(err, &se) || se.Message != "prompt: field required" || errors.Is(err, ErrAmbiguousCreate) {
		t.Errorf("refusal = %v", err)
	}
	_, err = c.Do(ctx, Call{Method: http.MethodPost, Path: "/create", Body: []byte(`{}`), Create: true})
	if !errors.Is(err, ErrAmbiguousCreate) || !strings.Contains(err.Error(), "internal error") {
		t.Errorf("a create answered 500 = %v, want ambiguous", err)
	}
	if n := srv.Count(); n != 4 {
		t.Errorf("%d requests, want 4: nothing is sent twice", n)
	}
}
