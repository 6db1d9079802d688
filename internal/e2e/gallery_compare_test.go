package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/blobstore/s3test"
	"github.com/genform/genform/internal/simulator"
	"github.com/genform/genform/statefile"
	"github.com/genform/genform/statefile/boltstate"
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
	t.Run("outputs the store lacks", func(t *testing.T) {
		key := func(b []byte) string { s := sha(b); return "sha256/" + s[:2] + "/" + s }
		// pr-1's file is put back from the working copy.
		if err := os.Remove(f.srv.ObjectPath(key(f.after))); err != nil {
			t.Fatal(err)
		}
		r := genform(t, f.dir, f.prEnv, "gallery", "-base=default", "-format=markdown")
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("gallery:\n%s", r)
		}
		f.checkComment(t, r.stdout, f.srv.Endpoint+"/"+f.srv.Bucket+"/")
		// default's file is not on this machine (pr-1's apply wrote its
		// own in its place, and kept default's in the local cache, which
		// is cleared here as on a fresh runner): gone from the store, it
		// is named.
		if err := os.Remove(f.srv.ObjectPath(key(f.before))); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(f.dir, ".genform", "cache", key(f.before))); err != nil {
			t.Fatal(err)
		}
		r = genform(t, f.dir, f.prEnv, "gallery", "-base=default", "-format=markdown")
		want := "not in the object store, and not on this machine: push it from a working copy that has it (genform push)"
		if r.code != 0 || !strings.Contains(r.stdout, "| **before** | _not shown_ |") || !strings.Contains(r.stdout, "> before #0: "+want) ||
			!strings.Contains(r.stderr, "Warning: image.hero output 0 (sha256 "+sha(f.before)[:12]+"): "+want) {
			t.Errorf("want the missing file named in the comment and warned of:\n%s", r)
		}
		if pics := mdImage.FindAllStringSubmatch(r.stdout, -1); len(pics) != 1 || !strings.Contains(pics[0][1], "after") {
			t.Errorf("want the after picture alone: %q", pics)
		}
	})
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

// TestGalleryComparisonVideo: a video's thumbnail is its first frame,
// taken by ffmpeg on the PATH; without ffmpeg the comment says so, links
// the video itself, and warns, and nothing else is lost. Its price is
// its seconds at the configured price per second.
func TestGalleryComparisonVideo(t *testing.T) {
	parallelSlow(t, "makes videos with ffmpeg and writes comments through a real S3 server")
	ff, err := exec.LookPath("ffmpeg")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("ffmpeg is not installed; run 'make ffmpeg' (apt-get install ffmpeg)")
		}
		t.Skip("ffmpeg is not installed; run 'make ffmpeg' to run this test")
	}
	srv := s3test.Start(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.gen.hcl"), []byte(`genform {
  store "s3" {
    path_style = true
    presign    = "24h"
  }
}

service {
  prices = { image = 0.04, video_second = 0.1 }
}

