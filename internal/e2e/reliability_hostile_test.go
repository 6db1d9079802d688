// A hostile world: a service that hangs, drips, lies about what it made
// and who it made it for, echoes the token and writes escape sequences at
// the terminal; a disk that is full or read-only. apply must end within
// the service timeout (plus a margin), say what went wrong without
// repeating the token or letting the service draw on the terminal, write
// no file that is not media, pay for nothing twice, and leave a state from
// which the next apply resumes.

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/e2e/harness"
)

// hostileTimeout is the service timeout of the hostile tests, and
// hostileMargin what apply may take beyond it.
const (
	hostileTimeout = 5 * time.Second
	hostileMargin  = 30 * time.Second
)

// hostileConfig declares one image under a short service timeout.
var hostileConfig = fmt.Sprintf(`service {
  timeout       = "%s"
  poll_interval = "1s"
}
`, hostileTimeout) + anApple

// genformWithin runs genform like genform does, but kills it at limit, so
// that a test of a bound fails at the bound rather than hang for the ten
// minutes an unbounded apply would take.
func genformWithin(t *testing.T, limit time.Duration, dir string, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	r := genformContext(ctx, t, dir, env, args...)
	if ctx.Err() != nil {
		t.Fatalf("genform %s still ran after %s and was killed:\n%s", strings.Join(args, " "), limit, r)
	}
	return r
}

// isProbe reports whether r is the status request of apply's check of
// the service, which asks about a job that cannot exist.
func isProbe(r *http.Request) bool {
	return strings.Contains(r.URL.Path, "/00000000-0000-0000-0000-000000000000/")
}

// hang holds a request until the client gives up on it. The body is read
// first: only then does the server notice the connection closing.
func hang(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	<-r.Context().Done()
}

// imageA is the address of the hostile tests' image.
var imageA = addrs.Resource{Kind: addrs.Image, Name: "a"}.Instance(addrs.NoKey)

// checkLeftOfA checks what an apply of image.a against f left in ws's
// state: an intent keeping generation intent ("" for one with none), or
// none when noIntent; a record of image.a when recorded; and creates
// create requests f received.
func checkLeftOfA(t *testing.T, ws workspace, f *fakeService, intent string, noIntent, recorded bool, creates int32) {
	t.Helper()
	snap, err := harness.ReadCheckedState(ws.statePath(), "check")
	if err != nil {
		t.Fatal(err)
	}
	in := snap.Intents[imageA]
	switch {
	case noIntent && in != nil:
		t.Errorf("an intent is left: %+v", in)
	case !noIntent && in == nil:
		t.Errorf("no intent is kept for the job, so the next apply can neither resume it nor warn about it")
	case !noIntent && in.GenerationID != intent:
		t.Errorf("the intent keeps generation %q, want %q", in.GenerationID, intent)
	}
	if rec := snap.Resources[imageA]; (rec != nil) != recorded {
		t.Errorf("image.a recorded: %v, want %v", rec != nil, recorded)
	}
	if n := f.creates.Load(); n != creates {
		t.Errorf("the service received %d create requests, want %d", n, creates)
	}
}

// untilHealthy answers with sick until healthy is set, and with ok after.
func untilHealthy(healthy *atomic.Bool, ok, sick http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if healthy.Load() {
			ok(w, r)
			return
		}
		sick(w, r)
	}
}

