package apiclient

import (
	"testing"

	"github.com/genform/genform/internal/apiclient/apitest"
)

// newClient returns a client of srvURL whose waits are recorded, not slept.
func newClient(t *testing.T, srvURL string, mod func(*Config)) (*Client, *apitest.Waits) {
	t.Helper()
	w := &apitest.Waits{}
	cfg := Config{BaseURL: srvURL, Token: apitest.Token, Sleep: w.Sleep}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c, w
}
