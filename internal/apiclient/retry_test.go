package apiclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/genform/genform/internal/apiclient/apitest"
)

// TestOnRetryReportsDownloads: a download cut short is retried, and the
// retry reported with the URL (without its query) and what went wrong.
func TestOnRetryReportsDownloads(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		if n.Add(1) == 1 {
			w.Header().Set("Content-Length", "100")
			w.Write([]byte("short"))
			return
		}
		w.Write([]byte(apitest.PNGMagic + "the whole file"))
	}))
	t.Cleanup(srv.Close)
	var rs apitest.Retries[RetryInfo]
	c, _ := newClient(t, srv.URL, func(cfg *Config) { cfg.OnRetry = rs.Record })
	dir := t.TempDir()
	if _, err := c.Download(context.Background(), srv.URL+"/media/0.png?sig=s3cret", dir, "0"); err != nil {
		t.Fatalf("Download: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "0.png")); string(b) != apitest.PNGMagic+"the whole file" {
		t.Errorf("downloaded %q", b)
	}
	got := rs.All()
	if len(got) != 1 || got[0].Op != "GET "+srv.URL+"/media/0.png?…" || got[0].HTTPStatus != 0 || got[0].Attempt != 2 {
		t.Fatalf("retries reported = %+v, want one of the download, attempt 2", got)
	}
	if r := got[0].Reason(); !strings.Contains(r, "after 5 bytes") || strings.Contains(r, "s3cret") {
		t.Errorf("reason = %q, want where the body broke off and no query", r)
	}
}
