package apiclient

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/genform/genform/internal/apiclient/apitest"
)

// dirNames lists the names in dir, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestDownloadWritesFileWithHashAndExtension(t *testing.T) {
	body := bytes.Repeat([]byte("genform media \x00\xff"), 10_000) // larger than one buffer
	tests := []struct {
		contentType string
		magic       string // the first bytes of the format
		wantExt     string
	}{
		{"image/png", apitest.PNGMagic, "png"},
		{"image/jpeg", "\xff\xd8\xff", "jpg"},
		{"image/gif", "GIF89a", "gif"},
		{"image/webp", "RIFF\x00\x00\x00\x00WEBPVP", "webp"},
		{"video/mp4", apitest.MP4Magic, "mp4"},
		{"video/webm", "\x1a\x45\xdf\xa3", "webm"},
		{"video/quicktime", "\x00\x00\x00\x14ftypqt  \x00\x00\x00\x00", "mov"},
		{"Image/PNG; charset=binary", apitest.PNGMagic, "png"},
		// A generic type, or none, leaves it to the bytes.
		{"application/octet-stream", apitest.PNGMagic, "png"},
		{"", "\xff\xd8\xff", "jpg"},
		// The bytes name the file when the declared type is another medium's.
		{"image/png", apitest.MP4Magic, "mp4"},
	}
	for _, tt := range tests {
		t.Run(tt.contentType+"/"+tt.wantExt, func(t *testing.T) {
			payload := append([]byte(tt.magic), body...)
			sum := sha256.Sum256(payload)
			srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				w.Header().Set("Content-Type", tt.contentType)
				if tt.contentType == "" {
					w.Header()["Content-Type"] = nil // no sniffing either
				}
				w.Write(payload)
			})
			c, _ := newClient(t, srv.URL, nil)
			dir := filepath.Join(t.TempDir(), "generated", "image", "hero")
			d, err := c.Download(context.Background(), srv.URL+"/media/1?sig=x", dir, "0")
			if err != nil {
				t.Fatalf("Download: %v", err)
			}
			wantPath := filepath.Join(dir, "0."+tt.wantExt)
			if d.Path != wantPath || d.Size != int64(len(payload)) || d.SHA256 != hex.EncodeToString(sum[:]) || d.ContentType != tt.contentType {
				t.Errorf("Downloaded = %+v, want path %s, size %d, sha256 %x", d, wantPath, len(payload), sum)
			}
			got, err := os.ReadFile(wantPath)
			if err != nil || !bytes.Equal(got, payload) {
				t.Errorf("file content differs from what was served (err %v)", err)
			}
			if names := dirNames(t, dir); !slices.Equal(names, []string{"0." + tt.wantExt}) {
				t.Errorf("directory holds %v, want only the final file", names)
			}
			if fi, _ := os.Stat(wantPath); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o644 {
				t.Errorf("mode = %v, want 0644", fi.Mode().Perm())
			}
		})
	}
}

