package command

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/gallery"
	"github.com/genform/genform/internal/simulator"
	"github.com/genform/genform/statefile"
	"github.com/genform/genform/statefile/boltstate"
)

// galleryFixture writes output files and a state recording them into the
// working directory, as an apply would have left them. It returns the
// bytes of each file by path.
type galleryFixture struct {
	t     *testing.T
	files map[string][]byte
	recs  []*statefile.Resource
}

func (f *galleryFixture) file(path, contentType string, data []byte) statefile.Output {
	f.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		f.t.Fatal(err)
	}
	f.files[path] = data
	sum := sha256.Sum256(data)
	return statefile.Output{Path: path, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), ContentType: contentType}
}

func (f *galleryFixture) resource(addr string, endpoint addrs.Endpoint, request, status string, outs ...statefile.Output) *statefile.Resource {
	kind, _, _ := strings.Cut(addr, ".")
	id := fmt.Sprintf("c-%s-%d", kind, len(f.recs))
	for i := range outs {
		outs[i].Index = i
		outs[i].ID = fmt.Sprintf("%s-%d", id, i)
	}
	r := &statefile.Resource{
		Addr: addrs.MustParseInstance(addr), Endpoint: endpoint, Fingerprint: "fp-" + addr,
		Request: json.RawMessage(request), GenerationID: id, CreationID: id, Status: status,
		Outputs: outs, Detail: json.RawMessage(`{"settings":{"width":640,"height":360}}`),
	}
	f.recs = append(f.recs, r)
	return r
}

