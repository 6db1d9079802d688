// A user's service answers badly: malformed JSON, wrong types, huge
// bodies, unknown statuses, media URLs or redirects to other schemes.
// apply must fail with an error that says what was wrong, keep a state
// that says what the next run does, and neither write outside the working
// directory nor read from it.

package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/genform/genform/internal/e2e/harness"
)

// fakeService answers like the service, except where a test overrides an
// endpoint with a bad answer. It counts the create requests it receives.
type fakeService struct {
	url     string
	creates atomic.Int32
	create  http.HandlerFunc
	status  http.HandlerFunc
	detail  http.HandlerFunc
	media   http.HandlerFunc
}

// fakePNG is what the fake service serves as an image.
var fakePNG = []byte("\x89PNG\r\n\x1a\n fake image bytes")

// newFakeService starts a fake service whose handlers setup may replace
// before it starts.
func newFakeService(t *testing.T, setup func(f *fakeService)) *fakeService {
	f := &fakeService{}
	f.create = func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"status":"success","value":{"generation_id":"gen-1"}}`)
	}
	f.status = func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"status":"success","value":{"status":"succeed","progress":1}}`)
	}
	f.detail = func(w http.ResponseWriter, r *http.Request) {
		// The detail is of the creation asked for, as the service's is.
		id := strings.TrimPrefix(r.URL.Path, "/v1/creation/")
		fmt.Fprintf(w, `{"status":"success","value":{"creation_id":%q,"status":"succeed","outputs":[{"id":"o0","media_url":%q}]}}`, id, "http://"+r.Host+"/media/0.png")
	}
	f.media = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(fakePNG)
	}
	setup(f)
	srv := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch p := r.URL.Path; {
		case p == "/v1/jobs/text2image":
			f.creates.Add(1)
			f.create(w, r)
		case strings.HasPrefix(p, "/v1/jobs/") && strings.HasSuffix(p, "/status"):
			f.status(w, r)
		case strings.HasPrefix(p, "/v1/creation/"):
			f.detail(w, r)
		case strings.HasPrefix(p, "/media/"):
			f.media(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	f.url = srv
	return f
}

// httptestServer serves h on a loopback port for the test's lifetime.
func httptestServer(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestMalformedServiceAnswers runs apply against a service that answers
// one endpoint badly: malformed JSON, wrong types, huge bodies, unknown
// status values, and media URLs or redirects to other schemes. Each apply
// fails with an error that says what was wrong; the state stays consistent
// and says what the next run does (resume the job, warn that it may have
// been paid for, or download again); and nothing is written outside the
// working directory or read from it.
func TestMalformedServiceAnswers(t *testing.T) {
	parallelSlow(t, "runs genform against a fake service")
	const config = `service {
  timeout       = "3s"
  poll_interval = "1s"
}
` + anApple
	tests := []struct {
		name  string
		setup func(f *fakeService, secret string)
		// wantErr are in apply's stderr; wantPlan in the next plan's stdout.
		wantErr  []string
		wantPlan []string
		// intent is the generation id an intent keeps ("" for one with
		// none); noIntent means none is kept.
		intent   string
		noIntent bool
		// recorded: image.a is in the state after the apply.
		recorded bool
		creates  int32
	}{
		{
			name: "create answer is not JSON",
			setup: func(f *fakeService, _ string) {
				f.create = func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<html>gateway says hello</html>") }
			},
			wantErr:  []string{"image.a", "not a JSON object", "the service may have made, and charged for, the job"},
			wantPlan: []string{"may already have been paid for"},
			intent:   "", creates: 1,
		},
		{
			name: "generation id of the wrong type",
			setup: func(f *fakeService, _ string) {
				f.create = func(w http.ResponseWriter, r *http.Request) {
					io.WriteString(w, `{"status":"success","value":{"generation_id":42}}`)
				}
			},
			wantErr:  []string{`"generation_id" is number, want string`, "the service may have made, and charged for, the job"},
			wantPlan: []string{"may already have been paid for"},
			intent:   "", creates: 1,
		},
		{
			name: "create answer without a generation id",
			setup: func(f *fakeService, _ string) {
				f.create = func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"status":"success","value":{}}`) }
			},
			wantErr:  []string{`no "generation_id"`},
			wantPlan: []string{"may already have been paid for"},
			intent:   "", creates: 1,
		},
		{
			name: "status of the wrong type",
			setup: func(f *fakeService, _ string) {
				f.status = func(w http.ResponseWriter, r *http.Request) {
					io.WriteString(w, `{"status":"success","value":{"status":["succeed"],"progress":"half"}}`)
				}
			},
			wantErr:  []string{"polling image.a (job gen-1)", `"status" is array, want string`, "rerun apply to resume"},
			wantPlan: []string{"will be resumed"},
			intent:   "gen-1", creates: 1,
		},
		{
			name: "unknown status value",
			setup: func(f *fakeService, _ string) {
				f.status = func(w http.ResponseWriter, r *http.Request) {
					io.WriteString(w, `{"status":"success","value":{"status":"queued_elsewhere","progress":0.5}}`)
				}
			},
			wantErr:  []string{`reports unknown status "queued_elsewhere"; treating it as running`, "still queued_elsewhere after 3s", "rerun apply to resume"},
			wantPlan: []string{"will be resumed"},
			intent:   "gen-1", creates: 1,
		},
		{
			name: "huge status answer",
			setup: func(f *fakeService, _ string) {
				f.status = func(w http.ResponseWriter, r *http.Request) {
					io.WriteString(w, `{"status":"success","value":{"status":"processing","pad":"`)
					w.Write(bytes.Repeat([]byte("x"), 5<<20))
					io.WriteString(w, `"}}`)
				}
			},
			wantErr:  []string{"larger than 4 MiB", "rerun apply to resume"},
			wantPlan: []string{"will be resumed"},
			intent:   "gen-1", creates: 1,
		},
		{
			name: "detail with outputs of the wrong type",
			setup: func(f *fakeService, _ string) {
				f.detail = func(w http.ResponseWriter, r *http.Request) {
					io.WriteString(w, `{"status":"success","value":{"status":"succeed","outputs":"0.png"}}`)
				}
			},
			wantErr:  []string{"fetching the detail of image.a (job gen-1)", `"outputs" is string`, "rerun apply to resume"},
			wantPlan: []string{"will be resumed"},
			intent:   "gen-1", creates: 1,
		},
		{
			name: "detail without outputs",
			setup: func(f *fakeService, _ string) {
				f.detail = func(w http.ResponseWriter, r *http.Request) {
					io.WriteString(w, `{"status":"success","value":{"status":"succeed","outputs":[]}}`)
				}
			},
			wantErr:  []string{"succeeded but listed no outputs"},
			wantPlan: []string{"will be resumed"},
			intent:   "gen-1", creates: 1,
		},
		{
			name: "media URL of the file scheme",
			setup: func(f *fakeService, secret string) {
				f.detail = func(w http.ResponseWriter, r *http.Request) {
					fmt.Fprintf(w, `{"status":"success","value":{"status":"succeed","outputs":[{"id":"o0","media_url":%q}]}}`, "file://"+filepath.ToSlash(secret))
				}
			},
			wantErr:  []string{`refusing to download a "file" URL: only http and https are followed`, "nothing is regenerated"},
			wantPlan: []string{"image.a will be updated in place (no new generation)", "1 to re-download"},
			noIntent: true, recorded: true, creates: 1,
		},
		{
			name: "media URL of another scheme",
			setup: func(f *fakeService, _ string) {
				f.detail = func(w http.ResponseWriter, r *http.Request) {
					io.WriteString(w, `{"status":"success","value":{"status":"succeed","outputs":[{"id":"o0","media_url":"ftp://127.0.0.1/0.png"}]}}`)
				}
			},
			wantErr:  []string{`refusing to download a "ftp" URL`},
			wantPlan: []string{"image.a will be updated in place (no new generation)", "1 to re-download"},
			noIntent: true, recorded: true, creates: 1,
		},
		{
			name: "media redirect to a file URL",
			setup: func(f *fakeService, secret string) {
				f.media = func(w http.ResponseWriter, r *http.Request) {
					http.Redirect(w, r, "file://"+filepath.ToSlash(secret), http.StatusFound)
				}
			},
			wantErr:  []string{`refusing to follow a redirect to a "file" URL`},
			wantPlan: []string{"image.a will be updated in place (no new generation)", "1 to re-download"},
			noIntent: true, recorded: true, creates: 1,
		},
		{
			name: "generation id with path characters",
			setup: func(f *fakeService, _ string) {
				f.create = func(w http.ResponseWriter, r *http.Request) {
					io.WriteString(w, `{"status":"success","value":{"generation_id":"../../../x"}}`)
				}
				old := f.status
				f.status = func(w http.ResponseWriter, r *http.Request) {
					if r.URL.EscapedPath() != "/v1/jobs/..%2F..%2F..%2Fx/status" {
						http.Error(w, `{"message":"unexpected path `+r.URL.EscapedPath()+`"}`, http.StatusBadRequest)
						return
					}
					old(w, r)
				}
			},
			noIntent: true, recorded: true, creates: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws := newWorkspace(t, map[string]string{"main.gen.hcl": config})
			secret := filepath.Join(ws.parent, "secret.txt")
			const secretText = "the user's private notes"
			writeFile(t, secret, []byte(secretText))
			f := newFakeService(t, func(f *fakeService) { tt.setup(f, secret) })
			env := serviceEnv(f.url, fakeToken, "GENFORM_LOG=debug")

			r := genform(t, ws.dir, env, "apply", "-auto-approve")
			if len(tt.wantErr) == 0 {
				if r.code != 0 {
					t.Fatalf("%s", r)
				}
			} else {
				if r.code != 1 {
					t.Errorf("exit %d, want 1", r.code)
				}
				for _, want := range tt.wantErr {
					if !strings.Contains(r.stderr, want) {
						t.Errorf("stderr does not say %q", want)
					}
				}
				if strings.Contains(r.stderr, "panic") {
					t.Error("genform panicked")
				}
			}
			if t.Failed() {
				t.Logf("%s", r)
			}

			checkLeftOfA(t, ws, f, tt.intent, tt.noIntent, tt.recorded, tt.creates)
			if len(tt.wantPlan) > 0 {
				p := genform(t, ws.dir, env, "plan")
				for _, want := range tt.wantPlan {
					if !strings.Contains(p.stdout, want) {
						t.Errorf("the next plan does not say %q:\n%s", want, p)
					}
				}
			}

			// Nothing outside was written, and the file outside was not
			// copied in.
			ws.checkNothingOutside(t, "secret.txt")
			for name, sum := range treeSums(t, ws.dir) {
				if sum == harness.SHA256([]byte(secretText)) {
					t.Errorf("%s is a copy of the file outside the working directory", name)
				}
			}
		})
	}
}

// TestUnreachableServiceFailsInSeconds: apply against a port nothing
// listens on ends within seconds, not after a minute of retries, with the
// address in the error and nothing recorded.
func TestUnreachableServiceFailsInSeconds(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, map[string]string{"main.gen.hcl": "image \"a\" {\n  prompt       = \"an apple\"\n  image_number = 1\n}\n"})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	r := genform(t, ws.dir, childEnv("GENFORM_BASE_URL=http://"+addr, "GENFORM_TOKEN="+fakeToken), "apply", "-auto-approve")
	if r.code != 1 || r.took > 10*time.Second || !strings.Contains(r.stderr, "cannot reach the service at "+addr+" (http)") {
		t.Errorf("want exit 1 within 10s naming %s:\n%s", addr, r)
	}
	snap, err := harness.ReadCheckedState(ws.statePath(), "check")
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Intents)+len(snap.Resources) != 0 {
		t.Errorf("the state holds %d intents and %d resources, want nothing", len(snap.Intents), len(snap.Resources))
	}
}