func TestDownloadFailuresLeaveNoFile(t *testing.T) {
	tests := []struct {
		name       string
		handler    func(w http.ResponseWriter, r *http.Request)
		expectSize int64
		wantErr    string
		wantTries  int
		retryable  bool
	}{
		{
			name: "body shorter than Content-Length",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "image/png")
				w.Header().Set("Content-Length", "1000")
				w.Write(make([]byte, 500))
			},
			wantErr: "after 500 bytes", wantTries: 3, retryable: true,
		},
		{
			name: "chunked body shorter than expected",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "image/png")
				w.Write(make([]byte, 500))
				w.(http.Flusher).Flush()
			},
			expectSize: 1000,
			wantErr:    "truncated: got 500 of 1000 bytes", wantTries: 3, retryable: true,
		},
		{
			name: "announced size differs from the expected one",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "image/png")
				w.Write(make([]byte, 500))
			},
			expectSize: 400,
			wantErr:    "announces 500 bytes, 400 were expected", wantTries: 1,
		},
		{
			name: "expired URL",
			handler: func(w http.ResponseWriter, r *http.Request) {
				apitest.WriteJSON(w, 403, `{"error":{"message":"url expired","code":"H-10002002"}}`)
			},
			wantErr: "403 Forbidden: url expired (code H-10002002)", wantTries: 1,
		},
		{
			name: "server error every time",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(500)
			},
			wantErr: "giving up after 3 attempts", wantTries: 3, retryable: true,
		},
		{
			name: "redirect to a file URL",
			handler: func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
			},
			wantErr: `refusing to follow a redirect to a "file" URL`, wantTries: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) { tt.handler(w, r) })
			c, _ := newClient(t, srv.URL, func(cfg *Config) { cfg.MaxRetries = 2 })
			dir := t.TempDir()
			// An earlier download of the same output must survive a failed one.
			old := filepath.Join(dir, "0.png")
			if err := os.WriteFile(old, []byte("previous bytes"), 0o644); err != nil {
				t.Fatal(err)
			}
			d, err := c.DownloadSized(context.Background(), srv.URL+"/media/0", dir, "0", tt.expectSize)
			if err == nil {
				t.Fatalf("Download succeeded: %+v", d)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want it to mention %q", err, tt.wantErr)
			}
			if IsRetryable(err) != tt.retryable {
				t.Errorf("IsRetryable = %v, want %v", IsRetryable(err), tt.retryable)
			}
			if n := srv.Count(); n != tt.wantTries {
				t.Errorf("server received %d requests, want %d", n, tt.wantTries)
			}
			if names := dirNames(t, dir); !slices.Equal(names, []string{"0.png"}) {
				t.Errorf("directory holds %v, want only the earlier file", names)
			}
			if b, _ := os.ReadFile(old); string(b) != "previous bytes" {
				t.Errorf("the earlier file was changed to %q", b)
			}
		})
	}
}

func TestDownloadReplacesEarlierFileOnSuccess(t *testing.T) {
	srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 0 { // the first attempt is cut short, the retry succeeds
			w.Header().Set("Content-Length", "9")
			w.Write([]byte(apitest.PNGMagic[:3]))
			return
		}
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte(apitest.PNGMagic + "1"))
	})
	c, _ := newClient(t, srv.URL, nil)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "0.png"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := c.DownloadSized(context.Background(), srv.URL+"/m", dir, "0", 9)
	if err != nil {
		t.Fatalf("Download: %v", err)
	}
	if b, _ := os.ReadFile(d.Path); string(b) != apitest.PNGMagic+"1" {
		t.Errorf("file holds %q, want the new bytes", b)
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{"0.png"}) {
		t.Errorf("directory holds %v", names)
	}
}

func TestDownloadRefusesNonHTTPURLs(t *testing.T) {
	c, _ := newClient(t, "http://127.0.0.1:1", nil)
	for _, u := range []string{
		"file:///etc/passwd",
		"ftp://example.com/a.png",
		"data:image/png;base64,iVBORw0KGgo=",
		"javascript:alert(1)",
		"/relative/path.png",
		"http:///nohost.png",
	} {
		t.Run(u, func(t *testing.T) {
			dir := t.TempDir()
			_, err := c.Download(context.Background(), u, dir, "0")
			if err == nil {
				t.Fatal("Download accepted the URL")
			}
			if IsRetryable(err) {
				t.Errorf("a refused URL is not retryable: %v", err)
			}
			if names := dirNames(t, dir); len(names) != 0 {
				t.Errorf("directory holds %v", names)
			}
		})
	}
}

func TestDownloadRefusesBadFileNames(t *testing.T) {
	c, _ := newClient(t, "http://127.0.0.1:1", nil)
	for _, base := range []string{"", ".", "..", "../escape", "a/b", `a\b`} {
		if _, err := c.Download(context.Background(), "http://127.0.0.1:1/x", t.TempDir(), base); err == nil || !strings.Contains(err.Error(), "invalid file name") {
			t.Errorf("base %q: err = %v", base, err)
		}
	}
}