func (f *galleryFixture) save() {
	f.t.Helper()
	st, err := boltstate.Open(filepath.Join(".genform", "state.db"), statefile.Options{Create: true, Command: "test"})
	if err != nil {
		f.t.Fatal(err)
	}
	defer st.Close()
	if err := st.Update(func(tx *statefile.Tx) error {
		for _, r := range f.recs {
			if err := tx.Record(r); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		f.t.Fatal(err)
	}
}

func pngBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = byte(i)
	}
	img.Set(0, 0, color.RGBA{255, 0, 0, 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestGalleryPage checks what the page shows for every kind of record a
// state can hold: images, a GIF video, an MP4 video, a failed generation,
// a file deleted and a file edited since apply, and a prompt written to
// break out of the HTML.
func TestGalleryPage(t *testing.T) {
	inDir(t, map[string]string{"main.gen.hcl": "image \"hero\" {\n  prompt = \"x\"\n}\n"})
	f := &galleryFixture{t: t, files: map[string][]byte{}}
	hero0 := f.file("generated/image/hero/0.png", "image/png", pngBytes(t, 32, 18))
	hero1 := f.file("generated/image/hero/1.png", "image/png", pngBytes(t, 30, 18))
	f.resource(`image.hero`, addrs.Text2Image,
		`{"prompt":"a lighthouse <script>alert(1)</script> & \"quotes\"","negative_prompt":"blurry","is_public":false,"config":{"image_number":2},"settings":{"seed":42,"aspect_ratio":"16:9","resolution":720}}`,
		"succeed", hero0, hero1)
	gif := f.file("generated/video/motion/0.gif", "image/gif", []byte("GIF89a\x02\x00\x03\x00\x00\x00\x00;"))
	f.resource(`video.motion`, addrs.Image2Video,
		`{"prompt":"slow dolly in","config":{"source_image":"data:image/png;base64,`+strings.Repeat("A", 5000)+`"},"settings":{"seed":-1,"duration":4}}`,
		"succeed", gif)
	mp4 := f.file("generated/video/clip/0.mp4", "video/mp4; codecs=avc1", []byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"))
	f.resource(`video.clip`, addrs.Text2Video, `{"prompt":"title card","settings":{"duration":2}}`, "succeed", mp4)
	broken := f.resource(`image.broken`, addrs.Text2Image, `{"prompt":"never [fail]"}`, "failed")
	broken.Error = "the generation failed on the service"
	gone := f.file("generated/image/gone/0.png", "image/png", pngBytes(t, 4, 4))
	f.resource(`image.gone`, addrs.Text2Image, `{"prompt":"deleted by hand"}`, "succeed", gone)
	edited := f.file("generated/image/edited/0.png", "image/png", pngBytes(t, 8, 8))
	f.resource(`image.edited`, addrs.Text2Image, `{"prompt":"edited by hand"}`, "succeed", edited)
	f.save()
	if err := os.Remove("generated/image/gone/0.png"); err != nil {
		t.Fatal(err)
	}
	editedNow := pngBytes(t, 10, 6)
	if err := os.WriteFile("generated/image/edited/0.png", editedNow, 0o644); err != nil {
		t.Fatal(err)
	}

	env, stdout, stderr := cmdEnv()
	if code := runGallery(env, nil); code != ExitOK {
		t.Fatalf("gallery: exit %d, stderr:\n%s", code, stderr)
	}
	if want := "Gallery written to gallery.html: 6 resources, 6 outputs"; !strings.Contains(stdout.String(), want) {
		t.Errorf("stdout %q does not say %q", stdout, want)
	}
	if want := "1 output file missing from disk; run 'genform apply' to download it again."; !strings.Contains(stdout.String(), want) {
		t.Errorf("stdout %q does not say %q", stdout, want)
	}
	b, err := os.ReadFile("gallery.html")
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)

	dataURI := func(ct string, data []byte) string {
		return "data:" + ct + ";base64," + base64.StdEncoding.EncodeToString(data)
	}
	for _, tc := range []struct{ name, want string }{
		{"viewport for phones", `<meta name="viewport" content="width=device-width, initial-scale=1">`},
		{"image size from its header", `width="32" height="18"`},
		{"MP4 video playable", `<video controls loop muted playsinline preload="metadata" src="data:video/mp4;base64,`},
		{"MP4 size from the detail", `width="640" height="360"`},
		{"edited file flagged", "changed on disk since apply"},
		{"missing file flagged", "file missing: run genform apply to download it again"},
		{"failed generation", "the generation failed on the service"},
		{"failed status", `<span class="tag failed">failed</span>`},
		{"prompt escaped", "a lighthouse &lt;script&gt;alert(1)&lt;/script&gt; &amp; &#34;quotes&#34;"},
		{"negative prompt", "not: blurry"},
		{"seed", "<dt>seed</dt><dd>42</dd>"},
		{"random seed", "<dt>seed</dt><dd>random</dd>"},
		{"creation id", "<code>c-image-0</code>"},
		{"status", "<dt>status</dt><dd>succeed</dd>"},
		{"short sha256", "sha256 <code>" + hero0.SHA256[:12] + "</code>"},
		{"kind and mode", `<span class="tag">video</span><span class="tag">image to video</span>`},
		{"request attributes", "<dt>aspect_ratio</dt><dd>16:9</dd>"},
		{"data URI in request shortened", "<dt>source_image</dt><dd>data:image/png;base64,… (4.9 KiB)</dd>"},
		{"path", "<code>generated/video/clip/0.mp4</code>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(page, tc.want) {
				t.Errorf("the page lacks %.200q", tc.want)
			}
		})
	}
	// What the browser sees: each element's source with the HTML
	// escaping undone.
	media := map[string]string{}
	for _, m := range regexp.MustCompile(`<(img|video) [^>]*src="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		media[html.UnescapeString(m[2])] = m[1]
	}
	for _, tc := range []struct{ name, tag, src string }{
		{"first image embedded", "img", dataURI("image/png", f.files["generated/image/hero/0.png"])},
		{"second image embedded", "img", dataURI("image/png", f.files["generated/image/hero/1.png"])},
		{"GIF video animates in an img", "img", dataURI("image/gif", f.files["generated/video/motion/0.gif"])},
		{"MP4 video in a video element", "video", dataURI("video/mp4", f.files["generated/video/clip/0.mp4"])},
		{"edited file shown as it is now", "img", dataURI("image/png", editedNow)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tag, ok := media[tc.src]; !ok || tag != tc.tag {
				t.Errorf("no <%s> shows %.80s… (found it in %q)", tc.tag, tc.src, tag)
			}
		})
	}
	if len(media) != 5 {
		t.Errorf("the page shows %d media elements, want 5 (the missing file has none)", len(media))
	}
	if strings.Contains(page, "<script") {
		t.Error("the page contains a <script> element")
	}
	// Self-contained: every src is a data: URI, nothing names another
	// origin.
	for _, m := range regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		if !strings.HasPrefix(m[1], "data:") {
			t.Errorf("the page loads %q; it should load nothing but data: URIs", m[1])
		}
	}
	// Cards are in address order, instances by number.
	order := []string{`id="image.broken"`, `id="image.edited"`, `id="image.gone"`, `id="image.hero"`, `id="video.clip"`, `id="video.motion"`}
	last := -1
	for _, o := range order {
		i := strings.Index(page, o)
		if i < last {
			t.Errorf("%s is out of order", o)
		}
		last = i
	}
}

// TestGalleryLink checks -link: files are referenced relative to where the
// page is written, not to the working directory, with awkward names
// escaped.
func TestGalleryLink(t *testing.T) {
	inDir(t, map[string]string{"main.gen.hcl": "image \"a\" {\n  prompt = \"x\"\n}\n"})
	f := &galleryFixture{t: t, files: map[string][]byte{}}
	f.resource(`image.a["x #1"]`, addrs.Text2Image, `{"prompt":"x"}`, "succeed",
		f.file("generated/image/a/x #1/0.png", "image/png", pngBytes(t, 4, 4)))
	f.save()
	galleryExit(t, ExitOK, "-link", "-out=review/pages/gallery.html")
	b, err := os.ReadFile("review/pages/gallery.html")
	if err != nil {
		t.Fatal(err)
	}
	want := `<img src="../../generated/image/a/x%20%231/0.png"`
	if !strings.Contains(string(b), want) {
		t.Errorf("the page lacks %s:\n%s", want, b)
	}
	// The link resolves from the page's own URL to the file.
	pageURL := &url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(mustGetwd(t), "review/pages/gallery.html"))}
	ref, _ := url.Parse("../../generated/image/a/x%20%231/0.png")
	if _, err := os.Stat(filepath.FromSlash(pageURL.ResolveReference(ref).Path)); err != nil {
		t.Errorf("the link does not resolve to the file: %v", err)
	}
	if strings.Contains(string(b), "data:image") {
		t.Error("-link embedded the file anyway")
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

// galleryExit runs gallery with args in the working directory, checks
// it exits with want, and returns what it printed.
func galleryExit(t *testing.T, want int, args ...string) (stdout, stderr string) {
	t.Helper()
	env, out, errOut := cmdEnv()
	if code := runGallery(env, args); code != want {
		t.Fatalf("gallery %v: exit %d, want %d; stderr:\n%s", args, code, want, errOut)
	}
	return out.String(), errOut.String()
}

// fromState is what read reads of the working directory's state, opened
// for the read alone.
func fromState[T any](t *testing.T, read func(*statefile.Store) (T, error)) T {
	t.Helper()
	st, err := boltstate.Open(".genform/state.db", statefile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := read(st)
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestGalleryRefusals(t *testing.T) {
	const cfg = "image \"a\" {\n  prompt = \"x\"\n}\n"
	t.Run("no state", func(t *testing.T) {
		inDir(t, map[string]string{"main.gen.hcl": cfg})
		_, stderr := galleryExit(t, ExitError)
		if want := "no state: run genform apply first"; !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
		if _, err := os.Stat(".genform/state.db"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("gallery created a state file: %v", err)
		}
		if _, err := os.Stat("gallery.html"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("gallery wrote a page without a state: %v", err)
		}
	})
	t.Run("too large to embed", func(t *testing.T) {
		inDir(t, map[string]string{"main.gen.hcl": cfg})
		f := &galleryFixture{t: t, files: map[string][]byte{}}
		f.resource("image.a", addrs.Text2Image, `{"prompt":"x"}`, "succeed",
			f.file("generated/image/a/0.png", "image/png", pngBytes(t, 64, 64)))
		f.save()
		old := gallery.EmbedLimit
		gallery.EmbedLimit = 100
		t.Cleanup(func() { gallery.EmbedLimit = old })
		_, stderr := galleryExit(t, ExitError)
		if want := "rerun with -link"; !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
		if _, err := os.Stat("gallery.html"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("gallery wrote a page past the limit: %v", err)
		}
		galleryExit(t, ExitOK, "-link")
	})
	t.Run("argument", func(t *testing.T) {
		inDir(t, map[string]string{"main.gen.hcl": cfg})
		env, _, stderr := cmdEnv()
		if code := runGallery(env, []string{"page.html"}); code != ExitError || !strings.Contains(stderr.String(), "-out=FILE") {
			t.Errorf("exit %d, stderr %q; want an error pointing at -out", code, stderr)
		}
	})
	t.Run("empty state", func(t *testing.T) {
		inDir(t, map[string]string{"main.gen.hcl": cfg})
		(&galleryFixture{t: t}).save()
		env, stdout, stderr := cmdEnv()
		if code := runGallery(env, nil); code != ExitOK {
			t.Fatalf("exit %d, stderr:\n%s", code, stderr)
		}
		b, _ := os.ReadFile("gallery.html")
		if !strings.Contains(string(b), "The state holds no outputs yet.") || !strings.Contains(stdout.String(), "0 resources, 0 outputs") {
			t.Errorf("empty gallery: stdout %q, page:\n%s", stdout, b)
		}
	})
}

// TestGalleryInChromium is the gallery as a person sees it: apply a small
// configuration against the simulator, write the gallery, open it in a real
// headless Chromium at a phone's width and at a desktop's, and check that
// it loads without a console error, fetches nothing from anywhere, that
// every image decoded, that nothing overflows the phone's screen, and that
// every address, prompt and creation id is on the page. The screenshots
// are written to the temporary directory for a person to look at.
//
// Chromium is found on PATH (Debian's chromium package; `make test`
// installs it). Without it the test fails under CI and is skipped
// elsewhere.
func TestGalleryInChromium(t *testing.T) {
	browser, sim := chromiumAndSimulator(t)
	dir := inDir(t, map[string]string{"main.gen.hcl": `
image "lighthouse" {
  prompt       = "a lighthouse on a cliff at dusk"
  image_number = 2
  aspect_ratio = "16:9"
  seed         = 42
}
image "poster" {
  prompt       = "a minimalist poster of a sailing boat"
  image_number = 1
  aspect_ratio = "3:4"
}
video "motion" {
  source_image = image.lighthouse.outputs[0].media_url
  prompt       = "slow dolly in towards the lighthouse"
  duration     = 2
}
video "intro" {
  prompt       = "title card reading ACME"
  aspect_ratio = "9:16"
  duration     = 2
}
`})
	env, _, stderr := cmdEnv("GENFORM_BASE_URL="+sim.URL, "GENFORM_TOKEN=gallery-token", "GENFORM_IN_AUTOMATION=1", "NO_COLOR=1")
	if code := runApply(env, []string{"-auto-approve"}); code != ExitOK {
		t.Fatalf("apply: exit %d, stderr:\n%s", code, stderr)
	}
	galleryExit(t, ExitOK)
	galleryExit(t, ExitOK, "-link", "-out=review/linked.html")
	snap := fromState(t, (*statefile.Store).Snapshot)
	var wantText []string
	outputs := 0
	for _, r := range snap.Resources {
		prompt, _ := config.FlattenRequest(r.Endpoint, r.Request)
		wantText = append(wantText, r.Addr.String(), r.CreationID, prompt["prompt"].(string))
		outputs += len(r.Outputs)
	}
	if outputs != 5 {
		t.Fatalf("the state holds %d outputs, want 5", outputs)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := startChromium(ctx, t, browser)

	for _, view := range []struct {
		name          string
		page          string
		width, height int
		mobile        bool
		shot          string
	}{
		{"phone", "gallery.html", 412, 915, true, "genform-gallery-phone.png"},
		{"desktop", "gallery.html", 1280, 900, false, "genform-gallery.png"},
		{"linked files", "review/linked.html", 412, 915, true, ""},
	} {
		t.Run(view.name, func(t *testing.T) {
			tab := b.newTab(ctx, t)
			tab.call(ctx, t, "Emulation.setDeviceMetricsOverride", map[string]any{
				"width": view.width, "height": view.height, "deviceScaleFactor": 1, "mobile": view.mobile,
			}, nil)
			pageURL := (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(dir, view.page))}).String()
			tab.open(ctx, t, pageURL)

			var got struct {
				Images, Decoded, Videos int
				Failed                  []string
				Text                    string
				ScrollWidth, InnerWidth int
				MinImageW               float64
			}
			tab.eval(ctx, t, `(async () => {
				const imgs = [...document.images];
				for (const i of imgs) i.loading = "eager";
				const failed = [];
				await Promise.all(imgs.map(i => i.decode().catch(e => failed.push(i.alt + ": " + e))));
				return {
					images: imgs.length,
					decoded: imgs.filter(i => i.complete && i.naturalWidth > 0).length,
					videos: document.querySelectorAll("video").length,
					failed,
					text: document.body.innerText,
					scrollWidth: document.documentElement.scrollWidth,
					innerWidth: window.innerWidth,
					minImageW: Math.min(...imgs.map(i => i.getBoundingClientRect().width)),
				};
			})()`, &got)
			if got.Images != outputs || got.Decoded != outputs || len(got.Failed) > 0 {
				t.Errorf("%d of %d images decoded, want all %d; failures: %q", got.Decoded, got.Images, outputs, got.Failed)
			}
			for _, s := range wantText {
				if !strings.Contains(got.Text, s) {
					t.Errorf("the page does not show %q", s)
				}
			}
			if got.ScrollWidth > got.InnerWidth {
				t.Errorf("the page is %dpx wide on a %dpx screen: it scrolls sideways", got.ScrollWidth, got.InnerWidth)
			}
			if got.MinImageW < 100 {
				t.Errorf("an image is shown %.0fpx wide on a %dpx screen: too small to see", got.MinImageW, view.width)
			}
			tab.checkQuiet(t, pageURL, view.page != "gallery.html")
			if view.shot != "" {
				png := tab.screenshot(ctx, t)
				cfg, err := pngConfig(png)
				if err != nil || cfg.Width != view.width {
					t.Errorf("screenshot: %v, width %d, want %d", err, cfg.Width, view.width)
				}
				path := filepath.Join(os.TempDir(), view.shot)
				if err := os.WriteFile(path, png, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("screenshot (%d×%d): %s", cfg.Width, cfg.Height, path)
			}
		})
	}
}

// chromiumAndSimulator is what the browser tests need: the path of a
// Chromium (the test is skipped without one, and fails in CI), and a
// simulator to apply against.
func chromiumAndSimulator(t *testing.T) (string, *simulator.Instance) {
	t.Helper()
	browser := findChromium()
	if browser == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed; run 'make browser' (apt-get install chromium)")
		}
		t.Skip("chromium is not installed; run 'make browser' to run this test")
	}
	sim, err := simulator.Listen("127.0.0.1:0", simulator.Options{Latency: 50 * time.Millisecond, Token: "gallery-token"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	return browser, sim
}

func pngConfig(b []byte) (image.Config, error) { return png.DecodeConfig(bytes.NewReader(b)) }

// findChromium returns the path of a Chromium-family browser, or "".
func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// cdpBrowser is a headless Chromium driven over the DevTools protocol on
// a pipe (--remote-debugging-pipe: NUL-separated JSON messages on file
// descriptors 3 and 4), which needs no port and no WebSocket library.
type cdpBrowser struct {
	w      io.Writer
	mu     sync.Mutex
	nextID int
	calls  map[int]chan cdpMessage
	events []cdpMessage
	notify chan struct{} // closed and replaced on every event
	stderr *lockedBuffer
}

type cdpMessage struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// startChromium starts the browser with the flags known to work on a
// machine without network or display, as root, and stops it when the test
// ends.
func startChromium(ctx context.Context, t *testing.T, path string) *cdpBrowser {
	t.Helper()
	cmdIn, toBrowser, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fromBrowser, cmdOut, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-extensions", "--mute-audio", "--hide-scrollbars",
		"--user-data-dir="+t.TempDir(), "--remote-debugging-pipe", "about:blank")
	b := &cdpBrowser{w: toBrowser, calls: map[int]chan cdpMessage{}, notify: make(chan struct{}), stderr: &lockedBuffer{}}
	cmd.Stderr = b.stderr
	cmd.ExtraFiles = []*os.File{cmdIn, cmdOut} // fds 3 and 4
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	cmdIn.Close()
	cmdOut.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.read(fromBrowser)
	}()
	t.Cleanup(func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		b.send(closeCtx, "", "Browser.close", nil) // the answer may not come: the browser is gone
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case <-exited:
		case <-closeCtx.Done():
			cmd.Process.Kill()
			<-exited
		}
		toBrowser.Close()
		fromBrowser.Close()
		<-done
		if t.Failed() {
			t.Logf("chromium stderr:\n%s", b.stderr)
		}
	})
	return b
}

func (b *cdpBrowser) read(r io.Reader) {
	br := bufio.NewReader(r)
	for {
		raw, err := br.ReadBytes(0)
		if err != nil {
			return
		}
		var m cdpMessage
		if json.Unmarshal(raw[:len(raw)-1], &m) != nil {
			continue
		}
		b.mu.Lock()
		if m.ID != 0 {
			if ch, ok := b.calls[m.ID]; ok {
				delete(b.calls, m.ID)
				ch <- m
			}
		} else {
			b.events = append(b.events, m)
			close(b.notify)
			b.notify = make(chan struct{})
		}
		b.mu.Unlock()
	}
}

// send calls a method and waits for its answer.
func (b *cdpBrowser) send(ctx context.Context, session, method string, params any) (json.RawMessage, error) {
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	ch := make(chan cdpMessage, 1)
	b.calls[id] = ch
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	data, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	if _, err := b.w.Write(append(data, 0)); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		return m.Result, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// cdpTab is one page target with its own session.
type cdpTab struct {
	b       *cdpBrowser
	session string
	since   int // index of the first event that belongs to the page opened last
}

func (b *cdpBrowser) newTab(ctx context.Context, t *testing.T) *cdpTab {
	t.Helper()
	var target struct{ TargetID string }
	res, err := b.send(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"})
	if err == nil {
		err = json.Unmarshal(res, &target)
	}
	if err != nil {
		t.Fatal(err)
	}
	var att struct{ SessionID string }
	res, err = b.send(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true})
	if err == nil {
		err = json.Unmarshal(res, &att)
	}
	if err != nil {
		t.Fatal(err)
	}
	tab := &cdpTab{b: b, session: att.SessionID}
	for _, domain := range []string{"Page", "Runtime", "Log", "Network"} {
		tab.call(ctx, t, domain+".enable", nil, nil)
	}
	return tab
}

func (tab *cdpTab) call(ctx context.Context, t *testing.T, method string, params, result any) {
	t.Helper()
	res, err := tab.b.send(ctx, tab.session, method, params)
	if err != nil {
		t.Fatal(err)
	}
	if result != nil {
		if err := json.Unmarshal(res, result); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
	}
}

// open navigates to url and waits for its load event: every embedded
// image has been fetched by then.
func (tab *cdpTab) open(ctx context.Context, t *testing.T, url string) {
	t.Helper()
	tab.b.mu.Lock()
	tab.since = len(tab.b.events)
	tab.b.mu.Unlock()
	var nav struct{ ErrorText string }
	tab.call(ctx, t, "Page.navigate", map[string]any{"url": url}, &nav)
	if nav.ErrorText != "" {
		t.Fatalf("opening %s: %s", url, nav.ErrorText)
	}
	for i := tab.since; ; {
		tab.b.mu.Lock()
		events, notify := tab.b.events, tab.b.notify
		tab.b.mu.Unlock()
		for ; i < len(events); i++ {
			if events[i].SessionID == tab.session && events[i].Method == "Page.loadEventFired" {
				return
			}
		}
		select {
		case <-notify:
		case <-ctx.Done():
			t.Fatalf("opening %s: no load event: %v", url, ctx.Err())
		}
	}
}

func (tab *cdpTab) eval(ctx context.Context, t *testing.T, expr string, into any) {
	t.Helper()
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	tab.call(ctx, t, "Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true}, &res)
	if e := res.ExceptionDetails; e != nil {
		t.Fatalf("evaluating the check script: %s %s", e.Text, e.Exception.Description)
	}
	if err := json.Unmarshal(res.Result.Value, into); err != nil {
		t.Fatalf("the check script returned %s: %v", res.Result.Value, err)
	}
}

// checkQuiet fails the test for every console message, uncaught
// exception, browser log error and failed load of the page, and for every
// request to anything but the page itself, data: URIs and (with
// allowFiles, for -link pages) local files.
func (tab *cdpTab) checkQuiet(t *testing.T, pageURL string, allowFiles bool) {
	t.Helper()
	tab.b.mu.Lock()
	events := tab.b.events[tab.since:]
	tab.b.mu.Unlock()
	requests := 0
	for _, ev := range events {
		if ev.SessionID != tab.session {
			continue
		}
		var p struct {
			Type             string                `json:"type"`
			Args             []struct{ Value any } `json:"args"`
			ExceptionDetails struct {
				Text string `json:"text"`
			} `json:"exceptionDetails"`
			Entry struct {
				Level, Text, URL string
			} `json:"entry"`
			Request struct {
				URL string `json:"url"`
			} `json:"request"`
			ErrorText string `json:"errorText"`
		}
		json.Unmarshal(ev.Params, &p)
		switch ev.Method {
		case "Runtime.consoleAPICalled":
			t.Errorf("console.%s: %v", p.Type, p.Args)
		case "Runtime.exceptionThrown":
			t.Errorf("uncaught exception: %s", p.ExceptionDetails.Text)
		case "Log.entryAdded":
			if p.Entry.Level == "error" || p.Entry.Level == "warning" {
				t.Errorf("browser log %s: %s %s", p.Entry.Level, p.Entry.Text, p.Entry.URL)
			}
		case "Network.loadingFailed":
			t.Errorf("a load failed: %s", p.ErrorText)
		case "Network.requestWillBeSent":
			requests++
			u := p.Request.URL
			switch {
			case u == pageURL, strings.HasPrefix(u, "data:"):
			case allowFiles && strings.HasPrefix(u, "file://"):
			default:
				t.Errorf("the page loads %.120s; it must load nothing from elsewhere", u)
			}
		}
	}
	if requests == 0 {
		t.Error("the browser reported no request at all: the network events were not seen")
	}
}

// screenshot captures the whole page, not just the viewport.
func (tab *cdpTab) screenshot(ctx context.Context, t *testing.T) []byte {
	t.Helper()
	var m struct {
		CSSContentSize struct{ Width, Height float64 } `json:"cssContentSize"`
	}
	tab.call(ctx, t, "Page.getLayoutMetrics", nil, &m)
	var shot struct{ Data string }
	tab.call(ctx, t, "Page.captureScreenshot", map[string]any{
		"format": "png", "captureBeyondViewport": true,
		"clip": map[string]any{"x": 0, "y": 0, "width": m.CSSContentSize.Width, "height": m.CSSContentSize.Height, "scale": 1},
	}, &shot)
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		t.Fatal(err)
	}
	return png
}

// TestGalleryBeforeAfterInChromium: after an apply that replaces one
// image (its prompt changed) and keeps another, the page shows the
// replaced image's previous outputs, taken from the cache, beside the new
// ones, each labelled with its prompt; -changed keeps only that resource;
// -since=SERIAL moves the comparison's start. A screenshot is written to
// $TMPDIR/genform-gallery-before-after.png.
func TestGalleryBeforeAfterInChromium(t *testing.T) {
	browser, sim := chromiumAndSimulator(t)
	config := func(prompt string) string {
		return fmt.Sprintf(`
image "hero" {
  prompt       = %q
  image_number = 2
}
image "poster" {
  prompt       = "a minimalist poster of a sailing boat"
  image_number = 1
}
`, prompt)
	}
	dir := inDir(t, map[string]string{"main.gen.hcl": config("a lighthouse at dusk")})
	apply := func() {
		t.Helper()
		env, _, stderr := cmdEnv("GENFORM_BASE_URL="+sim.URL, "GENFORM_TOKEN=gallery-token", "GENFORM_IN_AUTOMATION=1", "NO_COLOR=1")
		if code := runApply(env, []string{"-auto-approve"}); code != ExitOK {
			t.Fatalf("apply: exit %d, stderr:\n%s", code, stderr)
		}
	}
	apply()
	before := map[string]string{} // sha256 of each first output of hero
	for _, p := range []string{"generated/image/hero/0.png", "generated/image/hero/1.png"} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		before[p] = hex.EncodeToString(sum[:])
	}
	if err := os.WriteFile("main.gen.hcl", []byte(config("a lighthouse at dawn")), 0o644); err != nil {
		t.Fatal(err)
	}
	apply()

	gallery := func(args ...string) string {
		t.Helper()
		out, _ := galleryExit(t, ExitOK, args...)
		return out
	}
	out := gallery()
	if !strings.Contains(out, "1 resource generated anew since serial") {
		t.Errorf("gallery says:\n%s", out)
	}
	page, err := os.ReadFile("gallery.html")
	if err != nil {
		t.Fatal(err)
	}
	// The previous files are embedded from the cache, byte for byte.
	embedded := map[string]bool{}
	for _, m := range regexp.MustCompile(`src="data:[^;"]+;base64,([^"]+)"`).FindAllSubmatch(page, -1) {
		b, err := base64.StdEncoding.DecodeString(html.UnescapeString(string(m[1])))
		if err != nil {
			t.Fatalf("an embedded file does not decode: %v", err)
		}
		sum := sha256.Sum256(b)
		embedded[hex.EncodeToString(sum[:])] = true
	}
	for p, sum := range before {
		if _, err := os.Stat(filepath.Join(".genform", "cache", "sha256", sum[:2], sum)); err != nil {
			t.Errorf("%s was not kept in the cache: %v", p, err)
		}
		if !embedded[sum] {
			t.Errorf("the page does not embed the previous %s", p)
		}
	}
	if len(embedded) != 5 {
		t.Errorf("the page embeds %d files, want 5 (two before, two after, the poster)", len(embedded))
	}
	gallery("-changed", "-out=changed.html")
	changed, _ := os.ReadFile("changed.html")
	if bytes.Contains(changed, []byte(`id="image.poster"`)) || !bytes.Contains(changed, []byte(`id="image.hero"`)) {
		t.Errorf("-changed must keep image.hero alone")
	}
	// From the serial the state has now, nothing was generated anew.
	meta := fromState(t, (*statefile.Store).Meta)
	if out := gallery("-changed", fmt.Sprintf("-since=%d", meta.Serial), "-out=none.html"); !strings.Contains(out, "0 resources generated anew") {
		t.Errorf("gallery -since=%d says:\n%s", meta.Serial, out)
	}
	env, _, stderr := cmdEnv()
	if code := runGallery(env, []string{fmt.Sprintf("-since=%d", meta.Serial+1)}); code != ExitError || !strings.Contains(stderr.String(), "past the state's serial") {
		t.Errorf("-since past the serial: exit %d, %s", code, stderr)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := startChromium(ctx, t, browser)
	tab := b.newTab(ctx, t)
	tab.call(ctx, t, "Emulation.setDeviceMetricsOverride", map[string]any{
		"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": false,
	}, nil)
	pageURL := (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(dir, "gallery.html"))}).String()
	tab.open(ctx, t, pageURL)
	var got struct {
		Before, After []string
		Decoded       int
		Images        int
	}
	tab.eval(ctx, t, `(async () => {
		const imgs = [...document.images];
		await Promise.all(imgs.map(i => i.decode().catch(() => {})));
		const labels = sel => [...document.querySelectorAll(sel)].map(e => e.innerText);
		return {
			before: labels("#image\\.hero .side.before .label"),
			after: labels("#image\\.hero .side.after .label"),
			decoded: imgs.filter(i => i.complete && i.naturalWidth > 0).length,
			images: imgs.length,
		};
	})()`, &got)
	if len(got.Before) != 1 || !strings.Contains(got.Before[0], "a lighthouse at dusk") ||
		len(got.After) != 1 || !strings.Contains(got.After[0], "a lighthouse at dawn") {
		t.Errorf("labels: before %q, after %q", got.Before, got.After)
	}
	// Two before, two after, one poster: every one decoded.
	if got.Images != 5 || got.Decoded != 5 {
		t.Errorf("%d of %d images decoded, want 5 of 5", got.Decoded, got.Images)
	}
	tab.checkQuiet(t, pageURL, false)
	png := tab.screenshot(ctx, t)
	path := filepath.Join(os.TempDir(), "genform-gallery-before-after.png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}
