package simtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genform/genform/internal/simulator/simkit"
)

// Clock is a clock a test moves by hand, so lifecycle and expiry tests
// never sleep. It is safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock is a clock standing at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Epoch is where the simulators' tests start their clocks: a fixed
// instant, so the times a simulator answers can be asserted.
var Epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Start makes a simulator with newSim from opts and serves it on the
// loopback for the length of t; a simulator that cannot be made fails
// the test.
func Start[S http.Handler](t *testing.T, newSim func(simkit.Options) (S, error), opts simkit.Options) (S, *httptest.Server) {
	t.Helper()
	sim, err := newSim(opts)
	if err != nil {
		t.Fatal(err)
	}
	return sim, Serve(t, sim)
}

// Serve serves h on the loopback for the length of t.
func Serve(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// Do sends a request to url (a path on srv, or a whole URL) with body and
// the headers given as name, value pairs, and returns the answer's status
// and headers, and its body decoded as a JSON object (nil when it is
// not one).
func Do(t *testing.T, srv *httptest.Server, method, url, body string, header ...string) (int, http.Header, map[string]any) {
	t.Helper()
	resp, err := send(srv, method, url, body, header)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	json.Unmarshal(b, &m) //nolint:errcheck // a body that is not an object is nil
	return resp.StatusCode, resp.Header, m
}

// Lost sends a request as Do does, and checks its answer is lost: the
// simulator made what it asked for, then dropped the connection
// (Options.LoseRate).
func Lost(t *testing.T, srv *httptest.Server, method, url, body string, header ...string) {
	t.Helper()
	if resp, err := send(srv, method, url, body, header); err == nil {
		resp.Body.Close()
		t.Fatalf("a lost answer came back: %d", resp.StatusCode)
	}
}

// send sends the request Do and Lost describe.
func send(srv *httptest.Server, method, url, body string, header []string) (*http.Response, error) {
	if strings.HasPrefix(url, "/") {
		url = srv.URL + url
	}
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return srv.Client().Do(req)
}

// Report reads the /_sim/jobs report of the simulator serving at base (a
// scheme and a host), over the loopback, as a script or a test driving
// a running simulator does.
func Report(base string) (simkit.JobsReport, error) {
	resp, err := http.Get(base + "/_sim/jobs")
	if err != nil {
		return simkit.JobsReport{}, err
	}
	defer resp.Body.Close()
	var rep simkit.JobsReport
	if resp.StatusCode != http.StatusOK {
		return rep, fmt.Errorf("GET /_sim/jobs answered %s", resp.Status)
	}
	err = json.NewDecoder(resp.Body).Decode(&rep)
	return rep, err
}
