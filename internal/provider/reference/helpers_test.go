package reference

import (
	"time"

	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/apiclient/apitest"
)

// newClient returns a client of srvURL whose waits are recorded, not slept.
func newClient(t *testing.T, srvURL string, mod func(*apiclient.Config)) (*Client, *apitest.Waits) {
	t.Helper()
	w := &apitest.Waits{}
	cfg := apiclient.Config{BaseURL: srvURL, Token: apitest.Token, Sleep: w.Sleep}
	if mod != nil {
		mod(&cfg)
	}
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return NewClient(c), w
}

func ptr[T any](v T) *T { return &v }

var cmpSeen = cmp.Options{
	cmp.Transformer("body", func(b []byte) string { return string(b) }),
	cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".At" }, cmp.Ignore()),
}

// maxRetryAfter is the longest wait a Retry-After holds a request for.
const maxRetryAfter = 5 * time.Minute

// maxAnswerBytes is the largest answer of the API read.
const maxAnswerBytes = 4 << 20

// newRefClient is the reference client over an HTTP client made of cfg.
func newRefClient(cfg apiclient.Config) (*Client, error) {
	c, err := apiclient.New(cfg)
	if err != nil {
		return nil, err
	}
	return NewClient(c), nil
}
