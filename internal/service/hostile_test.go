package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/genform/genform/internal/addrs"
)

// The tests of a service that lies, hangs or echoes secrets, and of the
// local failures that must not pass for network ones.

func TestPrintableEscapesWhatATerminalActsOn(t *testing.T) {
	tests := []struct{ in, want string }{
		{"gen-1", "gen-1"},
		{"café ✓ 世界", "café ✓ 世界"},
		{`a\b "q"`, `a\b "q"`},
		{"\x1b]0;pwned\a", `\x1b]0;pwned\a`},
		{"\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
		{"ok\nApply complete! Resources: 9 added.", `ok\nApply complete! Resources: 9 added.`},
		{"tab\there\r", `tab\there\r`},
		{"\u202eevil", `\u202eevil`},
		{"\u009b31m", `\u009b31m`},
		{"bad \xff byte", `bad \xff byte`},
		{"\x7f", `\x7f`},
	}
	for _, tt := range tests {
		got := Printable(tt.in)
		if got != tt.want {
			t.Errorf("Printable(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if again := Printable(got); again != got {
			t.Errorf("Printable is not its own Printable: %q -> %q", got, again)
		}
	}
}

// noControl fails when s holds a byte a terminal would act on.
func noControl(t *testing.T, what, s string) {
	t.Helper()
	if i := strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }); i >= 0 {
		t.Errorf("%s holds the control character %q: %q", what, s[i], s)
	}
}

// TestServiceStringsArePrintable: messages, codes, statuses and the start
// of an error page come out of the client with their escape sequences
// escaped, whichever way they came.
func TestServiceStringsArePrintable(t *testing.T) {
	const evil = "\x1b]0;owned\a\x1b[2J\nApply complete! Resources: 9 added."
	quoted, _ := json.Marshal(evil)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/status"):
			writeJSON(w, 200, `{"status":"success","value":{"status":`+string(quoted)+`,"progress":0.5}}`)
		case r.URL.Path == "/v1/jobs/text2image":
			writeJSON(w, 400, `{"error":{"message":`+string(quoted)+`,"code":`+string(quoted)+`}}`)
		default:
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			w.Write([]byte("<h1>" + evil + "</h1>"))
		}
	})
	c, _ := newClient(t, srv.URL, func(cfg *Config) { cfg.MaxRetries = -1 })
	ctx := context.Background()

	st, err := c.Status(ctx, "gen-1")
	if err != nil {
		t.Fatal(err)
	}
	noControl(t, "the status", st.Raw)
	if st.Known || !strings.Contains(st.Raw, `\x1b]0;owned`) {
		t.Errorf("status = %+v, want an unknown status shown escaped", st)
	}
	_, err = c.Create(ctx, addrs.Text2Image, []byte(`{"prompt":"x"}`))
	if err == nil {
		t.Fatal("the 400 was not an error")
	}
	noControl(t, "the error of a 400", err.Error())
	if !strings.Contains(err.Error(), `\nApply complete!`) {
		t.Errorf("the message is not shown escaped: %v", err)
	}
	_, err = c.Detail(ctx, "gen-1")
	if err == nil {
		t.Fatal("the 502 was not an error")
	}
	noControl(t, "the error of an HTML page", err.Error())
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
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if r.Method == http.MethodPost {
					writeJSON(w, 200, `{"status":"success","value":`+tt.create+`}`)
					return
				}
				writeJSON(w, 200, `{"status":"success","value":`+tt.detail+`}`)
			})
			c, _ := newClient(t, srv.URL, nil)
			var err error
			if tt.create != "" {
				_, err = c.Create(context.Background(), addrs.Text2Image, []byte(`{"prompt":"x"}`))
				if !errors.Is(err, ErrAmbiguousCreate) {
					t.Errorf("a create answered with an id that cannot be used is not reported as possibly paid for: %v", err)
				}
			} else {
				_, err = c.Detail(context.Background(), "gen-1")
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one saying %q", err, tt.wantErr)
			}
			noControl(t, "the error", err.Error())
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
	for cut := 1; cut < len(testToken); cut += 3 {
		page := strings.Repeat("x", 200-len("Authorization: Bearer ")-cut) + " Authorization: Bearer " + testToken + " more"
		page = "<html>" + page[6:] // keep the token's place
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(401)
			w.Write([]byte(page))
		})
		c, _ := newClient(t, srv.URL, nil)
		_, err := c.Status(context.Background(), "gen-1")
		if err == nil {
			t.Fatal("a 401 was not an error")
		}
		if prefix := testToken[:4]; strings.Contains(err.Error(), prefix) {
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
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if r.Method == http.MethodPost {
			writeJSON(w, 400, `{"message":"bad token `+jsonForm+`","details":[{"got":"`+jsonForm+`"}]}`)
			return
		}
		writeJSON(w, 200, `{"status":"success","value":`+detail.String()+`}`)
	})
	c, _ := newClient(t, srv.URL, func(cfg *Config) { cfg.Token = tok })
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
	var se *Error
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want the service's error", err)
	}
	if strings.Contains(err.Error(), "SECRET") || strings.Contains(string(se.Details), "SECRET") {
		t.Errorf("the error holds the token: %v (details %s)", err, se.Details)
	}
}

