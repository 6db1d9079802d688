package simulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image/gif"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/provider/reference/rules"
)

func TestImageDimensions(t *testing.T) {
	want := map[string][2][2]int{ // aspect ratio: {720: w,h}, {1080: w,h}
		"16:9": {{1280, 720}, {1920, 1080}},
		"9:16": {{720, 1280}, {1080, 1920}},
		"1:1":  {{720, 720}, {1080, 1080}},
		"21:9": {{1680, 720}, {2520, 1080}},
		"4:3":  {{960, 720}, {1440, 1080}},
		"3:4":  {{720, 960}, {1080, 1440}},
	}
	h := newHarness(t, Options{})
	for _, ar := range rules.For(addrs.Text2Image).AspectRatios {
		for i, res := range []int{720, 1080} {
			t.Run(fmt.Sprintf("%s at %d", ar, res), func(t *testing.T) {
				id := h.create(pathT2I, fmt.Sprintf(`{"prompt":"sizes","config":{"image_number":1},"settings":{"aspect_ratio":%q,"resolution":%d}}`, ar, res))
				h.finish()
				d := h.detail(id)
				w, ht := want[ar][i][0], want[ar][i][1]
				if d.Settings.Width != w || d.Settings.Height != ht {
					t.Errorf("detail settings %dx%d, want %dx%d", d.Settings.Width, d.Settings.Height, w, ht)
				}
				img, err := png.Decode(bytes.NewReader(h.download(d.Outputs[0].MediaURL, "image/png")))
				if err != nil {
					t.Fatalf("decoding the image: %v", err)
				}
				if b := img.Bounds(); b.Dx() != w || b.Dy() != ht {
					t.Errorf("image is %dx%d, want %dx%d", b.Dx(), b.Dy(), w, ht)
				}
				thumb, err := png.DecodeConfig(bytes.NewReader(h.download(d.Outputs[0].ThumbnailURL, "image/png")))
				if err != nil {
					t.Fatalf("decoding the thumbnail: %v", err)
				}
				if max(thumb.Width, thumb.Height) != 320 || (thumb.Width > thumb.Height) != (w > ht) {
					t.Errorf("thumbnail is %dx%d for a %dx%d image", thumb.Width, thumb.Height, w, ht)
				}
			})
		}
	}
}

func TestImagesDependOnRequest(t *testing.T) {
	h := newHarness(t, Options{})
	fetch := func(body string) [][]byte {
		t.Helper()
		id := h.create(pathT2I, body)
		h.finish()
		var out [][]byte
		for _, o := range h.detail(id).Outputs {
			out = append(out, h.download(o.MediaURL, "image/png"))
		}
		return out
	}
	seeded := `{"prompt":"a lighthouse","config":{"image_number":2},"settings":{"seed":42}}`
	a := fetch(seeded)
	b := fetch(seeded)
	if !bytes.Equal(a[0], b[0]) || !bytes.Equal(a[1], b[1]) {
		t.Errorf("same request and seed gave different images")
	}
	if bytes.Equal(a[0], a[1]) {
		t.Errorf("the two images of one request are identical")
	}
	for name, body := range map[string]string{
		"other prompt":       `{"prompt":"a windmill","config":{"image_number":2},"settings":{"seed":42}}`,
		"other seed":         `{"prompt":"a lighthouse","config":{"image_number":2},"settings":{"seed":43}}`,
		"random seed":        `{"prompt":"a lighthouse","config":{"image_number":2}}`,
		"other neg. prompts": `{"prompt":"a lighthouse","negative_prompt":"fog","config":{"image_number":2},"settings":{"seed":42}}`,
	} {
		if c := fetch(body); bytes.Equal(a[0], c[0]) {
			t.Errorf("%s: same image as the seeded request", name)
		}
	}
	// Random seeds differ from job to job.
	r1 := fetch(`{"prompt":"a lighthouse","config":{"image_number":1}}`)
	r2 := fetch(`{"prompt":"a lighthouse","config":{"image_number":1}}`)
	if bytes.Equal(r1[0], r2[0]) {
		t.Errorf("two jobs with seed -1 rendered the same image")
	}
}

