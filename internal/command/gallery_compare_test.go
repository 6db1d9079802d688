package command

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/blobstore/s3test"
)

// TestGalleryComparisonInChromium is gallery -base's page as a reviewer
// opens it: default applies two images, pr-1 changes one's prompt and
// applies, and the page (gallery -base=default in pr-1) is opened in
// headless Chromium: the changed image alone, before and after, each
// picture a thumbnail of at most 512 pixels that the browser fetched from
// the object store (presigned links to a real S3 server) and decoded,
// each linking to its file, the prompt's change marked word by word. A
// screenshot is written to $TMPDIR/genform-gallery-comparison.png.
func TestGalleryComparisonInChromium(t *testing.T) {
	browser, sim := chromiumAndSimulator(t)
	srv := s3test.Start(t)
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	config := func(prompt string) string {
		return fmt.Sprintf(`
genform {
  store "s3" {
    path_style = true
    presign    = "1h"
  }
}

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
	environ := append(srv.Env(), "GENFORM_BASE_URL="+sim.URL, "GENFORM_TOKEN=gallery-token", "GENFORM_IN_AUTOMATION=1", "NO_COLOR=1")
	apply := func(extra ...string) {
		t.Helper()
		env, _, stderr := cmdEnv(append(environ, extra...)...)
		if code := runApply(env, []string{"-auto-approve"}); code != ExitOK {
			t.Fatalf("apply: exit %d, stderr:\n%s", code, stderr)
		}
	}
	apply()
	if err := os.WriteFile("main.gen.hcl", []byte(config("a lighthouse at dawn")), 0o644); err != nil {
		t.Fatal(err)
	}
	apply("GENFORM_WORKSPACE=pr-1")
	env, stdout, stderr := cmdEnv(append(environ, "GENFORM_WORKSPACE=pr-1")...)
	if code := runGallery(env, []string{"-base=default", "-out=compare.html"}); code != ExitOK {
		t.Fatalf("gallery -base: exit %d, stderr:\n%s", code, stderr)
	}
	if want := "Gallery written to compare.html: pr-1 against default, 1 instance differs"; !strings.Contains(stdout.String(), want) {
		t.Errorf("gallery says %q, want %q", stdout, want)
	}
	page, err := os.ReadFile("compare.html")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(page), "image.poster") {
		t.Error("the page shows image.poster, which pr-1 did not change")
	}
	if n := len(regexp.MustCompile(`<img src="`+regexp.QuoteMeta(srv.Endpoint)).FindAll(page, -1)); n != 4 {
		t.Errorf("the page has %d pictures from the store, want 4 (two outputs, before and after)", n)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := startChromium(ctx, t, browser)
	tab := b.newTab(ctx, t)
	tab.call(ctx, t, "Emulation.setDeviceMetricsOverride", map[string]any{
		"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": false,
	}, nil)
	pageURL := (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(dir, "compare.html"))}).String()
	tab.open(ctx, t, pageURL)
	var got struct {
		Before, After []string
		Images        []struct {
			Src, Href string
			W, H      int
			OK        bool
		}
		Removed, Added []string
	}
	tab.eval(ctx, t, `(async () => {
		const imgs = [...document.images];
		imgs.forEach(i => i.loading = "eager");
		await Promise.all(imgs.map(i => i.decode().catch(() => {})));
		const text = sel => [...document.querySelectorAll(sel)].map(e => e.innerText);
		return {
			before: text("#image\\.hero .side.before .label"),
			after: text("#image\\.hero .side.after .label"),
			images: imgs.map(i => ({src: i.currentSrc, href: i.closest("a") ? i.closest("a").href : "",
				w: i.naturalWidth, h: i.naturalHeight, ok: i.complete && i.naturalWidth > 0})),
			removed: text("#image\\.hero .prompt del"),
			added: text("#image\\.hero .prompt ins"),
		};
	})()`, &got)
	if len(got.Before) != 1 || !strings.Contains(got.Before[0], "dusk") || len(got.After) != 1 || !strings.Contains(got.After[0], "dawn") {
		t.Errorf("labels: before %q, after %q", got.Before, got.After)
	}
	if strings.Join(got.Removed, " ") != "dusk" || strings.Join(got.Added, " ") != "dawn" {
		t.Errorf("the prompt's diff marks %q removed and %q added, want dusk and dawn", got.Removed, got.Added)
	}
	if len(got.Images) != 4 {
		t.Fatalf("%d images on the page, want 4", len(got.Images))
	}
	for _, img := range got.Images {
		if !img.OK || max(img.W, img.H) != 512 || !strings.HasPrefix(img.Src, srv.Endpoint+"/") || !strings.Contains(img.Src, "X-Amz-Signature=") ||
			!strings.HasPrefix(img.Href, srv.Endpoint+"/") {
			t.Errorf("picture %+v: want a decoded thumbnail of 512 pixels from the store, linking to its file there", img)
		}
	}
	// Nothing failed to load, and the browser said nothing.
	tab.b.mu.Lock()
	events := tab.b.events[tab.since:]
	tab.b.mu.Unlock()
	for _, ev := range events {
		switch ev.Method {
		case "Network.loadingFailed", "Runtime.exceptionThrown", "Runtime.consoleAPICalled":
			t.Errorf("%s: %s", ev.Method, ev.Params)
		}
	}
	png := tab.screenshot(ctx, t)
	path := filepath.Join(os.TempDir(), "genform-gallery-comparison.png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}