video "clip" {
  prompt   = "waves at night"
  duration = 2
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	// default's clip is red, pr-1's blue: H.264 files ffmpeg makes, of
	// the same size, recorded at the same path and time, so that only
	// their bytes tell the working copy's file from the base's.
	clips := map[string][]byte{}
	for ws, colour := range map[string]string{"default": "red", "pr-1": "blue"} {
		p := filepath.Join(t.TempDir(), "clip.mp4")
		out, err := exec.Command(ff, "-v", "error", "-f", "lavfi", "-i", "color=c="+colour+":s=1280x720:d=1", "-c:v", "libx264", "-pix_fmt", "yuv420p", p).CombinedOutput()
		if err != nil {
			t.Fatalf("making the video: %v\n%s", err, out)
		}
		clips[ws] = readFile(t, p)
	}
	if len(clips["default"]) != len(clips["pr-1"]) {
		t.Fatalf("the two videos are %d and %d bytes: this case needs files of one size", len(clips["default"]), len(clips["pr-1"]))
	}
	mod := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	for ws, prompt := range map[string]string{"default": "waves at dusk", "pr-1": "waves at night"} {
		data := clips[ws]
		s := sha(data)
		if _, err := srv.Client().PutObject(context.Background(), srv.Bucket, "sha256/"+s[:2]+"/"+s, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{ContentType: "video/mp4"}); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, ".genform", "state.db")
		if ws != "default" {
			path = filepath.Join(dir, ".genform", "workspaces", ws, "state.db")
			out := filepath.Join(dir, "generated", "video", "clip", "0.mp4")
			os.MkdirAll(filepath.Dir(out), 0o755)
			if err := os.WriteFile(out, data, 0o644); err != nil {
				t.Fatal(err)
			}
			os.Chtimes(out, mod, mod)
		}
		os.MkdirAll(filepath.Dir(path), 0o755)
		st, err := boltstate.Open(path, statefile.Options{Create: true, Command: "test"})
		if err != nil {
			t.Fatal(err)
		}
		err = st.Update(func(tx *statefile.Tx) error {
			return tx.Record(&statefile.Resource{
				Addr: addrs.Resource{Kind: addrs.Video, Name: "clip"}.Instance(addrs.NoKey), Endpoint: addrs.Text2Video,
				Fingerprint: "fp-" + ws, Request: []byte(fmt.Sprintf(`{"prompt":%q,"settings":{"duration":2}}`, prompt)),
				GenerationID: "gen-" + ws, CreationID: "gen-" + ws, Status: "succeed", Dir: "generated/video/clip",
				Outputs: []statefile.Output{{Index: 0, Path: "generated/video/clip/0.mp4", Size: int64(len(data)), ModTime: mod, SHA256: s, ContentType: "video/mp4", Stored: true}},
			})
		})
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	env := childEnv(append(srv.Env(), "GENFORM_WORKSPACE=pr-1")...)

	t.Run("without ffmpeg", func(t *testing.T) {
		noFFmpeg := append(slices.Clone(env), "PATH="+filepath.Dir(genformPath(t)))
		r := genform(t, dir, noFFmpeg, "gallery", "-base=default", "-format=markdown")
		if r.code != 0 {
			t.Fatalf("gallery:\n%s", r)
		}
		for _, want := range []string{
			"#### `video.clip` · changed · 0.20 USD",
			"| **before** | [▶ video #0](" + srv.Endpoint,
			"| **after** | [▶ video #0](" + srv.Endpoint,
			"> after #0: no still frame: ffmpeg is not installed where this comment was written",
			"- **prompt:** waves at ~~dusk~~ **night**",
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("the comment lacks %q:\n%s", want, r.stdout)
			}
		}
		if !strings.Contains(r.stderr, "Warning: video.clip output 0") || !strings.Contains(r.stderr, "ffmpeg is not installed") {
			t.Errorf("gallery does not warn of the missing frames:\n%s", r.stderr)
		}
		// The linked video is the file, fetched without credentials.
		link := regexp.MustCompile(`\[▶ video #0\]\(([^)]+)\)`).FindAllStringSubmatch(r.stdout, -1)
		if len(link) != 2 {
			t.Fatalf("%d video links", len(link))
		}
		if code, b := getURL(t, link[1][1]); code != 200 || sha(b) != sha(clips["pr-1"]) {
			t.Errorf("GET of pr-1's video: %d, %d bytes", code, len(b))
		}
	})
	t.Run("with ffmpeg", func(t *testing.T) {
		r := genform(t, dir, env, "gallery", "-base=default", "-format=markdown")
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("gallery:\n%s", r)
		}
		pics := mdImage.FindAllStringSubmatch(r.stdout, -1)
		if len(pics) != 2 {
			t.Fatalf("%d pictures, want the two videos' first frames:\n%s", len(pics), r.stdout)
		}
		for i, colour := range []string{"red", "blue"} {
			code, b := getURL(t, pics[i][2])
			img, err := png.Decode(bytes.NewReader(b))
			if code != 200 || err != nil {
				t.Fatalf("thumbnail %d: %d, %v", i, code, err)
			}
			if b := img.Bounds(); b.Dx() != 512 || b.Dy() != 288 {
				t.Errorf("thumbnail %d is %v, want 512×288", i, b)
			}
			r, _, bl, _ := img.At(256, 144).RGBA()
			if colour == "red" && (r>>8 < 200 || bl>>8 > 60) || colour == "blue" && (bl>>8 < 200 || r>>8 > 60) {
				t.Errorf("thumbnail %d's middle is %d,%d (red, blue), want %s", i, r>>8, bl>>8, colour)
			}
			if code, b := getURL(t, pics[i][3]); code != 200 || sha(b) != sha(clips[[]string{"default", "pr-1"}[i]]) {
				t.Errorf("the thumbnail links to %d, %d bytes, not the video", code, len(b))
			}
		}
	})
}