// TestHostileServiceHangs: a service that accepts requests and never
// answers them, or drips a file a byte every two seconds, cannot hold an
// apply: the service timeout bounds a generation from its create request
// to its last download, and the check before it. apply ends within the
// timeout plus 30 seconds with exit 1, and the state says what the next
// apply does: resume the recorded job, download again, or warn that a
// create request without an answer may have been paid for. Nothing is
// submitted twice.
func TestHostileServiceHangs(t *testing.T) {
	parallelSlow(t, "runs genform against a hanging service")
	tests := []struct {
		name  string
		setup func(f *fakeService, healthy *atomic.Bool)
		// wantErr are in apply's stderr; wantPlan in the next plan's stdout.
		wantErr  []string
		wantPlan string
		// intent is the generation id an intent keeps; noIntent means
		// none is kept. recorded: image.a is in the state.
		intent   string
		noIntent bool
		recorded bool
		creates  int32
	}{
		{
			name: "the check before submitting is never answered",
			setup: func(f *fakeService, _ *atomic.Bool) {
				f.status = hang
			},
			wantErr:  []string{"checking the service before submitting anything", "service timeout"},
			noIntent: true, creates: 0,
		},
		{
			name: "the create request is never answered",
			setup: func(f *fakeService, _ *atomic.Bool) {
				f.create = hang
			},
			wantErr:  []string{"submitting image.a", "the service may have made, and charged for, the job", "service timeout"},
			wantPlan: "may already have been paid for",
			intent:   "", creates: 1,
		},
		{
			name: "status requests are accepted and never answered",
			setup: func(f *fakeService, healthy *atomic.Bool) {
				ok := f.status
				f.status = untilHealthy(healthy, ok, func(w http.ResponseWriter, r *http.Request) {
					if isProbe(r) {
						ok(w, r)
						return
					}
					hang(w, r)
				})
			},
			wantErr:  []string{"polling image.a (job gen-1)", "service timeout", "rerun apply to resume it"},
			wantPlan: "will be resumed",
			intent:   "gen-1", creates: 1,
		},
		{
			name: "the detail is never answered",
			setup: func(f *fakeService, healthy *atomic.Bool) {
				f.detail = untilHealthy(healthy, f.detail, hang)
			},
			wantErr:  []string{"fetching the detail of image.a (job gen-1)", "service timeout"},
			wantPlan: "will be resumed",
			intent:   "gen-1", creates: 1,
		},
		{
			name: "the media server drips a byte every two seconds",
			setup: func(f *fakeService, healthy *atomic.Bool) {
				f.media = untilHealthy(healthy, f.media, func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "image/png")
					w.Write(fakePNG)
					for {
						w.(http.Flusher).Flush()
						select {
						case <-r.Context().Done():
							return
						case <-time.After(2 * time.Second):
						}
						w.Write([]byte{'x'})
					}
				})
			},
			wantErr:  []string{"downloading output 0 of image.a", "service timeout", "nothing is regenerated"},
			wantPlan: "1 to re-download",
			noIntent: true, recorded: true, creates: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var healthy atomic.Bool
			f := newFakeService(t, func(f *fakeService) { tt.setup(f, &healthy) })
			ws := newWorkspace(t, map[string]string{"main.gen.hcl": hostileConfig})
			env := serviceEnv(f.url, fakeToken)

			r := genformWithin(t, hostileTimeout+hostileMargin, ws.dir, env, "apply", "-auto-approve")
			t.Logf("apply against the hanging service ended after %s (timeout %s)", r.took.Round(time.Millisecond), hostileTimeout)
			if r.code != 1 {
				t.Errorf("exit %d, want 1", r.code)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr does not say %q", want)
				}
			}
			if t.Failed() {
				t.Logf("%s", r)
			}
			checkLeftOfA(t, ws, f, tt.intent, tt.noIntent, tt.recorded, tt.creates)
			if tt.wantPlan != "" {
				if p := genform(t, ws.dir, env, "plan"); !strings.Contains(p.stdout, tt.wantPlan) {
					t.Errorf("the next plan does not say %q:\n%s", tt.wantPlan, p)
				}
			}
			if tt.intent == "" && !tt.recorded {
				return
			}
			// Once the service answers, the next apply finishes the job it
			// paid for: nothing is submitted again.
			healthy.Store(true)
			if r := genformWithin(t, hostileTimeout+hostileMargin, ws.dir, env, "apply", "-auto-approve"); r.code != 0 {
				t.Fatalf("the apply after the service recovered failed:\n%s", r)
			}
			if n := f.creates.Load(); n != tt.creates {
				t.Errorf("%d create requests after the recovery, want %d", n, tt.creates)
			}
			if p := genform(t, ws.dir, env, "plan"); !strings.Contains(p.stdout, "No changes.") {
				t.Errorf("the plan after the recovery is not empty:\n%s", p)
			}
		})
	}
}

