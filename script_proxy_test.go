package main

import (
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
)

type proxyKey struct{}

// chargeProxy is the proxy charge-proxy starts, once per script: its
// address is the service's identity, so later calls change what it does
// rather than start another.
type chargeProxy struct {
	mu      sync.Mutex
	srv     *httptest.Server
	status  int
	answer  string
	html    bool
	times   int // creates still to fail; negative: every one
	forward *httputil.ReverseProxy
}

func (p *chargeProxy) close() {
	if p.srv != nil {
		p.srv.Close()
	}
}

// charge-proxy [-status N] [-body service|gateway|none] [-times N] puts a
// proxy in front of the script's simulator, as a gateway or a failing
// service would stand, and points GENFORM_BASE_URL at it. It forwards
// every request; a create request it forwards to the simulator (which
// makes, and so charges, the job) and then answers with status N instead
// of the simulator's answer: with the service's own error body (-body
// service, the default), a gateway's HTML page (gateway), or nothing. It
// does so for the next -times creates (default every one; 0 lets every
// answer through). Called again, it changes what the same proxy does. It
// prints nothing; sim-stats counts the creates.
func cmdChargeProxy(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! charge-proxy")
	}
	fs := flag.NewFlagSet("charge-proxy", flag.ContinueOnError)
	status := fs.Int("status", http.StatusInternalServerError, "")
	body := fs.String("body", "service", "")
	times := fs.Int("times", -1, "")
	ts.Check(fs.Parse(args))
	var answer string
	switch *body {
	case "service":
		answer = `{"error":{"message":"internal service error","code":"H-10005001","details":[]}}`
	case "gateway":
		answer = "<html><body><h1>Bad Gateway</h1></body></html>"
	case "none":
	default:
		ts.Fatalf("charge-proxy: -body takes service, gateway or none")
	}
	upstream, err := url.Parse(holder(ts).url())
	ts.Check(err)
	p := ts.Value(proxyKey{}).(*chargeProxy)
	p.mu.Lock()
	p.status, p.answer, p.html, p.times = *status, answer, *body == "gateway", *times
	p.forward = httputil.NewSingleHostReverseProxy(upstream)
	start := p.srv == nil
	p.mu.Unlock()
	if start {
		p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	}
	ts.Setenv("GENFORM_BASE_URL", p.srv.URL)
	ts.Setenv("PROXY_URL", p.srv.URL)
}

func (p *chargeProxy) serve(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	fail := r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1/jobs/") && p.times != 0
	if fail && p.times > 0 {
		p.times--
	}
	status, answer, html, forward := p.status, p.answer, p.html, p.forward
	p.mu.Unlock()
	if !fail {
		forward.ServeHTTP(w, r)
		return
	}
	// The job is made, and paid for, on the simulator; its answer is
	// replaced.
	forward.ServeHTTP(httptest.NewRecorder(), r)
	switch {
	case answer == "":
	case html:
		w.Header().Set("Content-Type", "text/html")
	default:
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	io.WriteString(w, answer)
}
