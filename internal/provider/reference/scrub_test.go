package reference

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/apiclient/apitest"
)

// Through the client: a service's error, the trace and the error kept
// keep "simulator" whole with the key "sim", and never show the key
// where the service echoed it.
func TestShortKeyKeepsWordsWhole(t *testing.T) {
	srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		apitest.WriteJSON(w, 500, `{"error":{"message":"internal server error (injected by the simulator's error rate); you sent `+
			strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")+`","code":"H-1"}}`)
	})
	var trace bytes.Buffer
	c, _ := newClient(t, srv.URL, func(cfg *apiclient.Config) {
		cfg.Token = "sim"
		cfg.Debug = &trace
		cfg.MaxRetries = 1
	})
	_, err := c.Status(context.Background(), "gen-1")
	if err == nil {
		t.Fatal("a 500 was not an error")
	}
	for what, s := range map[string]string{"error": err.Error(), "trace": trace.String()} {
		if strings.Contains(s, "[redacted]ulator") || !strings.Contains(s, "simulator's error rate") {
			t.Errorf("the %s cut a word: %s", what, s)
		}
		if strings.Contains(s, "you sent sim") || !strings.Contains(s, "you sent [redacted]") {
			t.Errorf("the %s does not redact the key the service echoed: %s", what, s)
		}
	}
}