// mountTmpfs mounts a tmpfs of size bytes on dir for the test's lifetime,
// read-only when readOnly.
func mountTmpfs(t *testing.T, dir string, size int, readOnly bool) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var flags uintptr
	if readOnly {
		flags = syscall.MS_RDONLY
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", flags, fmt.Sprintf("size=%d", size)); err != nil {
		t.Fatalf("mounting a tmpfs on %s: %v", dir, err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
}

// TestLocalWriteErrorsFailFast: an output directory on a full disk or a
// read-only file system fails the download at once (it used to be retried
// nine times, the file downloaded again each time, for 200 seconds),
// with the path and the cause; the generation stays recorded, and the
// next apply, once the disk has room, downloads it without paying again.
//
// It is not run in parallel with the others: the bound is on the wall time
// of an apply, which the load of tests beside it would stretch.
func TestLocalWriteErrorsFailFast(t *testing.T) {
	if testing.Short() {
		t.Skip("runs genform on a small disk")
	}
	if !harness.CanMount() {
		t.Skip("mounting a tmpfs needs root")
	}
	big := append(append([]byte{}, fakePNG...), bytes.Repeat([]byte("p"), 256<<10)...)
	for _, tt := range []struct {
		name     string
		readOnly bool
		cause    string
	}{
		{"full disk", false, "no space left on device"},
		{"read-only file system", true, "read-only file system"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var media atomic.Int32
			f := newFakeService(t, func(f *fakeService) {
				f.media = func(w http.ResponseWriter, r *http.Request) {
					media.Add(1)
					w.Header().Set("Content-Type", "image/png")
					w.Write(big)
				}
			})
			ws := newWorkspace(t, map[string]string{"main.gen.hcl": hostileConfig})
			out := filepath.Join(ws.dir, "generated")
			mountTmpfs(t, out, 64<<10, tt.readOnly)
			env := serviceEnv(f.url, fakeToken)

			r := genformWithin(t, hostileTimeout+hostileMargin, ws.dir, env, "apply", "-auto-approve")
			t.Logf("apply on a %s failed after %s, %d download(s)", tt.name, r.took.Round(time.Millisecond), media.Load())
			if r.code != 1 || !strings.Contains(r.stderr, tt.cause) || !strings.Contains(r.stderr, "generated/image/a") {
				t.Errorf("want exit 1 naming generated/image/a and %q:\n%s", tt.cause, r)
			}
			if strings.Contains(r.stderr, "retrying") || media.Load() > 1 {
				t.Errorf("the local failure was retried (%d downloads):\n%s", media.Load(), r)
			}
			// The whole apply, the job's second of polling included, ends
			// in a few seconds; the download itself in well under one.
			if r.took > 4*time.Second {
				t.Errorf("apply took %s to fail", r.took)
			}
			snap, err := harness.ReadCheckedState(ws.statePath(), "check")
			if err != nil {
				t.Fatal(err)
			}
			if rec := snap.Resources[imageA]; rec == nil || rec.GenerationID != "gen-1" {
				t.Fatalf("the generation is not recorded: %+v", rec)
			}
			if err := syscall.Unmount(out, syscall.MNT_DETACH); err != nil {
				t.Fatal(err)
			}
			if r := genform(t, ws.dir, env, "apply", "-auto-approve"); r.code != 0 {
				t.Fatalf("the apply with room on the disk failed:\n%s", r)
			}
			if n := f.creates.Load(); n != 1 {
				t.Errorf("%d create requests, want 1", n)
			}
			b, err := os.ReadFile(filepath.Join(out, "image", "a", "0.png"))
			if err != nil || !bytes.Equal(b, big) {
				t.Errorf("the output is not on disk after the second apply (%v)", err)
			}
		})
	}
}

