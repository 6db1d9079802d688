package reference

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/apiclient/apitest"

	"github.com/genform/genform/internal/addrs"
)

// TestUnreachableServiceFailsFast: a base URL where no service can be
// reached fails every kind of request within seconds, with real waits (no
// recorded sleeps), naming the scheme, the host:port and what failed, and
// without a single retry.
func TestUnreachableServiceFailsFast(t *testing.T) {
	refused := apitest.RefusingAddr(t)
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		apitest.WriteJSON(w, 200, `{"status":"success","value":{}}`)
	}))
	t.Cleanup(plain.Close)
	plainAddr := strings.TrimPrefix(plain.URL, "http://")

	tests := []struct {
		name, baseURL string
		want          []string
	}{
		{"connection refused", "http://" + refused, []string{refused + " (http)", "connection refused"}},
		{"host name that does not resolve", "http://genform-test.invalid", []string{"genform-test.invalid:80 (http)", "does not resolve"}},
		{"TLS handshake with a plain HTTP server", "https://" + plainAddr, []string{plainAddr + " (https)", "TLS handshake failed"}},
	}
	calls := []struct {
		name string
		do   func(context.Context, *Client) error
	}{
		{"CheckCredentials", func(ctx context.Context, c *Client) error { return c.CheckCredentials(ctx) }},
		{"Create", func(ctx context.Context, c *Client) error {
			_, err := c.Create(ctx, addrs.Text2Image, []byte(`{"prompt":"p"}`))
			return err
		}},
		{"Status", func(ctx context.Context, c *Client) error { _, err := c.Status(ctx, "job-1"); return err }},
		{"Detail", func(ctx context.Context, c *Client) error { _, err := c.Detail(ctx, "job-1"); return err }},
	}
	for _, tt := range tests {
		for _, call := range calls {
			t.Run(tt.name+"/"+call.name, func(t *testing.T) {
				var rs apitest.Retries[apiclient.RetryInfo]
				c, err := newRefClient(apiclient.Config{BaseURL: tt.baseURL, Token: apitest.Token, AllowRemoteHTTP: true, OnRetry: rs.Record})
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				start := time.Now()
				err = call.do(ctx, c)
				if took := time.Since(start); took > 5*time.Second {
					t.Errorf("took %s to fail, want under 5s", took)
				}
				if !errors.Is(err, apiclient.ErrUnreachable) {
					t.Fatalf("err = %v, want it to match ErrUnreachable", err)
				}
				for _, want := range tt.want {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("err = %q, want it to say %q", err, want)
					}
				}
				if errors.Is(err, apiclient.ErrAmbiguousCreate) || apiclient.IsRetryable(err) {
					t.Errorf("nothing reached a service: ambiguous=%v retryable=%v", errors.Is(err, apiclient.ErrAmbiguousCreate), apiclient.IsRetryable(err))
				}
				if got := rs.All(); len(got) != 0 {
					t.Errorf("retried %d times: %+v", len(got), got)
				}
			})
		}
	}
}

// TestRefusedConnectionRetriedOnceTheServiceAnswered: after the service
// has answered once, a refused connection is a restart, not a wrong
// address; it is retried (a create too, since nothing reached the
// service) and reported.
func TestRefusedConnectionRetriedOnceTheServiceAnswered(t *testing.T) {
	srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if r.Method == http.MethodPost {
			apitest.WriteJSON(w, 200, `{"status":"success","value":{"generation_id":"gen-2"}}`)
			return
		}
		apitest.WriteJSON(w, 404, `{"error":{"message":"no such generation","code":"H-10002003"}}`)
	})
	var dials atomic.Int32
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials.Add(1) == 2 {
			return nil, &net.OpError{Op: "dial", Net: network, Err: syscall.ECONNREFUSED}
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	var rs apitest.Retries[apiclient.RetryInfo]
	c, w := newClient(t, srv.URL, func(cfg *apiclient.Config) {
		cfg.HTTPClient = &http.Client{Transport: tr}
		cfg.OnRetry = rs.Record
	})
	if err := c.CheckCredentials(context.Background()); err != nil {
		t.Fatalf("CheckCredentials: %v", err)
	}
	tr.CloseIdleConnections() // the create must dial again
	id, err := c.Create(context.Background(), addrs.Text2Image, []byte(`{"prompt":"p"}`))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if id != "gen-2" || srv.Count() != 2 || dials.Load() != 3 || len(w.All()) != 1 {
		t.Errorf("id=%q requests=%d dials=%d waits=%v; want gen-2, 2 requests after 3 dials and 1 wait",
			id, srv.Count(), dials.Load(), w.All())
	}
	got := rs.All()
	if len(got) != 1 || got[0].Op != "POST /v1/jobs/text2image" || got[0].Attempt != 2 ||
		got[0].HTTPStatus != 0 || !strings.Contains(got[0].Reason(), "connection refused") {
		t.Errorf("retries reported = %+v, want one of the create, attempt 2, connection refused", got)
	}
}

