package apiclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/genform/genform/internal/apiclient/apitest"
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

// TestTokenInARedirectIsScrubbed: a media server that redirects to a
// path holding the token, percent-encoded as a path carries it, and then
// fails, gets it neither into the request trace, which shows the path of
// every hop, nor into the error.
func TestTokenInARedirectIsScrubbed(t *testing.T) {
	const tok = `tok/SECRET<4242>&genform`
	var srv *apitest.Server
	srv = apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
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
	srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte(apitest.PNGMagic))
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
	if srv.Count() != 0 || len(w.All()) != 0 {
		t.Errorf("%d requests and %d waits, want none", srv.Count(), len(w.All()))
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
	big := apitest.PNGMagic + strings.Repeat("p", 256<<10)
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
			srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
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
			if srv.Count() != 1 || len(w.All()) != 0 {
				t.Errorf("%d requests and %d waits, want 1 and none", srv.Count(), len(w.All()))
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
	body := apitest.PNGMagic + strings.Repeat("x", 2000)
	for _, announce := range []bool{true, false} {
		srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
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
		if srv.Count() != 1 || len(w.All()) != 0 {
			t.Errorf("announced %v: %d requests, want 1", announce, srv.Count())
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
			srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
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
			if srv.Count() != 1 {
				t.Errorf("%d requests, want 1: it is not retried", srv.Count())
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
	drip := func(chunk int, every time.Duration, chunks int) *apitest.Server {
		return apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte(apitest.PNGMagic))
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
	if d, err := c.Download(context.Background(), fast.URL+"/0.png", dir, "1"); err != nil || d.Size != int64(len(apitest.PNGMagic))+2000 {
		t.Errorf("a download at the minimum speed: %+v, %v", d, err)
	}
}