func TestVideo(t *testing.T) {
	h := newHarness(t, Options{})
	id := h.create(pathT2V, `{"prompt":"waves on a shore","settings":{"duration":2,"aspect_ratio":"21:9"}}`)
	h.finish()
	d := h.detail(id)
	plain := decodeGIF(t, h.download(d.VideoURL, "image/gif"))
	r := h.do("POST", "/v1/creation/"+id+"/watermark-free-url", nil)
	free := decodeGIF(t, h.download(r.value(t)["url"].(string), "image/gif"))

	for name, g := range map[string]*gif.GIF{"plain": plain, "watermark-free": free} {
		if len(g.Image) != 2*rules.FPS {
			t.Errorf("%s: %d frames, want %d (2 s at %d fps)", name, len(g.Image), 2*rules.FPS, rules.FPS)
		}
		total := 0
		for _, d := range g.Delay {
			total += d
		}
		if total != 200 {
			t.Errorf("%s: frames last %d/100 s, want 2 s", name, total)
		}
		if g.Config.Width != d.Settings.Width || g.Config.Height != d.Settings.Height || g.Config.Width != 560 || g.Config.Height != 240 {
			t.Errorf("%s: %dx%d, detail says %dx%d, want 560x240", name, g.Config.Width, g.Config.Height, d.Settings.Width, d.Settings.Height)
		}
		if bytes.Equal(g.Image[0].Pix, g.Image[len(g.Image)-1].Pix) {
			t.Errorf("%s: first and last frames are identical", name)
		}
	}
	// The watermark is the only difference: same frames elsewhere, some
	// pixels changed in every frame.
	for i := range plain.Image {
		p, f := plain.Image[i].Pix, free.Image[i].Pix
		diff := 0
		for k := range p {
			if p[k] != f[k] {
				diff++
			}
		}
		if diff == 0 || diff > len(p)/4 {
			t.Errorf("frame %d: %d of %d pixels differ between plain and watermark-free", i, diff, len(p))
		}
	}
	thumb, err := png.DecodeConfig(bytes.NewReader(h.download(d.ThumbnailURL, "image/png")))
	if err != nil || thumb.Width != 320 {
		t.Errorf("video thumbnail: %v, %+v", err, thumb)
	}

	other := h.create(pathT2V, `{"prompt":"a desert road","settings":{"duration":2,"aspect_ratio":"21:9"}}`)
	h.finish()
	if bytes.Equal(h.download(h.detail(other).VideoURL, "image/gif"), h.download(d.VideoURL, "image/gif")) {
		t.Errorf("two prompts rendered the same video")
	}
}

func decodeGIF(t *testing.T, b []byte) *gif.GIF {
	t.Helper()
	g, err := gif.DecodeAll(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("decoding the video: %v", err)
	}
	return g
}

func TestWatermarkFreeURL(t *testing.T) {
	h := newHarness(t, Options{URLTTL: 10 * time.Minute})
	id := h.create(pathI2V, `{"config":{"source_image":"https://example.com/a.png"},"settings":{"duration":2}}`)

	r := h.do("POST", "/v1/creation/"+id+"/watermark-free-url", nil)
	if r.status != http.StatusBadRequest || r.errorCode(t) != codeNotSucceeded {
		t.Errorf("before succeed: %d %s, want 400 %d", r.status, r.body, codeNotSucceeded)
	}
	h.finish()
	issued := h.clock.Now()
	v := h.do("POST", "/v1/creation/"+id+"/watermark-free-url", nil).value(t)
	url, _ := v["url"].(string)
	exp, _ := v["expire_time"].(string)
	if !strings.HasSuffix(exp, "Z") {
		t.Errorf("expire_time %q has no trailing Z", exp)
	}
	if et, err := time.Parse(time.RFC3339, exp); err != nil || !et.Equal(issued.Add(10*time.Minute)) {
		t.Errorf("expire_time %q (%v), want %s", exp, err, issued.Add(10*time.Minute).Format(time.RFC3339))
	}
	h.download(url, "image/gif")

	tampered := strings.Replace(url, "expires=", "expires=9", 1)
	if r := h.doAs("", "GET", tampered, nil); r.status != http.StatusForbidden || r.errorCode(t) != codeForbidden {
		t.Errorf("tampered URL: %d %s, want 403", r.status, r.body)
	}
	if r := h.doAs("", "GET", strings.Split(url, "?")[0], nil); r.status != http.StatusForbidden {
		t.Errorf("unsigned URL: %d, want 403", r.status)
	}
	h.clock.Advance(10*time.Minute - time.Second)
	h.download(url, "image/gif")
	h.clock.Advance(time.Second)
	if r := h.doAs("", "GET", url, nil); r.status != http.StatusForbidden || r.errorCode(t) != codeForbidden || !strings.Contains(r.errorMessage(t), "expired") {
		t.Errorf("expired URL: %d %s, want 403 expired", r.status, r.body)
	}

	img := h.create(pathT2I, `{"prompt":"a"}`)
	h.finish()
	r = h.do("POST", "/v1/creation/"+img+"/watermark-free-url", nil)
	if r.status != http.StatusBadRequest || r.errorCode(t) != codeNotVideo || !strings.Contains(r.errorMessage(t), "only for videos") {
		t.Errorf("image creation: %d %s, want 400 %d", r.status, r.body, codeNotVideo)
	}
}