// TestOnRetryReportsEachRetry: every retry is announced before its wait,
// with the request, the attempt it leads to, the answer's status and the
// wait (the service's Retry-After when longer than the backoff), in the
// caller's context.
func TestOnRetryReportsEachRetry(t *testing.T) {
	srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		switch n {
		case 0:
			w.Header().Set("Retry-After", "2")
			apitest.WriteJSON(w, 429, `{"error":{"message":"too many generation tasks","code":"VB-100012"}}`)
		case 1:
			apitest.WriteJSON(w, 503, `<html>overloaded</html>`)
		case 2:
			apitest.WriteJSON(w, 500, `{"error":{"message":"service error","code":"H-10005001"}}`)
		default:
			apitest.WriteJSON(w, 200, `{"status":"success","value":{"status":"succeed","progress":1}}`)
		}
	})
	var rs apitest.Retries[apiclient.RetryInfo]
	c, w := newClient(t, srv.URL, func(cfg *apiclient.Config) { cfg.OnRetry = rs.Record })
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "image.a")
	if _, err := c.Status(ctx, "job-1"); err != nil {
		t.Fatalf("Status: %v", err)
	}
	got := rs.All()
	want := []struct {
		status int
		reason string
	}{{429, "429 Too Many Requests"}, {503, "503 Service Unavailable"}, {500, "500 Internal Server Error"}}
	if len(got) != len(want) {
		t.Fatalf("reported %d retries, want %d: %+v", len(got), len(want), got)
	}
	waits := w.All()
	for i, wt := range want {
		g := got[i]
		if g.Op != "GET /v1/jobs/job-1/status" || g.Attempt != i+2 || g.MaxAttempts != apiclient.DefaultMaxRetries+1 ||
			g.HTTPStatus != wt.status || g.Reason() != wt.reason || g.Wait != waits[i] {
			t.Errorf("retry %d = %+v (reason %q), want op GET /v1/jobs/job-1/status, attempt %d, %s, wait %s",
				i, g, g.Reason(), i+2, wt.reason, waits[i])
		}
		if rs.Contexts()[i].Value(key{}) != "image.a" {
			t.Errorf("retry %d was reported without the caller's context", i)
		}
	}
	if got[0].Wait < 2*time.Second {
		t.Errorf("the 429's wait is %s, want at least its Retry-After of 2s", got[0].Wait)
	}
}

// TestCheckCredentialsReadsTheAnswer: only 401 and 403 say the token is
// refused; a 404 (what a service that accepts it answers), another refusal
// or a success say nothing against it. One request, and a read.
func TestCheckCredentialsReadsTheAnswer(t *testing.T) {
	tests := []struct {
		status  int
		body    string
		refused bool
	}{
		{404, `{"error":{"message":"generation not found","code":"H-10002003"}}`, false},
		{401, `{"error":{"message":"invalid token","code":"H-10001001"}}`, true},
		{403, `{"error":{"message":"permission denied","code":"H-10002002"}}`, true},
		{400, `{"message":"malformed id","code":400011}`, false},
		{200, `{"status":"success","value":{"status":"succeed"}}`, false},
		{200, `not json`, false},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) { apitest.WriteJSON(w, tt.status, tt.body) })
			c, _ := newClient(t, srv.URL, nil)
			err := c.CheckCredentials(context.Background())
			if got := errors.Is(err, apiclient.ErrUnauthorized); got != tt.refused {
				t.Errorf("err = %v; refused = %v, want %v", err, got, tt.refused)
			}
			if !tt.refused && err != nil {
				t.Errorf("err = %v, want nil", err)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 || reqs[0].Method != http.MethodGet || reqs[0].Auth != "Bearer "+apitest.Token ||
				reqs[0].Path != "/v1/jobs/"+credentialsProbeID+"/status" {
				t.Errorf("requests = %+v, want one authenticated GET of the status of %s", reqs, credentialsProbeID)
			}
		})
	}
}

// TestUnauthorizedIsNotAboutDownloads: a 403 on a media link is the link's
// (an expired signed URL), not a refused token.
func TestUnauthorizedIsNotAboutDownloads(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		apitest.WriteJSON(w, 403, `{"error":{"message":"link expired","code":"H-10002002"}}`)
	}))
	t.Cleanup(srv.Close)
	c, _ := newClient(t, srv.URL, nil)
	_, err := c.Download(context.Background(), srv.URL+"/media/x.png", t.TempDir(), "0")
	var se *apiclient.Error
	if !errors.As(err, &se) || se.HTTPStatus != 403 {
		t.Fatalf("err = %v, want the 403", err)
	}
	if errors.Is(err, apiclient.ErrUnauthorized) {
		t.Errorf("a media link's 403 matches ErrUnauthorized: %v", err)
	}
	if _, err := c.Status(context.Background(), "x"); !errors.Is(err, apiclient.ErrUnauthorized) {
		t.Errorf("the API's 403 does not match ErrUnauthorized: %v", err)
	}
}
