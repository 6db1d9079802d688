package simulator

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/simulator/simkit/simtest"
)

// newFakeClock is a clock tests move by hand, so lifecycle and expiry
// tests never sleep.
func newFakeClock() *simtest.Clock {
	return simtest.NewClock(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
}

const testToken = "test-token"

// harness is a simulator behind a real loopback HTTP server with a fake
// clock, and a client for it.
type harness struct {
	t     *testing.T
	sim   *Server
	srv   *httptest.Server
	clock *simtest.Clock
}

func newHarness(t *testing.T, opts Options) *harness {
	t.Helper()
	h := &harness{t: t, clock: newFakeClock()}
	if opts.Now == nil {
		opts.Now = h.clock.Now
	}
	if opts.Latency == 0 {
		opts.Latency = 10 * time.Second
	}
	sim, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h.sim = sim
	h.srv = httptest.NewServer(sim)
	t.Cleanup(func() {
		h.srv.Close()
		if err := sim.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return h
}

// response is an answer read in full.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("answer %d is not a JSON object: %v\n%s", r.status, err, r.body)
	}
	return m
}

// value returns the value of a success envelope, failing unless the answer
// is one.
func (r response) value(t *testing.T) map[string]any {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d, want 200: %s", r.status, r.body)
	}
	m := r.json(t)
	if m["status"] != successStatus {
		t.Fatalf("envelope status %v, want %q: %s", m["status"], successStatus, r.body)
	}
	v, ok := m["value"].(map[string]any)
	if !ok {
		t.Fatalf("envelope has no value object: %s", r.body)
	}
	return v
}

// errorCode returns the code of an error answer, checking its shape: a
// number in the flat shape, a string in the nested one.
func (r response) errorCode(t *testing.T) any {
	t.Helper()
	m := r.json(t)
	fields := m
	if nested, ok := m["error"].(map[string]any); ok {
		fields = nested
		if _, ok := fields["code"].(string); !ok {
			t.Fatalf("nested error code is not a string: %s", r.body)
		}
	} else if _, ok := fields["code"].(float64); !ok {
		t.Fatalf("flat error code is not a number: %s", r.body)
	}
	if msg, _ := fields["message"].(string); msg == "" {
		t.Fatalf("error has no message: %s", r.body)
	}
	if _, ok := fields["details"].([]any); !ok {
		t.Fatalf("error has no details array: %s", r.body)
	}
	if f, ok := fields["code"].(float64); ok {
		return int(f)
	}
	return fields["code"]
}

func (r response) errorMessage(t *testing.T) string {
	t.Helper()
	m := r.json(t)
	if nested, ok := m["error"].(map[string]any); ok {
		m = nested
	}
	s, _ := m["message"].(string)
	return s
}

// do sends a request with the test token; body may be nil, a string sent
// as is, or a value encoded as JSON.
func (h *harness) do(method, path string, body any) response {
	return h.doAs(testToken, method, path, body)
}

func (h *harness) doAs(token, method, path string, body any) response {
	h.t.Helper()
	return h.roundTrip(h.srv.Client(), h.request(token, method, path, body))
}

// request is a request to path (on the simulator, or a whole URL) sent
// with token, when it is not "", and body as doAs takes it.
func (h *harness) request(token, method, path string, body any) *http.Request {
	h.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		js, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(js)
	}
	url := path
	if strings.HasPrefix(path, "/") {
		url = h.srv.URL + path
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

// roundTrip sends req with client and reads the whole answer.
func (h *harness) roundTrip(client *http.Client, req *http.Request) response {
	h.t.Helper()
	resp, err := client.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatalf("%s %s: reading body: %v", req.Method, req.URL.Path, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// create submits a job and returns its id.
func (h *harness) create(endpoint string, body any) string {
	h.t.Helper()
	v := h.do("POST", endpoint, body).value(h.t)
	id, _ := v["generation_id"].(string)
	if id == "" {
		h.t.Fatalf("create answered no generation_id: %v", v)
	}
	return id
}

func (h *harness) status(id string) (string, float64) {
	h.t.Helper()
	v := h.do("GET", "/v1/jobs/"+id+"/status", nil).value(h.t)
	s, _ := v["status"].(string)
	p, ok := v["progress"].(float64)
	if !ok {
		h.t.Fatalf("status has no numeric progress: %v", v)
	}
	return s, p
}

// detail fetches a creation detail decoded into the documented fields.
func (h *harness) detail(id string) creationDetail {
	h.t.Helper()
	r := h.do("GET", "/v1/creation/"+id, nil)
	h.t.Helper()
	r.value(h.t)
	var env struct {
		Value creationDetail `json:"value"`
	}
	if err := json.Unmarshal(r.body, &env); err != nil {
		h.t.Fatal(err)
	}
	return env.Value
}

// download fetches a media URL without a token, failing unless it answers
// 200 with the given content type.
func (h *harness) download(url, contentType string) []byte {
	h.t.Helper()
	r := h.doAs("", "GET", url, nil)
	if r.status != http.StatusOK {
		h.t.Fatalf("GET %s: status %d: %s", url, r.status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != contentType {
		h.t.Fatalf("GET %s: Content-Type %q, want %q", url, ct, contentType)
	}
	return r.body
}

// finish moves the clock to when jobs created now have finished.
func (h *harness) finish() { h.clock.Advance(h.sim.Core.Opts.Latency) }

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
