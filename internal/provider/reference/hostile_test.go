package reference

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/apiclient/apitest"

	"github.com/genform/genform/internal/addrs"
)

// TestServiceStringsArePrintable: messages, codes, statuses and the start
// of an error page come out of the client with their escape sequences
// escaped, whichever way they came.
func TestServiceStringsArePrintable(t *testing.T) {
	const evil = "\x1b]0;owned\a\x1b[2J\nApply complete! Resources: 9 added."
	quoted, _ := json.Marshal(evil)
	srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/status"):
			apitest.WriteJSON(w, 200, `{"status":"success","value":{"status":`+string(quoted)+`,"progress":0.5}}`)
		case r.URL.Path == "/v1/jobs/text2image":
			apitest.WriteJSON(w, 400, `{"error":{"message":`+string(quoted)+`,"code":`+string(quoted)+`}}`)
		default:
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			w.Write([]byte("<h1>" + evil + "</h1>"))
		}
	})
	c, _ := newClient(t, srv.URL, func(cfg *apiclient.Config) { cfg.MaxRetries = -1 })
	ctx := context.Background()

	st, err := c.Status(ctx, "gen-1")
	if err != nil {
		t.Fatal(err)
	}
	apitest.NoControl(t, "the status", st.Raw)
	if st.Known || !strings.Contains(st.Raw, `\x1b]0;owned`) {
		t.Errorf("status = %+v, want an unknown status shown escaped", st)
	}
	_, err = c.Create(ctx, addrs.Text2Image, []byte(`{"prompt":"x"}`))
	if err == nil {
		t.Fatal("the 400 was not an error")
	}
	apitest.NoControl(t, "the error of a 400", err.Error())
	if !strings.Contains(err.Error(), `\nApply complete!`) {
		t.Errorf("the message is not shown escaped: %v", err)
	}
	_, err = c.Detail(ctx, "gen-1")
	if err == nil {
		t.Fatal("the 502 was not an error")
	}
	apitest.NoControl(t, "the error of an HTML page", err.Error())
}

// TestIDsAreChecked: an id longer than 256 bytes or not printable is
// refused wherever the service hands one out, and a detail of another
// creation than the one asked for is refused.
func TestIDsAreChecked(t *testing.T) {
	long := strings.Repeat("a", 257)
	tests := []struct {
		name    string
		create  string // the create answer's value
		detail  string // the detail answer's value
		wantErr string
	}{
		{name: "long generation id", create: `{"generation_id":"` + long + `"}`, wantErr: "257 bytes long"},
		{name: "generation id with an escape", create: `{"generation_id":"gen\u001b[2J"}`, wantErr: "control character"},
		{name: "generation id with a space", create: `{"generation_id":"gen 1"}`, wantErr: "a space"},
		{name: "detail of another creation", detail: `{"creation_id":"gen-2","status":"succeed"}`, wantErr: "the detail of creation gen-2, not of gen-1"},
		{name: "long creation id", detail: `{"creation_id":"` + long + `","status":"succeed"}`, wantErr: "257 bytes long"},
		{name: "output id with a bell", detail: `{"creation_id":"gen-1","outputs":[{"id":"o\u0007","media_url":"http://x/0.png"}]}`, wantErr: `"outputs[0].id"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if r.Method == http.MethodPost {
					apitest.WriteJSON(w, 200, `{"status":"success","value":`+tt.create+`}`)
					return
				}
				apitest.WriteJSON(w, 200, `{"status":"success","value":`+tt.detail+`}`)
			})
			c, _ := newClient(t, srv.URL, nil)
			var err error
			if tt.create != "" {
				_, err = c.Create(context.Background(), addrs.Text2Image, []byte(`{"prompt":"x"}`))
				if !errors.Is(err, apiclient.ErrAmbiguousCreate) {
					t.Errorf("a create answered with an id that cannot be used is not reported as possibly paid for: %v", err)
				}
			} else {
				_, err = c.Detail(context.Background(), "gen-1")
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one saying %q", err, tt.wantErr)
			}
			apitest.NoControl(t, "the error", err.Error())
			if strings.Contains(err.Error(), long) {
				t.Errorf("the error repeats the long id")
			}
		})
	}
	c, _ := newClient(t, "http://127.0.0.1:1", nil)
	if _, err := c.Status(context.Background(), long); err == nil || !strings.Contains(err.Error(), "257 bytes") {
		t.Errorf("a long id was asked about: %v", err)
	}
}

// TestTokenScrubbedBeforeCut: a 401 page that echoes the request's
// headers, long enough that the 200-character cut falls inside the token,
// shows no part of it.
func TestTokenScrubbedBeforeCut(t *testing.T) {
	for cut := 1; cut < len(apitest.Token); cut += 3 {
		page := strings.Repeat("x", 200-len("Authorization: Bearer ")-cut) + " Authorization: Bearer " + apitest.Token + " more"
		page = "<html>" + page[6:] // keep the token's place
		srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(401)
			w.Write([]byte(page))
		})
		c, _ := newClient(t, srv.URL, nil)
		_, err := c.Status(context.Background(), "gen-1")
		if err == nil {
			t.Fatal("a 401 was not an error")
		}
		if prefix := apitest.Token[:4]; strings.Contains(err.Error(), prefix) {
			t.Fatalf("cut %d: the error shows %q of the token: %v", cut, prefix, err)
		}
	}
}

// TestTokenScrubbedFromEveryForm: a service that echoes the token raw,
// JSON-escaped, HTML-escaped or URL-encoded, in an error or in a success
// answer, gets none of them into an error or the creation detail.
func TestTokenScrubbedFromEveryForm(t *testing.T) {
	const tok = `tok/SECRET<4242>&"x\y+z`
	js, _ := json.Marshal(tok)
	jsonForm := string(js[1 : len(js)-1])
	forms := map[string]string{
		"raw in a URL": "http://cdn/0.png?t=" + url.QueryEscape(tok),
		"query":        url.QueryEscape(tok),
		"path":         url.PathEscape(tok),
		"lower hex":    regexp.MustCompile(`%[0-9A-F]{2}`).ReplaceAllStringFunc(url.QueryEscape(tok), strings.ToLower),
		"unicode":      `\u0074\u006f\u006b/SECRET\u003c4242\u003e\u0026\"x\\y+z`,
	}
	var detail strings.Builder
	detail.WriteString(`{"creation_id":"gen-1","prompt":"` + jsonForm + `","username":"` + strings.ReplaceAll(jsonForm, "/", `\/`) + `","outputs":[`)
	i := 0
	for _, f := range forms {
		if i > 0 {
			detail.WriteString(",")
		}
		fmt.Fprintf(&detail, `{"id":"o%d","media_url":"http://cdn/%d.png?sig=%s"}`, i, i, f)
		i++
	}
	detail.WriteString("]}")
	srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if r.Method == http.MethodPost {
			apitest.WriteJSON(w, 400, `{"message":"bad token `+jsonForm+`","details":[{"got":"`+jsonForm+`"}]}`)
			return
		}
		apitest.WriteJSON(w, 200, `{"status":"success","value":`+detail.String()+`}`)
	})
	c, _ := newClient(t, srv.URL, func(cfg *apiclient.Config) { cfg.Token = tok })
	det, err := c.Detail(context.Background(), "gen-1")
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]string{"json": jsonForm, "slash": strings.ReplaceAll(jsonForm, "/", `\/`), "raw": tok}
	for k, v := range forms {
		all[k] = v
	}
	for name, f := range all {
		if strings.Contains(string(det.Raw), f) {
			t.Errorf("the detail kept for the state holds the token (%s): %s", name, det.Raw)
		}
	}
	if strings.Contains(det.Prompt, "SECRET") || strings.Contains(det.Username, "SECRET") {
		t.Errorf("decoded fields hold the token: %q %q", det.Prompt, det.Username)
	}
	_, err = c.Create(context.Background(), addrs.Text2Image, []byte(`{"prompt":"x"}`))
	var se *apiclient.Error
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want the service's error", err)
	}
	if strings.Contains(err.Error(), "SECRET") || strings.Contains(string(se.Details), "SECRET") {
		t.Errorf("the error holds the token: %v (details %s)", err, se.Details)
	}
}

