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

// TestKeyRefusalsArePerProvider: a 403 refuses the token only where the
// API says so. With Config.KeyRefusals of 401 alone, a 403 to a create (a
// model the account may not use) is a refusal of that request, in the
// provider's words, never ErrUnauthorized, while a 401 still is; a call
// naming its own statuses (a read of the account) takes its 403 as the
// key's; without either, 401 and 403 both are, as before.
func TestKeyRefusalsArePerProvider(t *testing.T) {
	srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		switch r.URL.Path {
		case "/forbidden":
			apitest.WriteJSON(w, 403, `{"error":{"message":"Your organization must be verified to use the model.","type":"invalid_request_error"}}`)
		case "/unauthorized":
			apitest.WriteJSON(w, 401, `{"error":{"message":"Incorrect API key provided."}}`)
		}
	})
	ctx := context.Background()
	create := func(c *Client, path string, keys []int) error {
		_, err := c.Do(ctx, Call{Method: http.MethodPost, Path: path, Body: []byte(`{}`), Create: true,
			Refusals: []int{400, 401, 403, 404}, KeyRefusals: keys})
		return err
	}

	own, _ := newClient(t, srv.URL, func(cfg *Config) { cfg.KeyRefusals = []int{401} })
	err := create(own, "/forbidden", nil)
	if errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrAmbiguousCreate) || !strings.Contains(err.Error(), "must be verified") {
		t.Errorf("a 403 with 401 alone refusing the key = %v, want a refusal of this request in its words", err)
	}
	if err := create(own, "/unauthorized", nil); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("a 401 = %v, want ErrUnauthorized", err)
	}
	if err := create(own, "/forbidden", []int{401, 403}); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("a 403 to a call naming 403 = %v, want ErrUnauthorized", err)
	}
	if err := own.Probe(ctx, Call{Method: http.MethodGet, Path: "/forbidden"}); err != nil {
		t.Errorf("a probe answered 403, not a key refusal here = %v, want nil", err)
	}

	byDefault, _ := newClient(t, srv.URL, nil)
	if err := create(byDefault, "/forbidden", nil); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("a 403 by default = %v, want ErrUnauthorized", err)
	}
	if n := srv.Count(); n != 5 {
		t.Errorf("%d requests, want 5: no refusal is sent again", n)
	}
}

// TestDoSendsTheBodysContentType: a call's body goes with its own media
// type (a multipart form with its boundary), JSON by default.
func TestDoSendsTheBodysContentType(t *testing.T) {
	srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		apitest.WriteJSON(w, 200, `{}`)
	})
	c, _ := newClient(t, srv.URL, nil)
	ctx := context.Background()
	if _, err := c.Do(ctx, Call{Method: http.MethodPost, Path: "/a", Body: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	form := "multipart/form-data; boundary=b1"
	if _, err := c.Do(ctx, Call{Method: http.MethodPost, Path: "/b", Body: []byte("--b1--\r\n"), ContentType: form, Create: true}); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if reqs[0].ContentType != "application/json" || reqs[1].ContentType != form || string(reqs[1].Body) != "--b1--\r\n" {
		t.Errorf("content types %q, %q (body %q)", reqs[0].ContentType, reqs[1].ContentType, reqs[1].Body)
	}
}
