package fal_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/provider/fal"
	"github.com/genform/genform/internal/provider/providertest"
	simfal "github.com/genform/genform/internal/simulator/fal"
	"github.com/genform/genform/internal/simulator/simkit"
)

// authSeen records the Authorization header of every request a handler
// serves, by path.
type authSeen struct {
	next http.Handler
	mu   sync.Mutex
	seen map[string][]string
}

func (a *authSeen) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.seen[r.URL.Path] = append(a.seen[r.URL.Path], r.Header.Get("Authorization"))
	a.mu.Unlock()
	a.next.ServeHTTP(w, r)
}

// fal's files are public URLs on its CDN that take no key: a download
// through the adapter carries no Authorization header at all, even from
// the API's own origin (the simulator serves both), while every request
// of the queue API carries fal's documented "Key <key>".
func TestDownloadsCarryNoKey(t *testing.T) {
	sim, err := simfal.New(simkit.Options{Token: key, Latency: 60 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rec := &authSeen{next: sim, seen: map[string][]string{}}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	p, err := fal.New(provider.Config{BaseURL: srv.URL, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	h := providertest.New(t, p, key)
	_, res := h.Done(providertest.Request(addrs.Image, "fal-ai/flux/schnell", map[string]any{"prompt": "a lighthouse", "num_images": 2}), "COMPLETED")
	dir := t.TempDir()
	for i, o := range res.Outputs {
		if _, err := p.Download(context.Background(), o.URL, dir, string(rune('0'+i))); h.Keep(err) != nil {
			t.Fatal(err)
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	files, api := 0, 0
	for path, auths := range rec.seen {
		for _, a := range auths {
			switch {
			case strings.HasPrefix(path, "/files/"):
				files++
				if a != "" {
					t.Errorf("GET %s carried Authorization %q, want none: fal's files are public", path, a)
				}
			default:
				api++
				if a != "Key "+key {
					t.Errorf("%s carried Authorization %q, want fal's Key scheme", path, a)
				}
			}
		}
	}
	if files != len(res.Outputs) || files == 0 || api == 0 {
		t.Errorf("%d file and %d API requests seen, want %d files and the API's", files, api, len(res.Outputs))
	}
}