// TestLyingService: a service that answers an image request with an HTML
// page, with 3,000 outputs for one image asked, with another creation's
// detail, with ids of 300 bytes or with escape sequences, or with a file
// larger than max_download_size, gets none of it written or printed as
// it is: each output is an image or a video, only what was asked is
// downloaded, an id is checked, and every string of the service is shown
// escaped.
func TestLyingService(t *testing.T) {
	parallelSlow(t, "runs genform against a lying service")
	const evil = "\x1b]0;owned\a\x1b[2J\x1b[H\nApply complete! Resources: 9 added, 0 changed, 0 destroyed.\n"
	evilJSON, _ := json.Marshal(evil)
	tests := []struct {
		name   string
		extra  string // added to the service block
		number int    // image_number, 1 unless set
		setup  func(f *fakeService, media *atomic.Int32)
		code   int
		// want are in stdout or stderr.
		want []string
		// files lists the files under generated/ after the apply.
		files []string
	}{
		{
			name: "an HTML page for an image",
			setup: func(f *fakeService, _ *atomic.Int32) {
				f.media = func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "text/html; charset=utf-8")
					io.WriteString(w, "<!doctype html><html><body>Please sign in</body></html>")
				}
			},
			code: 1, want: []string{`the server sent "text/html; charset=utf-8", not an image or a video`},
		},
		{
			name: "an HTML page that claims to be a PNG",
			setup: func(f *fakeService, _ *atomic.Int32) {
				f.media = func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "image/png")
					io.WriteString(w, "<html><body>Please sign in</body></html>")
				}
			},
			code: 1, want: []string{"first bytes are text/html, not an image or a video"},
		},
		{
			name:   "3,000 outputs for two images asked",
			number: 2,
			setup: func(f *fakeService, _ *atomic.Int32) {
				f.detail = func(w http.ResponseWriter, r *http.Request) {
					var outs []string
					for i := range 3000 {
						outs = append(outs, fmt.Sprintf(`{"id":"o%d","media_url":"http://%s/media/%d.png"}`, i, r.Host, i))
					}
					fmt.Fprintf(w, `{"status":"success","value":{"creation_id":"gen-1","status":"succeed","outputs":[%s]}}`, strings.Join(outs, ","))
				}
			},
			code: 0, want: []string{"job gen-1 lists 3000 outputs, but 2 were asked for and no request makes more than 4; only the first 4 were downloaded"},
			files: []string{"image/a/0.png", "image/a/1.png", "image/a/2.png", "image/a/3.png"},
		},
		{
			name: "the detail of another creation",
			setup: func(f *fakeService, _ *atomic.Int32) {
				f.detail = func(w http.ResponseWriter, r *http.Request) {
					fmt.Fprintf(w, `{"status":"success","value":{"creation_id":"gen-2","status":"succeed","outputs":[{"id":"o0","media_url":"http://%s/media/0.png"}]}}`, r.Host)
				}
			},
			code: 1, want: []string{"the answer is the detail of creation gen-2, not of gen-1"},
		},
		{
			name: "a generation id of 300 bytes",
			setup: func(f *fakeService, _ *atomic.Int32) {
				f.create = func(w http.ResponseWriter, r *http.Request) {
					fmt.Fprintf(w, `{"status":"success","value":{"generation_id":%q}}`, strings.Repeat("g", 300))
				}
			},
			code: 1, want: []string{"is 300 bytes long; an id longer than 256 bytes is refused", "the service may have made, and charged for, the job"},
		},
		{
			name: "escape sequences in an id",
			setup: func(f *fakeService, _ *atomic.Int32) {
				f.create = func(w http.ResponseWriter, r *http.Request) {
					fmt.Fprintf(w, `{"status":"success","value":{"generation_id":%s}}`, evilJSON)
				}
			},
			code: 1, want: []string{`holds a space, a control character`, `\x1b]0;owned\a`},
		},
		{
			name: "escape sequences in a status and an error",
			setup: func(f *fakeService, _ *atomic.Int32) {
				ok := f.status
				f.status = func(w http.ResponseWriter, r *http.Request) {
					if isProbe(r) {
						ok(w, r)
						return
					}
					fmt.Fprintf(w, `{"status":"success","value":{"status":%s,"progress":0.5}}`, evilJSON)
				}
			},
			code: 1, want: []string{`\x1b]0;owned\a\x1b[2J\x1b[H\nApply complete!`, "service timeout"},
		},
		{
			name: "escape sequences in an error page",
			setup: func(f *fakeService, _ *atomic.Int32) {
				f.create = func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "text/html")
					w.WriteHeader(http.StatusBadRequest)
					io.WriteString(w, "<h1>"+evil+"</h1>")
				}
			},
			code: 1, want: []string{`400 Bad Request: <h1>\x1b]0;owned\a`},
		},
		{
			name:  "a file larger than max_download_size",
			extra: `max_download_size = "1KiB"`,
			setup: func(f *fakeService, _ *atomic.Int32) {
				f.media = func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "image/png")
					w.Write(fakePNG)
					w.Write(bytes.Repeat([]byte("x"), 4096))
				}
			},
			code: 1, want: []string{"the largest download allowed (1024 bytes; service.max_download_size)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var media atomic.Int32
			f := newFakeService(t, func(f *fakeService) {
				tt.setup(f, &media)
				inner := f.media
				f.media = func(w http.ResponseWriter, r *http.Request) {
					media.Add(1)
					inner(w, r)
				}
			})
			number := max(tt.number, 1)
			cfg := strings.Replace(hostileConfig, `poll_interval = "1s"`, `poll_interval = "1s"`+"\n  "+tt.extra, 1)
			cfg = strings.Replace(cfg, "image_number = 1", fmt.Sprintf("image_number = %d", number), 1)
			ws := newWorkspace(t, map[string]string{"main.gen.hcl": cfg})
			env := serviceEnv(f.url, fakeToken)

			r := genformWithin(t, hostileTimeout+hostileMargin, ws.dir, env, "apply", "-auto-approve")
			out := r.stdout + r.stderr
			if r.code != tt.code {
				t.Errorf("exit %d, want %d", r.code, tt.code)
			}
			for _, want := range tt.want {
				if !strings.Contains(out, want) {
					t.Errorf("apply does not say %q", want)
				}
			}
			// Nothing the service wrote reaches the terminal as it is.
			if i := strings.IndexFunc(out, func(c rune) bool { return c < 0x20 && c != '\n' && c != '\t' }); i >= 0 {
				t.Errorf("the output holds the control character %q", out[i])
			}
			for _, line := range strings.Split(out, "\n") {
				if strings.HasPrefix(line, "Apply complete! Resources: 9") {
					t.Errorf("the service printed a line of its own: %q", line)
				}
			}
			if len(out) > 20000 {
				t.Errorf("apply printed %d bytes", len(out))
			}
			// A service can answer more files than were asked for, which
			// are kept (they may have been charged for), but never more
			// than one request of the endpoint makes (4 images).
			if n := int(media.Load()); n > max(number, 4) {
				t.Errorf("%d files downloaded for %d asked", n, number)
			}
			var files []string
			filepath.WalkDir(filepath.Join(ws.dir, "generated"), func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					rel, _ := filepath.Rel(filepath.Join(ws.dir, "generated"), p)
					files = append(files, filepath.ToSlash(rel))
				}
				return nil
			})
			if strings.Join(files, " ") != strings.Join(tt.files, " ") {
				t.Errorf("generated/ holds %v, want %v", files, tt.files)
			}
			if n := f.creates.Load(); n != 1 {
				t.Errorf("%d create requests, want 1", n)
			}
			if t.Failed() {
				t.Logf("%s", r)
			}
		})
	}
}