func TestTruncateRate(t *testing.T) {
	for _, tt := range []struct {
		rate      float64
		truncated bool
	}{{1, true}, {0, false}} {
		t.Run(fmt.Sprint(tt.rate), func(t *testing.T) {
			h := newHarness(t, Options{TruncateRate: tt.rate})
			id := h.create(pathT2I, `{"prompt":"a","config":{"image_number":1}}`)
			h.finish()
			url := h.detail(id).Outputs[0].MediaURL
			resp, err := h.srv.Client().Get(url)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if tt.truncated {
				if !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Errorf("reading a truncated download: err = %v, want unexpected EOF", err)
				}
				if resp.ContentLength <= 0 || int64(len(body)) >= resp.ContentLength {
					t.Errorf("got %d of Content-Length %d bytes, want fewer", len(body), resp.ContentLength)
				}
				return
			}
			if err != nil || int64(len(body)) != resp.ContentLength {
				t.Errorf("full download: %d of %d bytes, err %v", len(body), resp.ContentLength, err)
			}
			if _, err := png.Decode(bytes.NewReader(body)); err != nil {
				t.Errorf("full download does not decode: %v", err)
			}
		})
	}
}

func TestPersistence(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock()
	opts := Options{DataDir: dir, Now: clock.Now, Latency: 20 * time.Second}

	first := newHarness(t, opts)
	done := first.create(pathI2V, `{"config":{"source_image":"https://example.com/a.png"},"settings":{"duration":2}}`)
	clock.Advance(20 * time.Second)
	url := first.do("POST", "/v1/creation/"+done+"/watermark-free-url", nil).value(t)["url"].(string)
	plain := first.download(first.srv.URL+"/media/"+done+"/"+assetVideo, "image/gif")
	id := first.create(pathT2V, `{"prompt":"across a restart","settings":{"duration":2}}`)
	if st, _ := first.status(id); st != statusPending {
		t.Fatalf("before the restart: %s", st)
	}
	first.srv.Close()
	if err := first.sim.Close(); err != nil {
		t.Fatal(err)
	}

	clock.Advance(10 * time.Second) // halfway through the job
	second := newHarness(t, opts)
	if st, p := second.status(id); st != statusProcessing || p <= 0 {
		t.Errorf("after the restart: %s %v, want processing with progress", st, p)
	}
	clock.Advance(10 * time.Second)
	if st, _ := second.status(id); st != statusSucceed {
		t.Errorf("after the latency: %s, want succeed", st)
	}
	decodeGIF(t, second.download(second.detail(id).VideoURL, "image/gif"))
	// Same bytes for the same job after a restart, and signed URLs still
	// verify because the key was kept.
	if !bytes.Equal(plain, second.download(second.srv.URL+"/media/"+done+"/"+assetVideo, "image/gif")) {
		t.Errorf("the video changed across the restart")
	}
	second.download(strings.Replace(url, first.srv.URL, second.srv.URL, 1), "image/gif")

	rep := second.sim.Jobs()
	if len(rep.Jobs) != 2 || len(rep.Creates) != 2 {
		t.Fatalf("after the restart: %d jobs, %d fingerprints; want 2 and 2", len(rep.Jobs), len(rep.Creates))
	}
	for _, j := range rep.Jobs {
		if j.ID == id && j.StatusRequests != 3 {
			t.Errorf("status_requests = %d, want 3 (1 before the restart, 2 after)", j.StatusRequests)
		}
	}
	if third := second.create(pathT2I, `{"prompt":"new"}`); third == id || third == done {
		t.Errorf("new job reused an old id")
	}
}

