package reference

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/genform/genform/internal/apiclient"

	"github.com/genform/genform/internal/addrs"
)

// roundTripFunc answers requests without a network.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// fuzzToken is the token of FuzzAnswers' client; answers may echo it.
const fuzzToken = "tok-fuzz-7f3a9c"

// FuzzAnswers gives every endpoint of the client an arbitrary answer, a
// status code and a body, and checks what the client promises whatever the
// service says: no panic; a success only with the value the endpoint
// needs; a create whose answer was a success but unusable is reported as
// ambiguous (the job may exist), never as a plain failure that a caller
// would retry; every other failure names the request; and the token never
// appears in an error, even when the service echoes it.
func FuzzAnswers(f *testing.F) {
	for _, s := range []struct {
		status int
		body   string
	}{
		{200, `{"status":"success","value":{"generation_id":"g1"}}`},
		{200, `{"status":"success","value":{"status":"succeed","progress":1,"outputs":[{"id":"o","media_url":"http://x/0.png"}],"url":"http://x/v.mp4","expire_time":"2026-01-01T00:00:00Z"}}`},
		{200, `{"status":"success","value":{"generation_id":42,"status":[],"progress":"1","outputs":{},"url":7}}`},
		{200, `{"status":"success","value":{"expire_time":"` + fuzzToken + `","url":"u"}}`},
		{200, `{"status":"error","error":{"message":"refused: Bearer ` + fuzzToken + `","code":"VB-100020"}}`},
		{200, `<html>hello</html>`},
		{200, ``},
		{200, `{"value":null}`},
		{303, `{"message":"created elsewhere"}`},
		{400, `{"message":"prompt is required","code":40001,"details":["prompt"]}`},
		{401, `{"error":{"message":"invalid key ` + fuzzToken + `","code":"H-10002002","details":["` + fuzzToken + `"]}}`},
		{429, `{"error":{"message":"slow down","code":"VB-100011"}}`},
		{500, `<html>` + fuzzToken + `</html>`},
		{502, `bad gateway`},
	} {
		f.Add(s.status, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 200 || status > 599 {
			status = 200 + abs(status)%400
		}
		hc, err := apiclient.New(apiclient.Config{
			BaseURL:    "http://127.0.0.1:1",
			Token:      fuzzToken,
			MaxRetries: -1,
			HTTPClient: &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				h := http.Header{"Content-Type": {"application/json"}}
				if status >= 300 && status <= 399 {
					h.Set("Location", "http://127.0.0.1:1/elsewhere")
				}
				return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(bytes.NewReader(body)), Request: r}, nil
			})},
		})
		if err != nil {
			t.Fatal(err)
		}
		c := NewClient(hc)
		ctx := context.Background()
		ok := status >= 200 && status <= 299
		check := func(op string, err error) {
			t.Helper()
			if err == nil {
				if !ok {
					t.Fatalf("%s succeeded on a %d answer", op, status)
				}
				return
			}
			if !strings.Contains(err.Error(), op) {
				t.Errorf("%s: error %q does not name the request", op, err)
			}
			if strings.Contains(err.Error(), fuzzToken) {
				t.Errorf("%s: error %q holds the token", op, err)
			}
			var se *apiclient.Error
			if !ok && (!errors.As(err, &se) || se.HTTPStatus != status) {
				t.Errorf("%s: a %d answer gave %v, not an *Error with that status", op, status, err)
			}
		}

		id, err := c.Create(ctx, addrs.Text2Image, []byte(`{"prompt":"x"}`))
		check("POST /v1/jobs/text2image", err)
		switch {
		case err == nil && id == "":
			t.Error("Create succeeded without a generation id")
		case err != nil && ok && !errors.Is(err, apiclient.ErrAmbiguousCreate):
			// Only an error the service itself put in the envelope proves
			// it did not act.
			var se *apiclient.Error
			if !errors.As(err, &se) || !se.FromBody() {
				t.Errorf("a %d answer to a create failed as %v, which does not say the job may exist", status, err)
			}
		}

		st, err := c.Status(ctx, "job1")
		check("GET /v1/jobs/job1/status", err)
		if err == nil && !(st.Progress >= 0 && st.Progress <= 1) {
			t.Errorf("progress %v outside [0, 1]", st.Progress)
		}

		cr, err := c.Detail(ctx, "job1")
		check("GET /v1/creation/job1", err)
		if err == nil && cr == nil {
			t.Error("Detail succeeded without a creation")
		}

		w, err := c.WatermarkFreeURL(ctx, "job1")
		check("POST /v1/creation/job1/watermark-free-url", err)
		if err == nil && w.URL == "" {
			t.Error("WatermarkFreeURL succeeded without a URL")
		}
	})
}

func abs(n int) int {
	if n < 0 {
		if n == -n { // the most negative int
			return 0
		}
		return -n
	}
	return n
}