// TestTokenInARedirectIsScrubbed: a media server that redirects to a
// path holding the token, percent-encoded as a path carries it, and then
// fails, gets it neither into the request trace, which shows the path of
// every hop, nor into the error.
func TestTokenInARedirectIsScrubbed(t *testing.T) {
	const tok = `tok/SECRET<4242>&genform`
	var srv *server
	srv = newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if r.URL.Path == "/0.png" {
			http.Redirect(w, r, srv.URL+"/cdn/"+url.PathEscape(tok)+"/0.png", http.StatusFound)
			return
		}
		// The hop that holds the token breaks the connection.
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	var trace bytes.Buffer
	c, _ := newClient(t, srv.URL, func(cfg *Config) {
		cfg.Token = tok
		cfg.Debug = &trace
		cfg.MaxRetries = -1
	})
	_, err := c.Download(context.Background(), srv.URL+"/0.png", t.TempDir(), "0")
	if err == nil {
		t.Fatal("a broken connection was not an error")
	}
	if !strings.Contains(trace.String(), "/cdn/[redacted]/0.png") {
		t.Errorf("the trace does not show the redirect's hop redacted:\n%s", trace.String())
	}
	for _, form := range []string{tok, url.PathEscape(tok), "SECRET"} {
		for what, s := range map[string]string{"trace": trace.String(), "error": err.Error()} {
			if strings.Contains(s, form) {
				t.Errorf("the %s holds the token as %q: %s", what, form, s)
			}
		}
	}
}

// TestLocalErrorsAreNotRetried: a full disk, a read-only file system, a
// refused permission or a name taken are failures of this machine, which
// no retry gets past; syscall.Errno satisfies net.Error, so they used to
// pass for network failures.
func TestLocalErrorsAreNotRetried(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EROFS, syscall.EACCES, syscall.EEXIST, syscall.EIO} {
		err := fmt.Errorf("writing x: %w", &fs.PathError{Op: "write", Path: "x", Err: errno})
		if IsRetryable(err) {
			t.Errorf("%v is retried", err)
		}
	}
	if !IsRetryable(&net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ETIMEDOUT)}) {
		t.Error("a network timeout is not retried")
	}

	// A directory that cannot be made fails at once, naming it, after one
	// request at most.
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte(pngMagic))
	})
	c, w := newClient(t, srv.URL, nil)
	file := filepath.Join(t.TempDir(), "taken")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := c.Download(context.Background(), srv.URL+"/0.png", filepath.Join(file, "image"), "0")
	var le *LocalError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("err = %v, want a local error naming %s and the cause", err, file)
	}
	if srv.count() != 0 || len(w.all()) != 0 {
		t.Errorf("%d requests and %d waits, want none", srv.count(), len(w.all()))
	}
}