func TestPersistenceKeepsJobWithoutClose(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock()
	sim, err := New(Options{DataDir: dir, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	req, _ := http.NewRequest("POST", pathT2I, strings.NewReader(`{"prompt":"crash right after"}`))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	req.Host = "sim.test"
	sim.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("create: %d %s", rec.Code, rec.Body.String())
	}
	var env struct {
		Value struct {
			GenerationID string `json:"generation_id"`
		} `json:"value"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil {
		t.Fatal(err)
	}
	// No Close: the process died. The job must be there anyway.
	again, err := New(Options{DataDir: dir, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	jobs := again.Jobs().Jobs
	if len(jobs) != 1 || jobs[0].ID != env.Value.GenerationID {
		t.Errorf("after a crash: %+v, want job %s", jobs, env.Value.GenerationID)
	}
}

// TestJobFilesOfEarlierVersions loads the job files an earlier version of
// the simulator wrote (testdata/jobs-v1: the built-in simulator keeps its
// jobs in every working copy's .genform/simulator) and writes them back
// in the same format, byte for byte: jobs a client has recorded are
// found again after an upgrade, and after a downgrade.
func TestJobFilesOfEarlierVersions(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "jobs"), os.DirFS("testdata/jobs-v1")); err != nil {
		t.Fatal(err)
	}
	const (
		failed    = "352e7807-34de-419c-814f-2997179d7b9f"
		succeeded = "1ad52bc1-4a3c-45f2-824d-ed4dcbd42021"
	)
	clock := newFakeClock() // the jobs were made at this instant, 10s long
	clock.Advance(time.Minute)
	h := newHarness(t, Options{DataDir: dir, Now: clock.Now})
	rep := h.sim.Jobs()
	if len(rep.Jobs) != 2 || len(rep.Creates) != 2 {
		t.Fatalf("loaded %d jobs of %d fingerprints, want 2 of 2", len(rep.Jobs), len(rep.Creates))
	}
	for _, j := range rep.Jobs {
		want := map[string]string{failed: statusFailed, succeeded: statusSucceed}[j.ID]
		if j.Status != want || j.StatusRequests != 1 {
			t.Errorf("job %s: %s after %d status requests, want %s after 1", j.ID, j.Status, j.StatusRequests, want)
		}
	}
	// The jobs are the token "tok"'s.
	var env struct {
		Value creationDetail `json:"value"`
	}
	r := h.doAs("tok", "GET", "/v1/creation/"+succeeded, nil)
	r.value(t)
	if err := json.Unmarshal(r.body, &env); err != nil {
		t.Fatal(err)
	}
	if d := env.Value; d.Status != statusSucceed || d.Prompt != "two" || len(d.Outputs) != 1 {
		t.Errorf("detail of the video: %+v", d)
	}
	decodeGIF(t, h.download(env.Value.VideoURL, "image/gif"))
	if r := h.do("GET", "/v1/jobs/"+failed+"/status", nil); r.status != http.StatusNotFound {
		t.Errorf("another token's job: %d %s, want 404", r.status, r.body)
	}

	// A status request makes the failed job's file due again: Close
	// writes it as the earlier version did, its counter moved on.
	if r := h.doAs("tok", "GET", "/v1/jobs/"+failed+"/status", nil); r.status != http.StatusOK {
		t.Fatalf("status: %d %s", r.status, r.body)
	}
	if err := h.sim.Close(); err != nil {
		t.Fatal(err)
	}
	name := failed + ".json"
	was, err := os.ReadFile(filepath.Join("testdata/jobs-v1", name))
	if err != nil {
		t.Fatal(err)
	}
	now, err := os.ReadFile(filepath.Join(dir, "jobs", name))
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(string(was), `"status_requests": 1`, `"status_requests": 2`, 1); string(now) != want {
		t.Errorf("the job file was written in another format:\n%s\nwant:\n%s", now, want)
	}
}
