package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/blobstore/s3test"
	"github.com/genform/genform/internal/simulator"
)

// The pull request's comment of preview workspaces, through the real
// binary: a real S3 server (versitygw), the reference simulator, the
// default workspace applied, a pull request's workspace that changes one
// prompt, and genform gallery -base=default -format=markdown in it.

// comparisonConfig is three images, hero's prompt given, and the store
// block's links (presign = "168h", or public_url = ...).
func comparisonConfig(prompt, links string) string {
	return fmt.Sprintf(`genform {
  store "s3" {
    path_style = true
    %s
  }
}

service {
  prices = { image = 0.04 }
}

image "hero" {
  prompt       = %q
  image_number = 1
}

image "poster" {
  prompt       = "a minimalist poster of a sailing boat"
  image_number = 1
}

image "tiles" {
  prompt       = "three ceramic tiles"
  image_number = 1
}
`, links, prompt)
}

// comparisonFixture is a working copy whose default workspace applied the
// three images and whose pr-1 workspace changed hero's prompt and applied.
type comparisonFixture struct {
	srv        *s3test.Server
	dir        string
	env, prEnv []string
	// before and after are hero's output bytes in default and in pr-1.
	before, after []byte
}

func newComparisonFixture(t *testing.T, links string) *comparisonFixture {
	t.Helper()
	return newComparisonFixtureOn(t, s3test.Start(t), links)
}

