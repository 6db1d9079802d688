// A hostile or broken service names, as a generation's media URL, an
// address on the machine's link: the cloud metadata service at
// 169.254.169.254, which hands the machine's credentials to whoever asks.
// apply refuses it without connecting, records the paid job so that no
// rerun pays again, and says what happened.

package e2e

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestLinkLocalMediaNeverFetched runs apply against a service whose
// media URL is on the cloud metadata address, directly or through a
// redirect. Every request genform makes to a host off the loopback goes
// through a recording proxy (HTTP_PROXY), which would answer an image:
// a fetch of the address would succeed there, and be seen, without this
// machine ever connecting to it.
func TestLinkLocalMediaNeverFetched(t *testing.T) {
	parallelSlow(t, "runs genform against a fake service")
	const metadata = "http://169.254.169.254/latest/meta-data/iam/security-credentials/"
	for _, tt := range []struct {
		name    string
		setup   func(f *fakeService)
		wantErr string
	}{
		{
			name: "media URL on the metadata address",
			setup: func(f *fakeService) {
				f.detail = func(w http.ResponseWriter, r *http.Request) {
					io.WriteString(w, `{"status":"success","value":{"creation_id":"gen-1","status":"succeed","outputs":[{"id":"o0","media_url":"`+metadata+`"}]}}`)
				}
			},
			wantErr: "refusing to download " + metadata + ": 169.254.169.254 is a link-local address",
		},
		{
			name: "media redirect to the metadata address",
			setup: func(f *fakeService) {
				f.media = func(w http.ResponseWriter, r *http.Request) {
					http.Redirect(w, r, metadata, http.StatusFound)
				}
			},
			wantErr: "refusing to follow a redirect to " + metadata + ": 169.254.169.254 is a link-local address",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var proxied []string
			proxy := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				proxied = append(proxied, r.Method+" "+r.Host)
				mu.Unlock()
				w.Header().Set("Content-Type", "image/png")
				w.Write(fakePNG)
			}))
			f := newFakeService(t, tt.setup)
			ws := newWorkspace(t, map[string]string{"main.gen.hcl": hostileConfig})
			env := serviceEnv(f.url, fakeToken, "HTTP_PROXY="+proxy, "http_proxy="+proxy,
				"HTTPS_PROXY="+proxy, "https_proxy="+proxy, "NO_PROXY=", "no_proxy=")

			for run := 1; run <= 2; run++ {
				r := genformWithin(t, hostileTimeout+hostileMargin, ws.dir, env, "apply", "-auto-approve")
				if r.code != 1 {
					t.Errorf("run %d: exit %d, want 1", run, r.code)
				}
				for _, want := range []string{tt.wantErr, "genform never fetches link-local addresses (they reach the machine's cloud metadata service)"} {
					if !strings.Contains(r.stderr, want) {
						t.Errorf("run %d: stderr does not say %q", run, want)
					}
				}
				if strings.Contains(r.stderr, "retrying") {
					t.Errorf("run %d: the refusal was retried", run)
				}
				if t.Failed() {
					t.Fatalf("%s", r)
				}
				// The job is recorded as paid for: a rerun downloads
				// again, never generates again.
				checkLeftOfA(t, ws, f, "", true, true, 1)
			}
			p := genform(t, ws.dir, env, "plan")
			for _, want := range []string{"image.a will be updated in place (no new generation)", "1 to re-download"} {
				if !strings.Contains(p.stdout, want) {
					t.Errorf("the next plan does not say %q:\n%s", want, p)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(proxied) != 0 {
				t.Errorf("genform fetched off the loopback: %v", proxied)
			}
		})
	}
}