func TestDownloadSendsTokenOnlyToTheService(t *testing.T) {
	cdn := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte(apitest.PNGMagic + "cdn"))
	})
	svc := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if r.URL.Path == "/elsewhere" {
			http.Redirect(w, r, cdn.URL+"/from-redirect", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte(apitest.PNGMagic + "svc"))
	})
	c, _ := newClient(t, svc.URL, nil)
	ctx := context.Background()
	for _, u := range []string{svc.URL + "/own", cdn.URL + "/direct", svc.URL + "/elsewhere"} {
		if _, err := c.Download(ctx, u, t.TempDir(), "0"); err != nil {
			t.Fatalf("Download %s: %v", u, err)
		}
	}
	for _, r := range svc.Requests() {
		if r.Auth != "Bearer "+apitest.Token {
			t.Errorf("service %s: Authorization = %q, want the token", r.Path, r.Auth)
		}
	}
	got := cdn.Requests()
	if len(got) != 2 {
		t.Fatalf("CDN received %d requests, want 2", len(got))
	}
	for _, r := range got {
		if r.Auth != "" {
			t.Errorf("CDN %s received Authorization %q", r.Path, r.Auth)
		}
	}
	if got[1].Path != "/from-redirect" {
		t.Errorf("the redirect was not followed: %+v", got[1])
	}
}

// A download from the base URL's origin carries the token as the API
// takes it (fal's "Key", not "Bearer"), and none at all when the files
// are public (Config.PublicFiles).
func TestDownloadTokenScheme(t *testing.T) {
	for _, tt := range []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"the API's scheme", func(cfg *Config) { cfg.AuthScheme = "Key" }, "Key " + apitest.Token},
		{"public files", func(cfg *Config) { cfg.AuthScheme, cfg.PublicFiles = "Key", true }, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			svc := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if r.URL.Path == "/status" {
					apitest.WriteJSON(w, 200, `{"status":"ok"}`)
					return
				}
				w.Header().Set("Content-Type", "image/png")
				w.Write([]byte(apitest.PNGMagic + "svc"))
			})
			c, _ := newClient(t, svc.URL, tt.mod)
			if _, err := c.Download(context.Background(), svc.URL+"/files/0.png", t.TempDir(), "0"); err != nil {
				t.Fatal(err)
			}
			if got := svc.Requests()[0].Auth; got != tt.want {
				t.Errorf("Authorization = %q, want %q", got, tt.want)
			}
			// The API's own calls keep the key.
			if _, err := c.Do(context.Background(), Call{Method: http.MethodGet, Path: "/status"}); err != nil {
				t.Fatal(err)
			}
			if got := svc.Requests()[1].Auth; got != "Key "+apitest.Token {
				t.Errorf("an API call's Authorization = %q, want the Key scheme", got)
			}
		})
	}
}

func TestDownloadStallFailsButSlowSucceeds(t *testing.T) {
	stalled := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "video/mp4")
		w.Header().Set("Content-Length", "1000")
		w.Write(make([]byte, 10))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	c, _ := newClient(t, stalled.URL, func(cfg *Config) {
		cfg.LowSpeedTime = 150 * time.Millisecond
		cfg.LowSpeedLimit = -1 // only a window without a byte fails
		cfg.MaxRetries = -1
	})
	dir := t.TempDir()
	_, err := c.Download(context.Background(), stalled.URL+"/v", dir, "0")
	if !errors.Is(err, errStalled) || !IsRetryable(err) {
		t.Errorf("err = %v, want a retryable stall", err)
	}
	if names := dirNames(t, dir); len(names) != 0 {
		t.Errorf("directory holds %v", names)
	}

	// A download slower in total than the timeout, but never silent for
	// that long, completes.
	slow := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "video/mp4")
		w.Write([]byte(apitest.MP4Magic))
		for range 6 {
			w.Write([]byte("chunk"))
			w.(http.Flusher).Flush()
			time.Sleep(50 * time.Millisecond)
		}
	})
	c, _ = newClient(t, slow.URL, func(cfg *Config) {
		cfg.LowSpeedTime = 150 * time.Millisecond
		cfg.LowSpeedLimit = -1
	})
	d, err := c.Download(context.Background(), slow.URL+"/v", dir, "1")
	if err != nil || d.Size != int64(len(apitest.MP4Magic))+30 {
		t.Errorf("slow download: %+v, %v", d, err)
	}
}