// newComparisonFixtureOn is newComparisonFixture with the store srv.
func newComparisonFixtureOn(t *testing.T, srv *s3test.Server, links string) *comparisonFixture {
	t.Helper()
	sim := startSim(t, simulator.Options{Token: fakeToken})
	f := &comparisonFixture{srv: srv, dir: t.TempDir()}
	f.env = serviceEnv(sim.URL, fakeToken, f.srv.Env()...)
	f.prEnv = append(slices.Clone(f.env), "GENFORM_WORKSPACE=pr-1")
	write := func(prompt string) {
		if err := os.WriteFile(filepath.Join(f.dir, "main.gen.hcl"), []byte(comparisonConfig(prompt, links)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hero := filepath.Join(f.dir, "generated", "image", "hero", "0.png")
	write("a lighthouse at dusk")
	if r := genform(t, f.dir, f.env, "apply", "-auto-approve"); r.code != 0 || !strings.Contains(r.stdout, "3 generated") {
		t.Fatalf("the default workspace's apply:\n%s", r)
	}
	f.before = readFile(t, hero)
	write("a lighthouse at dawn")
	r := genform(t, f.dir, f.prEnv, "apply", "-auto-approve")
	if r.code != 0 || !strings.Contains(r.stdout, "1 generated") || !strings.Contains(r.stdout, "2 restored") {
		t.Fatalf("pr-1's apply must generate hero and restore the other two:\n%s", r)
	}
	f.after = readFile(t, hero)
	if bytes.Equal(f.before, f.after) {
		t.Fatal("hero's new prompt made the same bytes")
	}
	return f
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var (
	mdImage = regexp.MustCompile(`\[!\[([^\]]*)\]\(([^)\s]+)\)\]\(([^)\s]+)\)`)
	anyURL  = regexp.MustCompile(`https?://[^\s)>"]*[^\s)>",.:]`)
)

// getURL GETs u with a plain client and no credentials, as a reviewer's
// browser does.
func getURL(t *testing.T, u string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(strings.NewReplacer("%28", "(", "%29", ")").Replace(u))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// checkComment checks the comment shows hero alone, with exactly two
// pictures, before and after: thumbnails of at most 512 pixels, as PNG,
// that a client without credentials fetches, each linking to its output.
func (f *comparisonFixture) checkComment(t *testing.T, comment, urlPrefix string) {
	t.Helper()
	for _, want := range []string{
		"<!-- genform:gallery -->",
		"**1 instance differs from `default`: 0 new, 1 changed, 0 deleted.**",
		"#### `image.hero` · changed · 0.04 USD",
		"- **prompt:** a lighthouse at ~~dusk~~ **dawn**",
		"- **cost:** 0.04 USD",
		"- **model:** `/v1/jobs/text2image`",
		"- **seed:** random",
	} {
		if !strings.Contains(comment, want) {
			t.Errorf("the comment lacks %q:\n%s", want, comment)
		}
	}
	for _, not := range []string{"image.poster", "image.tiles"} {
		if strings.Contains(comment, not) {
			t.Errorf("the comment shows %s, which pr-1 did not change:\n%s", not, comment)
		}
	}
	pics := mdImage.FindAllStringSubmatch(comment, -1)
	if len(pics) != 2 {
		t.Fatalf("the comment has %d pictures, want 2 (before and after):\n%s", len(pics), comment)
	}
	// Every URL of the comment is a picture's or its file's (or, with
	// public_url, that base, which the comment names).
	urls := slices.DeleteFunc(anyURL.FindAllString(comment, -1), func(u string) bool { return u+"/" == urlPrefix })
	if len(urls) != 4 {
		t.Errorf("the comment has %d URLs, want 4 (two thumbnails, two files): %q", len(urls), urls)
	}
	for i, want := range [][]byte{f.before, f.after} {
		alt, thumb, full := pics[i][1], pics[i][2], pics[i][3]
		if label := []string{"before", "after"}[i]; !strings.Contains(alt, "image.hero "+label+" #0") {
			t.Errorf("picture %d is %q, want hero's %s", i, alt, label)
		}
		for _, u := range []string{thumb, full} {
			if !strings.HasPrefix(u, urlPrefix) {
				t.Errorf("%s is not under %s", u, urlPrefix)
			}
		}
		code, b := getURL(t, thumb)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", thumb, code, b)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("the thumbnail is not a PNG: %v", err)
		}
		src, _ := png.DecodeConfig(bytes.NewReader(want))
		if max(cfg.Width, cfg.Height) != 512 || cfg.Width*src.Height/src.Width != cfg.Height {
			t.Errorf("the thumbnail is %d×%d of a %d×%d output: want 512 on its long side, the same shape", cfg.Width, cfg.Height, src.Width, src.Height)
		}
		code, b = getURL(t, full)
		if code != http.StatusOK || sha(b) != sha(want) {
			t.Errorf("GET %s: %d, %d bytes; want hero's %s output", full, code, len(b), []string{"before", "after"}[i])
		}
	}
}

// thumbnails lists the store's thumbnail objects with their files'
// modification times.
func (f *comparisonFixture) thumbnails(t *testing.T) map[string]time.Time {
	t.Helper()
	keys, err := f.srv.Keys()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]time.Time{}
	for _, k := range keys {
		if strings.Contains(k, "thumbnail/") {
			fi, err := os.Stat(f.srv.ObjectPath(k))
			if err != nil {
				t.Fatal(err)
			}
			out[k] = fi.ModTime()
		}
	}
	return out
}

// TestGalleryComparisonComment is the contract's case with presigned
// links: only hero, exactly its two pictures, fetched without
// credentials, PNG thumbnails of at most 512 pixels; a second comment
// makes no thumbnail again; the links of a page (-out=...html) are the
// same pictures; a missing base, the selected workspace as base, and a
// store without presign are refused saying what to do.
func TestGalleryComparisonComment(t *testing.T) {
	parallelSlow(t, "applies twice and writes comments through a real S3 server")
	f := newComparisonFixture(t, `presign = "168h"`)
	r := genform(t, f.dir, f.prEnv, "gallery", "-base=default", "-format=markdown")
	if r.code != 0 {
		t.Fatalf("gallery:\n%s", r)
	}
	f.checkComment(t, r.stdout, f.srv.Endpoint+"/"+f.srv.Bucket+"/")
	if !strings.Contains(r.stdout, "X-Amz-Expires=604800") || !strings.Contains(r.stdout, "anyone who has this comment can open them until") &&
		!strings.Contains(r.stdout, "anyone who has them can open them until") {
		t.Errorf("the links are not presigned for 7 days, or the comment does not say who can open them:\n%s", r.stdout)
	}
	if r.stderr != "" {
		t.Errorf("gallery warned:\n%s", r.stderr)
	}
	thumbs := f.thumbnails(t)
	if len(thumbs) != 2 {
		t.Fatalf("the store holds %d thumbnails, want 2: %v", len(thumbs), thumbs)
	}

	// A second comment finds the thumbnails in the store and makes none.
	time.Sleep(20 * time.Millisecond)
	r = genform(t, f.dir, f.prEnv, "gallery", "-base=default", "-format=markdown", "-out=comment.md")
	if r.code != 0 || !strings.Contains(r.stdout, "Comment written to comment.md: 1 instance differs from default.") {
		t.Fatalf("gallery -out:\n%s", r)
	}
	f.checkComment(t, string(readFile(t, filepath.Join(f.dir, "comment.md"))), f.srv.Endpoint+"/"+f.srv.Bucket+"/")
	if again := f.thumbnails(t); len(again) != 2 || !mapsEqual(again, thumbs) {
		t.Errorf("the second comment made thumbnails again: %v, then %v", thumbs, again)
	}

	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"a base that does not exist", f.prEnv, []string{"-base=pr-9"}, `workspace "pr-9" does not exist: genform workspace list shows those that do`},
		{"the selected workspace as base", f.prEnv, []string{"-base=pr-1"}, "-base=pr-1 is the selected workspace"},
		{"default against itself", f.env, []string{"-base=default"}, "-base=default is the selected workspace"},
		{"markdown without a base", f.prEnv, []string{}, "name the one it merges into with -base=NAME"},
		{"a base that is no workspace's name", f.prEnv, []string{"-base=../x"}, "cannot name a workspace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := genform(t, f.dir, tc.env, append([]string{"gallery", "-format=markdown"}, tc.args...)...)
			if r.code != 1 || !strings.Contains(r.stderr, tc.want) || r.stdout != "" {
				t.Errorf("want exit 1 saying %q, and no comment:\n%s", tc.want, r)
			}
		})
	}
	t.Run("a store without presign or public_url", func(t *testing.T) {
		cfg := readFile(t, filepath.Join(f.dir, "main.gen.hcl"))
		other := t.TempDir()
		os.WriteFile(filepath.Join(other, "main.gen.hcl"), bytes.Replace(cfg, []byte(`presign = "168h"`), nil, 1), 0o644)
		os.CopyFS(filepath.Join(other, ".genform"), os.DirFS(filepath.Join(f.dir, ".genform")))
		r := genform(t, other, f.prEnv, "gallery", "-base=default", "-format=markdown")
		if r.code != 1 || !strings.Contains(r.stderr, "sets neither presign nor public_url") || !strings.Contains(r.stderr, `presign = "168h"`) {
			t.Errorf("want exit 1 saying what to set:\n%s", r)
		}
		r = genform(t, other, withoutEnv(f.prEnv, "GENFORM_STORE_BUCKET"), "gallery", "-base=default", "-format=markdown")
		if r.code != 1 || !strings.Contains(r.stderr, "Missing store bucket") {
			t.Errorf("want the store block refused for its bucket:\n%s", r)
		}
	})
}

func mapsEqual[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestGalleryComparisonPublic is the comment with public_url: the links
// are under it, carry no signature, and open without credentials from
// the bucket made public (versitygw serves anonymous reads under a bucket
// policy, as Amazon S3 does).
func TestGalleryComparisonPublic(t *testing.T) {
	parallelSlow(t, "applies twice and writes a comment through a real S3 server")
	srv := s3test.Start(t)
	base := srv.Endpoint + "/" + srv.Bucket
	f := newComparisonFixtureOn(t, srv, fmt.Sprintf("public_url = %q", base+"/"))
	if err := srv.AllowPublicRead(); err != nil {
		t.Fatal(err)
	}
	r := genform(t, f.dir, f.prEnv, "gallery", "-base=default", "-format=markdown")
	if r.code != 0 {
		t.Fatalf("gallery:\n%s", r)
	}
	f.checkComment(t, r.stdout, base+"/")
	if strings.Contains(r.stdout, "X-Amz-") {
		t.Errorf("public links carry a signature:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "anyone can open these links") {
		t.Errorf("the comment does not say the links are public:\n%s", r.stdout)
	}
}