// TestFullOrReadOnlyDiskFailsWithinASecond: a download into a full or a
// read-only file system fails in under a second, after one request and no
// wait, with a *LocalError naming the directory and the cause, and leaves
// no temporary file behind. It needs the right to mount a tmpfs.
func TestFullOrReadOnlyDiskFailsWithinASecond(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	big := pngMagic + strings.Repeat("p", 256<<10)
	for _, tt := range []struct {
		name     string
		readOnly bool
		errno    syscall.Errno
	}{
		{"full", false, syscall.ENOSPC},
		{"read-only", true, syscall.EROFS},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var flags uintptr
			if tt.readOnly {
				flags = syscall.MS_RDONLY
			}
			if err := syscall.Mount("tmpfs", dir, "tmpfs", flags, "size=64k"); err != nil {
				t.Skipf("mounting a tmpfs: %v", err)
			}
			t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				w.Header().Set("Content-Type", "image/png")
				w.Write([]byte(big))
			})
			c, w := newClient(t, srv.URL, nil)
			start := time.Now()
			_, err := c.Download(context.Background(), srv.URL+"/0.png", dir, "0")
			took := time.Since(start)
			var le *LocalError
			if !errors.As(err, &le) || !errors.Is(err, tt.errno) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), tt.errno.Error()) {
				t.Errorf("err = %v, want a local error naming %s and %q", err, dir, tt.errno.Error())
			}
			if took > time.Second {
				t.Errorf("the download took %s to fail", took)
			}
			if srv.count() != 1 || len(w.all()) != 0 {
				t.Errorf("%d requests and %d waits, want 1 and none", srv.count(), len(w.all()))
			}
			if names := dirNames(t, dir); len(names) != 0 {
				t.Errorf("directory holds %v", names)
			}
			t.Logf("%s: failed after %s: %v", tt.name, took.Round(time.Millisecond), err)
		})
	}
}

// TestDownloadSizeCap: a file larger than MaxDownloadSize fails, whether
// Content-Length announces it or it streams past the cap, leaves no file
// and is not retried.
func TestDownloadSizeCap(t *testing.T) {
	body := pngMagic + strings.Repeat("x", 2000)
	for _, announce := range []bool{true, false} {
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			w.Header().Set("Content-Type", "image/png")
			if !announce {
				w.Header().Set("Transfer-Encoding", "chunked")
				w.Write([]byte(body[:600]))
				w.(http.Flusher).Flush()
			}
			w.Write([]byte(body))
		})
		c, w := newClient(t, srv.URL, func(cfg *Config) { cfg.MaxDownloadSize = 1000 })
		dir := t.TempDir()
		_, err := c.Download(context.Background(), srv.URL+"/0.png", dir, "0")
		if err == nil || !strings.Contains(err.Error(), "max_download_size") || IsRetryable(err) {
			t.Errorf("announced %v: err = %v, want a final refusal naming max_download_size", announce, err)
		}
		if srv.count() != 1 || len(w.all()) != 0 {
			t.Errorf("announced %v: %d requests, want 1", announce, srv.count())
		}
		if names := dirNames(t, dir); len(names) != 0 {
			t.Errorf("announced %v: directory holds %v", announce, names)
		}
	}
}

// TestDownloadMustBeMedia: a page, a JSON answer or an empty body is not
// saved as an output, whatever its Content-Type claims, and is not retried.
func TestDownloadMustBeMedia(t *testing.T) {
	tests := []struct {
		name, contentType, body, wantErr string
	}{
		{"html page", "text/html; charset=utf-8", "<!doctype html><html><body>Sign in</body></html>", `sent "text/html; charset=utf-8", not an image or a video`},
		{"json", "application/json", `{"error":"expired"}`, "not an image or a video"},
		{"html claiming png", "image/png", "<html><body>Sign in</body></html>", "first bytes are text/html"},
		{"text without a type", "", "just text", "first bytes are text/plain"},
		{"empty", "image/png", "", "an empty file"},
		{"svg", "image/svg+xml", `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`, "not an image or a video"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				w.Header().Set("Content-Type", tt.contentType)
				if tt.contentType == "" {
					w.Header()["Content-Type"] = nil
				}
				w.Write([]byte(tt.body))
			})
			c, _ := newClient(t, srv.URL, nil)
			dir := t.TempDir()
			_, err := c.Download(context.Background(), srv.URL+"/0", dir, "0")
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want one saying %q", err, tt.wantErr)
			}
			if srv.count() != 1 {
				t.Errorf("%d requests, want 1: it is not retried", srv.count())
			}
			if names := dirNames(t, dir); len(names) != 0 {
				t.Errorf("directory holds %v", names)
			}
		})
	}
}

