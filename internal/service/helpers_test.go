package service

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

const testToken = "tok-S3CRET-value-42"

// pngMagic and mp4Magic start a file that is a PNG image or an MP4 video
// by its first bytes, as downloads check.
const (
	pngMagic = "\x89PNG\r\n\x1a\n"
	mp4Magic = "\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"
)

// seen is one request as the test server received it.
type seen struct {
	Method, Path, Auth, ContentType, UserAgent string
	Body                                       []byte
	At                                         time.Time
}

// server is an httptest server that records every request and answers
// through a handler given the request's index (0-based).
type server struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []seen
}

func newServer(t testing.TB, h func(w http.ResponseWriter, r *http.Request, n int)) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.reqs)
		s.reqs = append(s.reqs, seen{
			Method: r.Method, Path: r.URL.EscapedPath(), Auth: r.Header.Get("Authorization"),
			ContentType: r.Header.Get("Content-Type"), UserAgent: r.Header.Get("User-Agent"),
			Body: body, At: time.Now(),
		})
		s.mu.Unlock()
		h(w, r, n)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

func (s *server) requests() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.reqs...)
}

// waits records the waits a client asked for instead of sleeping, so retry
// schedules can be checked without slowing the tests.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.d = append(w.d, d)
	w.mu.Unlock()
	return ctx.Err()
}

func (w *waits) all() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}

// newClient returns a client of srvURL whose waits are recorded, not slept.
func newClient(t *testing.T, srvURL string, mod func(*Config)) (*Client, *waits) {
	t.Helper()
	cfg := Config{BaseURL: srvURL, Token: testToken}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	w := &waits{}
	c.sleep = w.sleep
	return c, w
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// hijackClose reads nothing more and drops the connection without an
// answer: the request arrived, the answer is lost.
func hijackClose(t *testing.T, w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		t.Error("response writer cannot hijack")
		return
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	conn.Close()
}
