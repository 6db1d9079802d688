package apiclient

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"syscall"
	"testing"

	"github.com/genform/genform/internal/apiclient/apitest"
)

func TestNewRefusesUnsafeBaseURLs(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"empty", Config{}, "empty"},
		{"ftp scheme", Config{BaseURL: "ftp://127.0.0.1/"}, "scheme must be http or https"},
		{"file scheme", Config{BaseURL: "file:///tmp/x"}, "scheme must be http or https"},
		{"no host", Config{BaseURL: "http:///v1"}, "no host"},
		{"remote plain http", Config{BaseURL: "http://gen.example.com"}, "clear text"},
		{"credentials in URL", Config{BaseURL: "https://u:p@gen.example.com"}, "credentials"},
		{"query", Config{BaseURL: "https://gen.example.com/?x=1"}, "query"},
		{"token with newline", Config{BaseURL: "https://gen.example.com", Token: "abc\nX-Evil: 1"}, "control"},
		{"negative budget", Config{BaseURL: "https://gen.example.com", RequestsPerMinute: -1}, "requests per minute"},
		{"remote https", Config{BaseURL: "https://gen.example.com"}, ""},
		{"remote plain http allowed", Config{BaseURL: "http://gen.example.com", AllowRemoteHTTP: true}, ""},
		{"loopback v4", Config{BaseURL: "http://127.0.0.1:8787"}, ""},
		{"loopback v6", Config{BaseURL: "http://[::1]:8787"}, ""},
		{"localhost", Config{BaseURL: "http://localhost:8787/"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New error = %v, want it to mention %q", err, tt.wantErr)
			}
			if tt.cfg.Token != "" && strings.Contains(err.Error(), tt.cfg.Token) {
				t.Fatalf("error repeats the token: %v", err)
			}
		})
	}
}

func TestIsRetryable(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"429", &Error{HTTPStatus: 429}, true},
		{"500", &Error{HTTPStatus: 500}, true},
		{"504 wrapped", fmt.Errorf("polling: %w", &Error{HTTPStatus: 504}), true},
		{"501", &Error{HTTPStatus: 501}, false},
		{"400", &Error{HTTPStatus: 400}, false},
		{"404", &Error{HTTPStatus: 404}, false},
		{"ambiguous create", fmt.Errorf("%w: %w", ErrAmbiguousCreate, &Error{HTTPStatus: 502}), false},
		{"connection failure", &transportError{op: "GET /x", err: syscall.ECONNRESET}, true},
		{"own timeout", &transportError{op: "GET /x", err: context.DeadlineExceeded}, true},
		{"stalled download", fmt.Errorf("x: %w", errStalled), true},
		{"caller cancelled", fmt.Errorf("x: %w", context.Canceled), false},
		{"caller deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), false},
		{"malformed answer", &answerError{op: "GET /x", err: errors.New("bad")}, false},
		{"local failure", errors.New("disk full"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsRetryable(tt.err); got != tt.want {
				t.Errorf("IsRetryable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestTokenGoesOnlyToTheBaseOrigin(t *testing.T) {
	c, err := New(Config{BaseURL: "https://gen.example.com/api", Token: apitest.Token})
	if err != nil {
		t.Fatal(err)
	}
	for raw, want := range map[string]bool{
		"https://gen.example.com/media/1.png":     true,
		"https://GEN.example.com:443/media/1.png": true,
		"http://gen.example.com/media/1.png":      false,
		"https://gen.example.com:8443/1.png":      false,
		"https://cdn.gen.example.com/1.png":       false,
		"https://gen.example.com.evil.test/1.png": false,
	} {
		u, _ := url.Parse(raw)
		if got := c.sameOrigin(u); got != want {
			t.Errorf("sameOrigin(%s) = %v, want %v", raw, got, want)
		}
	}
}

// TestBaseURLErrorsHideThePassword: whatever is wrong with a base URL that
// carries a password, the error does not repeat it, even when the URL
// does not parse.
func TestBaseURLErrorsHideThePassword(t *testing.T) {
	for _, raw := range []string{
		"http://user:hunter2@127.0.0.1:8787",
		"ftp://user:hunter2@example.com",
		"http://user:hunter2@127.0.0.1:8787/%zz",
		"http://user:hunter2@[::1",
	} {
		_, err := parseBaseURL(raw, false)
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("parseBaseURL(%q) = %v", raw, err)
		}
	}
}
