package apitest

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Token is the token the tests' clients send: a secret no answer may
// echo.
const Token = "tok-S3CRET-value-42"

// PNGMagic and MP4Magic start a file that is a PNG image or an MP4 video
// by its first bytes, as downloads check.
const (
	PNGMagic = "\x89PNG\r\n\x1a\n"
	MP4Magic = "\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"
)

// Seen is one request as the test server received it.
type Seen struct {
	Method, Path, Auth, ContentType, UserAgent string
	Body                                       []byte
	At                                         time.Time
}

// Server is an httptest server that records every request and answers
// through a handler given the request's index (0-based).
type Server struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []Seen
}

// NewServer starts a Server answering with h, closed when t ends.
func NewServer(t testing.TB, h func(w http.ResponseWriter, r *http.Request, n int)) *Server {
	t.Helper()
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.reqs)
		s.reqs = append(s.reqs, Seen{
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

// Count is how many requests the server received.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

// Requests are the requests the server received, in order.
func (s *Server) Requests() []Seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Seen(nil), s.reqs...)
}

// Waits records the waits a client asked for instead of sleeping, so
// retry schedules can be checked without slowing the tests: its Sleep is
// a client's Config.Sleep.
type Waits struct {
	mu sync.Mutex
	d  []time.Duration
}

// Sleep records d and returns at once, with ctx's error.
func (w *Waits) Sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.d = append(w.d, d)
	w.mu.Unlock()
	return ctx.Err()
}

// All are the waits asked for, in order.
func (w *Waits) All() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}

// WriteJSON answers status with body as JSON.
func WriteJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// HijackClose reads nothing more and drops the connection without an
// answer: the request arrived, the answer is lost.
func HijackClose(t testing.TB, w http.ResponseWriter) {
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

// NoControl fails t when s, a text what names, holds a control
// character a terminal would act on.
func NoControl(t testing.TB, what, s string) {
	t.Helper()
	if i := strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }); i >= 0 {
		t.Errorf("%s holds the control character %q: %q", what, s[i], s)
	}
}

// RefusingAddr is a loopback host:port on which nothing listens.
func RefusingAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// Retries records what a client reports of each retry (its Record is a
// client's Config.OnRetry), with the context of the call that retried.
type Retries[T any] struct {
	mu    sync.Mutex
	infos []T
	ctxs  []context.Context
}

// Record notes one retry.
func (r *Retries[T]) Record(ctx context.Context, info T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.infos = append(r.infos, info)
	r.ctxs = append(r.ctxs, ctx)
}

// All are the retries recorded, in order.
func (r *Retries[T]) All() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]T(nil), r.infos...)
}

// Contexts are the contexts of the calls that retried, in order.
func (r *Retries[T]) Contexts() []context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]context.Context(nil), r.ctxs...)
}