// TestDownloadBelowMinimumSpeedFails: a server dripping bytes slower than
// LowSpeedLimit over LowSpeedTime is cut off, although it never goes
// silent; one that keeps the speed finishes.
func TestDownloadBelowMinimumSpeedFails(t *testing.T) {
	drip := func(chunk int, every time.Duration, chunks int) *server {
		return newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte(pngMagic))
			w.(http.Flusher).Flush()
			for range chunks {
				select {
				case <-r.Context().Done():
					return
				case <-time.After(every):
				}
				w.Write([]byte(strings.Repeat("x", chunk)))
				w.(http.Flusher).Flush()
			}
		})
	}
	slow := drip(1, 20*time.Millisecond, 1000) // 50 bytes a second
	c, _ := newClient(t, slow.URL, func(cfg *Config) {
		cfg.LowSpeedLimit = 1000
		cfg.LowSpeedTime = 200 * time.Millisecond
		cfg.MaxRetries = -1
	})
	start := time.Now()
	dir := t.TempDir()
	_, err := c.Download(context.Background(), slow.URL+"/0.png", dir, "0")
	if !errors.Is(err, errStalled) || !strings.Contains(err.Error(), "fewer than 1000 bytes a second") {
		t.Errorf("err = %v, want a download too slow", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the slow download took %s to fail", took)
	}
	if names := dirNames(t, dir); len(names) != 0 {
		t.Errorf("directory holds %v", names)
	}

	fast := drip(100, 20*time.Millisecond, 20) // 5,000 bytes a second
	c, _ = newClient(t, fast.URL, func(cfg *Config) {
		cfg.LowSpeedLimit = 1000
		cfg.LowSpeedTime = 200 * time.Millisecond
	})
	if d, err := c.Download(context.Background(), fast.URL+"/0.png", dir, "1"); err != nil || d.Size != int64(len(pngMagic))+2000 {
		t.Errorf("a download at the minimum speed: %+v, %v", d, err)
	}
}

// TestCallerDeadlineBoundsEverything: a service that accepts requests and
// never answers, or answers 503 with a long Retry-After, gives up when the
// caller's deadline comes, not after the attempts and waits of the retry
// schedule; the last failure is what the error says.
func TestCallerDeadlineBoundsEverything(t *testing.T) {
	hang := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) { <-r.Context().Done() })
	c, err := New(Config{BaseURL: hang.URL, Token: testToken})
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

	busy := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Retry-After", "120")
		writeJSON(w, 503, `{"message":"busy"}`)
	})
	c, err = New(Config{BaseURL: busy.URL, Token: testToken})
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
	if took := time.Since(start); took > 2*time.Second || busy.count() != 1 {
		t.Errorf("%d requests in %s, want 1 and no wait", busy.count(), took)
	}
}

// TestShortTokenKeepsAnswersWhole: a token so short that it is part of
// what the service always sends ("t" is in "generation_id", "status" and
// every media URL) is not looked for in its JSON answers: the job's id is
// read, the create is not taken for one whose answer was lost, and the
// media URL stays one.
func TestShortTokenKeepsAnswersWhole(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if r.Method == http.MethodPost {
			writeJSON(w, 200, `{"status":"success","value":{"generation_id":"gen-42","note":"token t echoed"}}`)
			return
		}
		writeJSON(w, 200, `{"status":"success","value":{"creation_id":"gen-42","prompt":"a tall tower","outputs":[{"id":"o0","media_url":"http://cdn.test/0.png"}]}}`)
	})
	c, _ := newClient(t, srv.URL, func(cfg *Config) { cfg.Token = "t" })
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