func TestIsTempFile(t *testing.T) {
	// A killed download leaves its temporary file; the name must say so.
	dir := t.TempDir()
	f, err := os.CreateTemp(dir, ".0.*"+tempSuffix)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	for name, want := range map[string]bool{
		filepath.Base(f.Name()): true,
		"0.png":                 false,
		".hidden":               false,
		"0.png" + tempSuffix:    false,
	} {
		if got := IsTempFile(name); got != want {
			t.Errorf("IsTempFile(%q) = %v, want %v", name, got, want)
		}
	}
}

// patternReader yields an endless non-constant byte stream without holding
// more than its small pattern.
type patternReader struct{ off int }

var pattern = func() []byte {
	b := make([]byte, 4096+7) // odd length so reads never line up
	for i := range b {
		b[i] = byte(i*31 + i/256)
	}
	return b
}()

func (p *patternReader) Read(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		c := copy(b[n:], pattern[p.off:])
		n += c
		p.off = (p.off + c) % len(pattern)
	}
	return n, nil
}

// BenchmarkDownload1GiB downloads 1 GiB and reports the peak heap in use
// while it runs; the performance table of docs/performance.md sets the target at 64 MiB.
func BenchmarkDownload1GiB(b *testing.B) {
	const size = 1 << 30
	srv := apitest.NewServer(b, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "video/mp4")
		w.Header().Set("Content-Length", strconv.Itoa(size))
		io.WriteString(w, apitest.MP4Magic)
		io.CopyN(w, &patternReader{}, size-int64(len(apitest.MP4Magic)))
	})
	c, err := New(Config{BaseURL: srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()

	var peakHeap, peakSys atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peakHeap.Load() {
				peakHeap.Store(ms.HeapInuse)
			}
			if ms.Sys > peakSys.Load() {
				peakSys.Store(ms.Sys)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	b.SetBytes(size)
	for i := 0; b.Loop(); i++ {
		d, err := c.Download(context.Background(), srv.URL+"/big.mp4", dir, fmt.Sprint(i))
		if err != nil {
			b.Fatal(err)
		}
		if d.Size != size {
			b.Fatalf("size %d", d.Size)
		}
		os.Remove(d.Path)
	}
	b.StopTimer()
	close(stop)
	wg.Wait()
	b.ReportMetric(float64(peakHeap.Load())/(1<<20), "peak-MiB")
	b.ReportMetric(float64(peakSys.Load())/(1<<20), "sys-MiB")
}

// TestDownloadRemovesLeftoversOfAKilledDownload checks that the temporary
// file a killed process left for a file goes when the file is downloaded
// again, and that nothing else in the directory is touched.
func TestDownloadRemovesLeftoversOfAKilledDownload(t *testing.T) {
	srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte(apitest.PNGMagic + "png bytes"))
	})
	c, _ := newClient(t, srv.URL, nil)
	dir := t.TempDir()
	for _, name := range []string{".0.123456.genform-tmp", ".1.654321.genform-tmp", ".0.notes", "0.txt", "notes.genform-tmp"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Download(context.Background(), srv.URL+"/media/0", dir, "0"); err != nil {
		t.Fatal(err)
	}
	want := []string{".0.notes", ".1.654321.genform-tmp", "0.png", "0.txt", "notes.genform-tmp"}
	if names := dirNames(t, dir); !slices.Equal(names, want) {
		t.Errorf("directory holds %v, want %v", names, want)
	}
}

// TestDownloadsShareTheClientsSyncs: a client's downloads are made
// durable through its atomicfile.Group, the bytes and then the rename,
// so that concurrent ones can share a file-system sync (on Linux; the
// group makes none where it cannot).
func TestDownloadsShareTheClientsSyncs(t *testing.T) {
	srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 100)...))
	})
	c, _ := newClient(t, srv.URL, nil)
	if _, err := c.Download(context.Background(), srv.URL+"/media/1", t.TempDir(), "0"); err != nil {
		t.Fatal(err)
	}
	want := 2
	if runtime.GOOS != "linux" {
		want = 0
	}
	if n := c.files.Syncs(); n != want {
		t.Errorf("one download made %d syncs through the client's group, want %d", n, want)
	}
}
