package replicate

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/simulator/simkit"
	"github.com/genform/genform/internal/simulator/simkit/simtest"
)

// do sends a request to the simulator with its key and header, given as
// name, value pairs.
func do(t *testing.T, srv *httptest.Server, method, url, body string, header ...string) (int, http.Header, map[string]any) {
	t.Helper()
	return simtest.Do(t, srv, method, url, body, append([]string{"Authorization", "Bearer k"}, header...)...)
}

func TestPredictionsAPI(t *testing.T) {
	c := simtest.NewClock(simtest.Epoch)
	_, srv := simtest.Start(t, New, simkit.Options{Token: "k", Latency: 10 * time.Second, Now: c.Now})

	code, _, p := do(t, srv, "POST", "/v1/models/black-forest-labs/flux-schnell/predictions", `{"input":{"prompt":"a","num_outputs":2}}`, "Cancel-After", "1m")
	if code != 201 || p["status"] != "starting" || p["model"] != "black-forest-labs/flux-schnell" || p["deadline"] == nil {
		t.Fatalf("create: %d %v", code, p)
	}
	get := p["urls"].(map[string]any)["get"].(string)
	c.Advance(5 * time.Second)
	if _, _, p := do(t, srv, "GET", get, ""); p["status"] != "processing" || p["started_at"] == nil {
		t.Errorf("running: %v", p)
	}
	c.Advance(6 * time.Second)
	_, _, p = do(t, srv, "GET", get, "")
	out, _ := p["output"].([]any)
	metrics, _ := p["metrics"].(map[string]any)
	if p["status"] != "succeeded" || len(out) != 2 || metrics["predict_time"] == nil {
		t.Errorf("done: %v", p)
	}
	c.Advance(time.Hour)
	if _, _, p := do(t, srv, "GET", get, ""); p["output"] != nil || p["data_removed"] != true {
		t.Errorf("an hour on: %v, want its data removed", p)
	}

	for _, tt := range []struct {
		body string
		code int
	}{
		{`{"version":"nothex","input":{}}`, 422},
		{`{"version":"a/b:` + strings.Repeat("0", 64) + `"}`, 422},
		{`not json`, 400},
	} {
		if code, _, p := do(t, srv, "POST", "/v1/predictions", tt.body); code != tt.code || p["title"] == nil || p["status"] != float64(tt.code) {
			t.Errorf("%s: %d %v, want a %d problem", tt.body, code, p, tt.code)
		}
	}
	if code, _, _ := do(t, srv, "POST", "/v1/predictions", `{"version":"a/b","input":{}}`, "Cancel-After", "1s"); code != 400 {
		t.Errorf("a Cancel-After under 5s: %d", code)
	}
	if code, _, p := do(t, srv, "GET", "/v1/account", ""); code != 200 || p["username"] == nil {
		t.Errorf("account: %d %v", code, p)
	}
}

func TestListPagesNewestFirst(t *testing.T) {
	c := simtest.NewClock(simtest.Epoch)
	_, srv := simtest.Start(t, New, simkit.Options{Token: "k", Now: c.Now, RPM: -1})
	for i := range pageSize + 5 {
		c.Advance(time.Second)
		do(t, srv, "POST", "/v1/predictions", fmt.Sprintf(`{"version":"a/b","input":{"i":%d}}`, i))
	}
	_, _, page := do(t, srv, "GET", "/v1/predictions", "")
	results := page["results"].([]any)
	if len(results) != pageSize || results[0].(map[string]any)["input"].(map[string]any)["i"] != float64(pageSize+4) {
		t.Fatalf("first page: %d results, first %v", len(results), results[0])
	}
	_, _, next := do(t, srv, "GET", page["next"].(string), "")
	if n := len(next["results"].([]any)); n != 5 || next["next"] != nil {
		t.Errorf("second page: %d results, next %v", n, next["next"])
	}
	after := c.Now().Add(-2 * time.Second).Format(time.RFC3339Nano)
	_, _, f := do(t, srv, "GET", "/v1/predictions?created_after="+after, "")
	if n := len(f["results"].([]any)); n != 3 {
		t.Errorf("created_after kept %d predictions, want 3", n)
	}
}

func TestCancelAndAbort(t *testing.T) {
	c := simtest.NewClock(simtest.Epoch)
	_, srv := simtest.Start(t, New, simkit.Options{Token: "k", Now: c.Now, Latency: time.Minute, MaxConcurrent: 1})
	_, _, first := do(t, srv, "POST", "/v1/predictions", `{"version":"a/b","input":{"prompt":"1"}}`)
	_, _, second := do(t, srv, "POST", "/v1/predictions", `{"version":"a/b","input":{"prompt":"2"}}`, "Cancel-After", "30s")
	c.Advance(10 * time.Second)
	_, _, p := do(t, srv, "POST", first["urls"].(map[string]any)["cancel"].(string), "")
	if p["status"] != "canceled" {
		t.Errorf("canceled while running: %v", p)
	}
	c.Advance(30 * time.Second)
	if _, _, p := do(t, srv, "GET", second["urls"].(map[string]any)["get"].(string), ""); p["status"] != "aborted" {
		t.Errorf("deadline before it started: %v, want aborted", p)
	}
}

func TestMarkersAndFaults(t *testing.T) {
	sim, srv := simtest.Start(t, New, simkit.Options{Token: "k", Latency: time.Millisecond, LoseRate: 1})
	simtest.Lost(t, srv, "POST", "/v1/predictions", `{"version":"a/b","input":{"prompt":"x [nsfw]"}}`, "Authorization", "Bearer k")
	rep := sim.Jobs()
	if len(rep.Jobs) != 1 {
		t.Fatalf("report %+v: the job of a lost answer is made", rep)
	}
	time.Sleep(5 * time.Millisecond)
	_, _, p := do(t, srv, "GET", "/v1/predictions/"+rep.Jobs[0].ID, "")
	if p["status"] != "failed" || !strings.Contains(fmt.Sprint(p["error"]), "NSFW") {
		t.Errorf("a refused prediction: %v", p)
	}
	if code, _, _ := simtest.Do(t, srv, "GET", "/v1/account", ""); code != 401 {
		t.Errorf("no key: %d", code)
	}
}