// TestTokenRefusedDuringApply: the service accepts the token at the start
// and refuses it once the first job is submitted. apply stops submitting,
// says so once with the setting to fix, exits 1, and the job it paid for is
// kept for the next apply to resume.
func TestTokenRefusedDuringApply(t *testing.T) {
	t.Parallel()
	const config = `service {
  parallelism = 1
}

image "f" {
  count        = 3
  prompt       = "frame ${count.index}"
  image_number = 1
}
`
	f := newFakeService(t, func(f *fakeService) {
		f.status = func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "/00000000-0000-0000-0000-000000000000/") {
				w.WriteHeader(http.StatusNotFound)
				io.WriteString(w, `{"error":{"message":"no such generation","code":"H-10002003"}}`)
				return
			}
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":{"message":"token revoked","code":"H-10001001"}}`)
		}
	})
	ws := newWorkspace(t, map[string]string{"main.gen.hcl": config})
	env := serviceEnv(f.url, fakeToken)
	r := genform(t, ws.dir, env, "apply", "-auto-approve")
	if r.code != 1 {
		t.Errorf("exit %d, want 1", r.code)
	}
	if n := strings.Count(r.stdout+r.stderr, "401"); n != 1 {
		t.Errorf("the 401 is told %d times, want once", n)
	}
	for _, want := range []string{"Apply stopped: the service refused the token.", "image.f[", "gen-1", "Set GENFORM_TOKEN"} {
		if !strings.Contains(r.stdout+r.stderr, want) {
			t.Errorf("apply does not say %q", want)
		}
	}
	if n := f.creates.Load(); n != 1 {
		t.Errorf("%d creates, want 1: nothing after the refusal", n)
	}
	if t.Failed() {
		t.Logf("%s", r)
	}
	p := genform(t, ws.dir, env, "plan")
	if !strings.Contains(p.stdout, "will be resumed") || !strings.Contains(p.stdout, "2 to generate") {
		t.Errorf("the next plan does not resume gen-1 and generate the other two:\n%s", p)
	}
}