// TestTokenEchoesAreScrubbed: a service that echoes the token, in a 401
// page long enough that the 200-character cut of an error falls inside the
// token, and in its success answers raw, JSON-escaped and URL-encoded, gets
// no trace of it onto the terminal (with the request trace on) or into the
// state.
func TestTokenEchoesAreScrubbed(t *testing.T) {
	parallelSlow(t, "runs genform against a service echoing the token")
	const tok = `tok/SECRET<4242>&genform`
	jsonForm := `tok\/SECRET\u003c4242\u003e\u0026genform`
	forms := []string{tok, `tok/SECRET\u003c4242\u003e\u0026genform`, jsonForm, url.QueryEscape(tok), url.PathEscape(tok),
		strings.ToLower(url.QueryEscape(tok)[:5]) + url.QueryEscape(tok)[5:]}

	// A 401 page echoing the header, cut at every place of the token.
	for cut := 1; cut < len(tok); cut += 5 {
		f := newFakeService(t, func(f *fakeService) {
			f.status = func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(http.StatusUnauthorized)
				page := "<html><body><pre>" + strings.Repeat("-", 200-len("<html><body><pre>")-len("Authorization: ")-len("Bearer ")-cut)
				io.WriteString(w, page+"Authorization: "+r.Header.Get("Authorization")+"</pre></body></html>")
			}
		})
		ws := newWorkspace(t, map[string]string{"main.gen.hcl": hostileConfig})
		r := genformWithin(t, hostileTimeout+hostileMargin, ws.dir, serviceEnv(f.url, tok, "GENFORM_LOG=debug"), "apply", "-auto-approve")
		if r.code != 1 || !strings.Contains(r.stderr, "401") {
			t.Fatalf("want the 401 reported:\n%s", r)
		}
		if strings.Contains(r.stdout+r.stderr, "tok/S") {
			t.Fatalf("cut %d: the output shows the start of the token:\n%s", cut, r)
		}
	}

	// Success answers echoing it in every spelling.
	f := newFakeService(t, func(f *fakeService) {
		f.detail = func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"status":"success","value":{"creation_id":"gen-1","status":"succeed","prompt":"echo %s","username":"%s",`+
				`"avatar":"http://x/a.png?t=%s","thumbnail_url":"http://x/t.png?t=%s","outputs":[{"id":"o0","media_url":"http://%s/media/0.png?sig=%s"}]}}`,
				jsonForm, tok, url.QueryEscape(tok), url.PathEscape(tok), r.Host, url.QueryEscape(tok))
		}
	})
	ws := newWorkspace(t, map[string]string{"main.gen.hcl": hostileConfig})
	env := serviceEnv(f.url, tok, "GENFORM_LOG=debug")
	r := genformWithin(t, hostileTimeout+hostileMargin, ws.dir, env, "apply", "-auto-approve")
	if r.code != 0 {
		t.Fatalf("%s", r)
	}
	show := genform(t, ws.dir, env, "show", "-json")
	state, err := os.ReadFile(ws.statePath())
	if err != nil {
		t.Fatal(err)
	}
	for _, form := range forms {
		for what, text := range map[string]string{"apply's output": r.stdout + r.stderr, "show -json": show.stdout, "the state file": string(state)} {
			if strings.Contains(text, form) {
				t.Errorf("%s holds the token as %q", what, form)
			}
		}
	}
	if !strings.Contains(show.stdout, "[redacted]") {
		t.Errorf("the detail in the state does not show the echo as redacted:\n%s", show.stdout)
	}
}