// TestCallerDeadlineBoundsEverything: a service that accepts requests and
// never answers, or answers 503 with a long Retry-After, gives up when the
// caller's deadline comes, not after the attempts and waits of the retry
// schedule; the last failure is what the error says.
func TestCallerDeadlineBoundsEverything(t *testing.T) {
	hang := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) { <-r.Context().Done() })
	c, err := newRefClient(apiclient.Config{BaseURL: hang.URL, Token: apitest.Token})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := c.Status(ctx, "gen-1"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the deadline", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("a hanging status took %s against a 300ms deadline", took)
	}

	busy := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Retry-After", "120")
		apitest.WriteJSON(w, 503, `{"message":"busy"}`)
	})
	c, err = newRefClient(apiclient.Config{BaseURL: busy.URL, Token: apitest.Token})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start = time.Now()
	_, err = c.Status(ctx, "gen-1")
	if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "after the deadline") {
		t.Errorf("err = %v, want the 503 and that the next attempt would come after the deadline", err)
	}
	if took := time.Since(start); took > 2*time.Second || busy.Count() != 1 {
		t.Errorf("%d requests in %s, want 1 and no wait", busy.Count(), took)
	}
}

// TestShortTokenKeepsAnswersWhole: a token so short that it is part of
// what the service always sends ("t" is in "generation_id", "status" and
// every media URL) is not looked for in its JSON answers: the job's id is
// read, the create is not taken for one whose answer was lost, and the
// media URL stays one.
func TestShortTokenKeepsAnswersWhole(t *testing.T) {
	srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if r.Method == http.MethodPost {
			apitest.WriteJSON(w, 200, `{"status":"success","value":{"generation_id":"gen-42","note":"token t echoed"}}`)
			return
		}
		apitest.WriteJSON(w, 200, `{"status":"success","value":{"creation_id":"gen-42","prompt":"a tall tower","outputs":[{"id":"o0","media_url":"http://cdn.test/0.png"}]}}`)
	})
	c, _ := newClient(t, srv.URL, func(cfg *apiclient.Config) { cfg.Token = "t" })
	id, err := c.Create(context.Background(), addrs.Text2Image, []byte(`{"prompt":"x"}`))
	if err != nil || id != "gen-42" {
		t.Fatalf("Create = %q, %v; want gen-42", id, err)
	}
	det, err := c.Detail(context.Background(), "gen-42")
	if err != nil {
		t.Fatal(err)
	}
	if len(det.Outputs) != 1 || det.Outputs[0].MediaURL != "http://cdn.test/0.png" || det.Prompt != "a tall tower" {
		t.Errorf("detail: %+v, prompt %q; want the answer as sent", det.Outputs, det.Prompt)
	}
}
