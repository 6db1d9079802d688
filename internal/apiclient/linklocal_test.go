package apiclient

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/genform/genform/internal/apiclient/apitest"
)

// hostsProxy is an HTTP proxy on the loopback that every request of a
// client goes through, whatever its host: it records the host of each,
// redirects /redirect to the metadata service's address, and answers
// anything else with an image, so that a fetch of a link-local address
// would succeed, and be seen, without the machine ever connecting to one.
type hostsProxy struct {
	*httptest.Server
	mu    sync.Mutex
	hosts []string
}

func newHostsProxy(t *testing.T) *hostsProxy {
	p := &hostsProxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.hosts = append(p.hosts, r.Host)
		p.mu.Unlock()
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/iam/security-credentials/", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte(apitest.PNGMagic + "media"))
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *hostsProxy) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.hosts...)
}

// proxied is a client of base whose every request goes through p.
func proxied(t *testing.T, base string, p *hostsProxy) *Client {
	t.Helper()
	pu, err := url.Parse(p.URL)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := newClient(t, base, func(cfg *Config) {
		cfg.HTTPClient = &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
		cfg.AllowRemoteHTTP = true
	})
	return c
}

// A media URL on a link-local address (the cloud metadata service's
// 169.254.169.254, any of 169.254.0.0/16 or fe80::/10, however written)
// is refused before anything is sent: no retry, no file, and a message
// that says why.
func TestDownloadRefusesLinkLocalAddresses(t *testing.T) {
	p := newHostsProxy(t)
	c := proxied(t, "http://127.0.0.1:1", p)
	for _, u := range []string{
		"http://169.254.169.254/latest/meta-data/iam/security-credentials/",
		"https://169.254.0.1/a.png",
		"http://169.254.169.254.:80/a.png",
		"http://[fe80::1]/a.png",
		"http://[fe80::a9fe:a9fe%25eth0]:8080/a.png",
		"http://[::ffff:169.254.169.254]/a.png",
	} {
		t.Run(u, func(t *testing.T) {
			dir := t.TempDir()
			_, err := c.Download(context.Background(), u, dir, "0")
			if err == nil {
				t.Fatal("Download fetched a link-local address")
			}
			for _, want := range []string{"refusing to download", "is a link-local address", "genform never fetches link-local addresses (they reach the machine's cloud metadata service)"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v, want it to say %q", err, want)
				}
			}
			if !errors.Is(err, ErrLinkLocal) || IsRetryable(err) {
				t.Errorf("err = %v: want ErrLinkLocal, not retryable", err)
			}
			if names := dirNames(t, dir); len(names) != 0 {
				t.Errorf("directory holds %v", names)
			}
		})
	}
	if hosts := p.seen(); len(hosts) != 0 {
		t.Errorf("requests were sent to %v", hosts)
	}
	// The proxy itself answers: a public address is fetched through it.
	if _, err := c.Download(context.Background(), "http://media.example.com/0.png", t.TempDir(), "0"); err != nil {
		t.Fatalf("a public media URL: %v", err)
	}
}

// A redirect to a link-local address is refused before it is followed.
func TestDownloadRefusesRedirectToLinkLocal(t *testing.T) {
	p := newHostsProxy(t)
	c := proxied(t, "http://127.0.0.1:1", p)
	_, err := c.Download(context.Background(), "http://media.example.com/redirect", t.TempDir(), "0")
	if err == nil || !strings.Contains(err.Error(), "refusing to follow a redirect to http://169.254.169.254/latest/meta-data/iam/security-credentials/") ||
		!errors.Is(err, ErrLinkLocal) || IsRetryable(err) {
		t.Fatalf("err = %v, want the redirect refused", err)
	}
	if hosts := p.seen(); len(hosts) != 1 || hosts[0] != "media.example.com" {
		t.Errorf("requests went to %v, want the redirecting host alone", hosts)
	}
}

// A URL the provider handed out to follow a job (a status URL) is held
// to the same rule.
func TestCallRefusesLinkLocalURL(t *testing.T) {
	p := newHostsProxy(t)
	c := proxied(t, "http://127.0.0.1:1", p)
	_, err := c.Do(context.Background(), Call{Method: http.MethodGet, URL: "http://169.254.169.254/latest/meta-data/"})
	if err == nil || !errors.Is(err, ErrLinkLocal) || !strings.Contains(err.Error(), "refusing to request") {
		t.Fatalf("err = %v, want the URL refused", err)
	}
	if hosts := p.seen(); len(hosts) != 0 {
		t.Errorf("requests were sent to %v", hosts)
	}
}

// A base URL on a link-local address is the user's own choice: its host
// is fetched; another link-local host still is not.
func TestLinkLocalBaseURLIsTheUsersChoice(t *testing.T) {
	p := newHostsProxy(t)
	c := proxied(t, "http://169.254.10.20:8080", p)
	if _, err := c.Download(context.Background(), "http://169.254.10.20:8080/media/0.png", t.TempDir(), "0"); err != nil {
		t.Fatalf("the base URL's own host: %v", err)
	}
	if _, err := c.Download(context.Background(), "http://169.254.169.254/latest/meta-data/", t.TempDir(), "0"); !errors.Is(err, ErrLinkLocal) {
		t.Errorf("another link-local host: %v, want it refused", err)
	}
	if hosts := p.seen(); len(hosts) != 1 || hosts[0] != "169.254.10.20:8080" {
		t.Errorf("requests went to %v, want the base URL's host alone", hosts)
	}
}

// The client's own transport refuses to connect to a link-local address
// once a name is resolved (a host name such as metadata.google.internal
// resolves to 169.254.169.254), before anything is sent.
func TestDialRefusesLinkLocal(t *testing.T) {
	c, _ := newClient(t, "http://127.0.0.1:1", nil)
	for _, addr := range []string{"169.254.169.254:80", "[fe80::1]:80"} {
		conn, err := c.dialContext(context.Background(), "tcp", addr)
		if err == nil {
			conn.Close()
			t.Fatalf("%s: connected", addr)
		}
		if !errors.Is(err, ErrLinkLocal) {
			t.Errorf("%s: %v, want ErrLinkLocal", addr, err)
		}
	}
	if !c.ownHost("127.0.0.1") || c.ownHost("169.254.169.254") {
		t.Error("ownHost does not tell the base URL's host")
	}
}
