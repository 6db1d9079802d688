package apply

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/provider"
)

// pngOf is a file whose first bytes are a PNG's, as inline outputs are
// checked to be images.
func pngOf(s string) []byte { return append([]byte("\x89PNG\r\n\x1a\n"), s...) }

// editedResults counts the results asked of the provider it wraps, and
// has edit change each, numbered from 1, before the engine sees it.
type editedResults struct {
	provider.Provider
	edit    func(n int, res *provider.Result)
	mu      sync.Mutex
	results int
}

func (p *editedResults) Result(ctx context.Context, j provider.Job) (*provider.Result, error) {
	res, err := p.Provider.Result(ctx, j)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.results++
	p.edit(p.results, res)
	return res, nil
}

// inline answers every result with its files as bytes and no link, as
// OpenAI's images API does.
func inline(_ int, res *provider.Result) {
	for i := range res.Outputs {
		o := &res.Outputs[i]
		o.Data, o.MediaType, o.URL = pngOf(o.URL), "image/png", ""
	}
}

const twoInline = `
image "a" {
  prompt       = "inline"
  image_number = 2
}
`

// An output answered as bytes is written from them, recorded with no
// link, and written again from a result fetched anew when the file is
// gone.
func TestApplyWritesInlineOutputs(t *testing.T) {
	w := newApplyDir(t, &fakeService{})
	var ip *editedResults
	w.wrap = func(p provider.Provider) provider.Provider {
		if ip == nil {
			ip = &editedResults{Provider: p, edit: inline}
		}
		return ip
	}
	res := w.converge(twoInline)
	if len(res.Generated) != 1 {
		t.Fatalf("generated %v", res.Generated)
	}
	rec := w.snapshot().Resources[a("image.a")]
	if len(rec.Outputs) != 2 {
		t.Fatalf("%d outputs recorded, want 2", len(rec.Outputs))
	}
	for _, o := range rec.Outputs {
		if o.MediaURL != "" || !strings.HasSuffix(o.Path, ".png") || o.SHA256 == "" {
			t.Errorf("output %d recorded as %+v; want no link, a .png path and its hash", o.Index, o)
		}
		if got := w.read(o.Path); !strings.HasPrefix(got, "\x89PNG") {
			t.Errorf("%s holds %q, not the bytes answered", o.Path, got)
		}
	}

	// The file is gone: the next apply takes the bytes from the result
	// fetched again, generating nothing.
	if err := os.Remove(filepath.Join(w.dir, filepath.FromSlash(rec.Outputs[1].Path))); err != nil {
		t.Fatal(err)
	}
	before := ip.results
	res = w.converge(twoInline)
	if len(res.Generated) != 0 || len(res.Updated) != 1 {
		t.Fatalf("generated %v, downloaded %v; want the one file written again", res.Generated, res.Updated)
	}
	if ip.results != before+1 {
		t.Errorf("%d results fetched to write the file again, want 1", ip.results-before)
	}
	if !w.exists(rec.Outputs[1].Path) {
		t.Errorf("%s was not written again", rec.Outputs[1].Path)
	}
}

// expiringProvider hands out links that have expired (the media server
// answers 410) until the job is fetched again after a download.
type expiringProvider struct {
	editedResults
	client  *apiclient.Client
	expired string // the media server's URL that answers 410
	fresh   string // the prefix of links that lead to the file
}

func newExpiringProvider(p provider.Provider, client *apiclient.Client, expired, fresh string) *expiringProvider {
	ep := &expiringProvider{editedResults: editedResults{Provider: p}, client: client, expired: expired, fresh: fresh}
	ep.edit = ep.relink
	return ep
}

// relink gives the outputs of fetch n their links: the first fetch's
// have expired by the download.
func (p *expiringProvider) relink(n int, res *provider.Result) {
	for i := range res.Outputs {
		if n == 1 {
			res.Outputs[i].URL = p.expired
		} else {
			res.Outputs[i].URL = p.fresh + res.Outputs[i].URL
		}
	}
}

func (p *expiringProvider) Download(ctx context.Context, url, dir, base string) (*apiclient.Downloaded, error) {
	if url == p.expired {
		return p.client.Download(ctx, url, dir, base)
	}
	return p.Provider.Download(ctx, strings.TrimPrefix(url, p.fresh), dir, base)
}

// A link that expired before its download sends for the job again, once,
// and the file comes from the fresh link; nothing is generated again.
func TestApplyFetchesAnExpiredLinkAgain(t *testing.T) {
	media := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "this link has expired", http.StatusGone)
	}))
	defer media.Close()
	client, err := apiclient.New(apiclient.Config{BaseURL: media.URL, AllowRemoteHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	svc := &fakeService{}
	w := newApplyDir(t, svc)
	var ep *expiringProvider
	w.wrap = func(p provider.Provider) provider.Provider {
		ep = newExpiringProvider(p, client, media.URL+"/media/0.png", "fresh:")
		return ep
	}
	res := w.converge(twoInline)
	if len(res.Generated) != 1 || len(svc.bodies) != 1 {
		t.Fatalf("generated %v with %d creates; want one", res.Generated, len(svc.bodies))
	}
	if ep.results != 2 {
		t.Errorf("the job's result was fetched %d times, want 2 (once more for fresh links)", ep.results)
	}
	rec := w.snapshot().Resources[a("image.a")]
	for _, o := range rec.Outputs {
		if !strings.HasPrefix(o.MediaURL, "fresh:") || o.SHA256 == "" {
			t.Errorf("output %d recorded as %+v; want the fresh link and its hash", o.Index, o)
		}
	}
}

// cappedProvider refuses every create after the first few with the
// provider's word that the account reached its daily cap.
type cappedProvider struct {
	provider.Provider
	mu    sync.Mutex
	left  int
	tried int
}

func (p *cappedProvider) Submit(ctx context.Context, r provider.Request) (provider.Job, error) {
	p.mu.Lock()
	p.tried++
	capped := p.left == 0
	if !capped {
		p.left--
	}
	p.mu.Unlock()
	if capped {
		return provider.Job{}, fmt.Errorf("%w: you have reached your daily task limit", provider.ErrCapReached)
	}
	return p.Provider.Submit(ctx, r)
}

// A cap of the account reached stops the apply at once, in the
// provider's words: nothing more is sent, and what was made is kept.
func TestApplyStopsAtACap(t *testing.T) {
	svc := &fakeService{}
	w := newApplyDir(t, svc)
	w.parallelism = 1
	cp := &cappedProvider{left: 1}
	w.wrap = func(p provider.Provider) provider.Provider { cp.Provider = p; return cp }
	var src strings.Builder
	for i := range 5 {
		fmt.Fprintf(&src, "image \"i%d\" {\n  prompt = \"capped %d\"\n}\n", i, i)
	}
	res := w.apply(context.Background(), w.plan(src.String()))
	if !errors.Is(res.Refused, provider.ErrCapReached) || !strings.Contains(res.Refused.Error(), "daily task limit") {
		t.Fatalf("the apply was not stopped by the cap: refused %v", res.Refused)
	}
	if len(res.Generated) != 1 || cp.tried != 2 {
		t.Errorf("generated %v with %d creates tried; want one made and the apply stopped at the first refusal (failed %v, running %v)", res.Generated, cp.tried, res.Failed, res.Running)
	}
	if len(res.Failed) != 0 || len(res.PossiblyPaid) != 0 {
		t.Errorf("failed %v, possibly paid %v; a cap refusal made nothing and fails nothing", failedAddrs(res.Failed), res.PossiblyPaid)
	}
}
