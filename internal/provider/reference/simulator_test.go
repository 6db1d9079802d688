package reference_test

import (
	"context"
	"errors"
	"image/png"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/provider/reference"
	"github.com/genform/genform/internal/simulator"
	"github.com/genform/genform/internal/simulator/simkit/simtest"
)

// These tests run the client against the simulator: two independent
// implementations of docs/apiclient.md that must agree.

func startSim(t *testing.T, opts simulator.Options) (*simulator.Server, *reference.Client) {
	return startSimRetries(t, opts, 6)
}

func startSimRetries(t *testing.T, opts simulator.Options, retries int) (*simulator.Server, *reference.Client) {
	t.Helper()
	if opts.Token == "" {
		opts.Token = "tok"
	}
	sim, err := simulator.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim)
	t.Cleanup(func() { srv.Close(); sim.Close() })
	c, err := newRef(apiclient.Config{BaseURL: srv.URL, Token: opts.Token, MaxRetries: retries})
	if err != nil {
		t.Fatal(err)
	}
	return sim, c
}

func ptr[T any](v T) *T { return &v }

func TestClientAgainstSimulator(t *testing.T) {
	clk := simtest.NewClock(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	_, c := startSim(t, simulator.Options{Latency: 10 * time.Second, Now: clk.Now})
	ctx := context.Background()

	img, err := c.TextToImage(ctx, reference.TextToImageRequest{Prompt: "a lighthouse", IsPublic: ptr(false),
		Config: &reference.ImageConfig{ImageNumber: ptr(2)}, Settings: &reference.ImageSettings{AspectRatio: "1:1", Resolution: ptr(720), Seed: ptr(int64(7))}})
	if err != nil {
		t.Fatal(err)
	}
	t2v, err := c.TextToVideo(ctx, reference.TextToVideoRequest{Prompt: "waves", GenMode: "standard", Settings: &reference.TextToVideoSettings{Duration: ptr(2.0)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ImageToVideo(ctx, reference.ImageToVideoRequest{Prompt: "zoom", Config: &reference.ImageToVideoConfig{SourceImage: "https://example.com/a.png"}, GenMode: "smooth"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.KeyFrame(ctx, reference.KeyFrameRequest{Config: &reference.KeyFrameConfig{SourceImages: []string{"https://example.com/a.png", "https://example.com/b.png"},
		FrameIndices: []int{0, 31}, InputWidth: ptr(1280), InputHeight: ptr(720)}}); err != nil {
		t.Fatal(err)
	}

	st, err := c.Status(ctx, img)
	if err != nil || st.State != reference.StateRunning || !st.Known {
		t.Fatalf("fresh job: %+v %v", st, err)
	}
	clk.Advance(5 * time.Second)
	st, _ = c.Status(ctx, img)
	if st.Raw != "processing" || st.Progress <= 0 || st.Progress >= 1 {
		t.Errorf("half way: %+v", st)
	}
	clk.Advance(6 * time.Second)
	if st, _ = c.Status(ctx, img); st.State != reference.StateDone {
		t.Fatalf("after the latency: %+v", st)
	}
	det, err := c.Detail(ctx, img)
	if err != nil || det.CreationID != img || len(det.Outputs) != 2 {
		t.Fatalf("detail: %+v %v", det, err)
	}
	dir := t.TempDir()
	d, err := c.Download(ctx, det.Outputs[1].MediaURL, dir, "1")
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(d.Path)
	cfg, err := png.DecodeConfig(f)
	f.Close()
	if err != nil || cfg.Width != 720 || cfg.Height != 720 || filepath.Ext(d.Path) != ".png" {
		t.Errorf("1:1 at 720 gave %s %dx%d (%v)", d.Path, cfg.Width, cfg.Height, err)
	}

	w, err := c.WatermarkFreeURL(ctx, t2v)
	if err != nil || w.URL == "" || !w.ExpireTime.After(clk.Now()) {
		t.Fatalf("watermark-free URL: %+v %v", w, err)
	}
	if _, err := c.Download(ctx, w.URL, dir, "free"); err != nil {
		t.Errorf("fresh watermark-free URL: %v", err)
	}
	clk.Advance(61 * time.Minute)
	_, err = c.Download(ctx, w.URL, dir, "late")
	var se *apiclient.Error
	if !errors.As(err, &se) || se.HTTPStatus != 403 {
		t.Errorf("expired watermark-free URL: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "late.gif")); err == nil {
		t.Error("a refused download left a file")
	}
}

func TestClientAgainstSimulatorRefusals(t *testing.T) {
	ctx := context.Background()
	_, c := startSim(t, simulator.Options{Latency: time.Second})
	_, err := c.TextToImage(ctx, reference.TextToImageRequest{Prompt: "x", Config: &reference.ImageConfig{ImageNumber: ptr(9)}})
	var se *apiclient.Error
	if !errors.As(err, &se) || se.HTTPStatus != 400 || se.Code == "" || se.Message == "" {
		t.Errorf("image_number 9: %v", err)
	}
	_, err = c.Status(ctx, "no-such-job")
	if !errors.As(err, &se) || se.HTTPStatus != 404 || se.Code != "H-10002003" {
		t.Errorf("unknown job: %v", err)
	}

	_, right := startSim(t, simulator.Options{Token: "right"})
	badTok, err := newRef(apiclient.Config{BaseURL: right.BaseURL(), Token: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = badTok.TextToImage(ctx, reference.TextToImageRequest{Prompt: "x"})
	if !errors.As(err, &se) || se.HTTPStatus != 401 {
		t.Errorf("wrong token: %v", err)
	}
}

// A 429 for too many jobs carries Retry-After; the client waits it out and
// the create goes through once a slot is free, created once.
func TestClientAgainstSimulator429(t *testing.T) {
	sim, c := startSim(t, simulator.Options{Latency: 1500 * time.Millisecond, MaxConcurrent: 1})
	ctx := context.Background()
	if _, err := c.TextToImage(ctx, reference.TextToImageRequest{Prompt: "first"}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := c.TextToImage(ctx, reference.TextToImageRequest{Prompt: "second"}); err != nil {
		t.Fatalf("the second create should succeed after waiting: %v", err)
	}
	rep := sim.Jobs()
	if rep.Throttled == 0 || len(rep.Jobs) != 2 || time.Since(start) < time.Second {
		t.Errorf("throttled %d, jobs %d, waited %v", rep.Throttled, len(rep.Jobs), time.Since(start))
	}
	for fp, n := range rep.Creates {
		if n != 1 {
			t.Errorf("request %s created %d times", fp, n)
		}
	}
}

// Injected 500s on the requests that create nothing are retried until
// they pass; every create lands exactly once.
func TestClientAgainstSimulator500(t *testing.T) {
	sim, c := startSim(t, simulator.Options{Latency: time.Second, ErrorRate: 0.3, Seed: 3, ReadErrorsOnly: true})
	ctx := context.Background()
	for i := 0; i < 6; i++ {
		id, err := c.TextToImage(ctx, reference.TextToImageRequest{Prompt: "tile " + string(rune('a'+i))})
		if err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
		if _, err := c.Status(ctx, id); err != nil {
			t.Fatalf("status %d: %v", i, err)
		}
	}
	rep := sim.Jobs()
	if len(rep.Jobs) != 6 || rep.Requests <= 12 {
		t.Errorf("%d jobs for 6 creates, %d requests (some status requests must have been answered 500)", len(rep.Jobs), rep.Requests)
	}
}

// A create the simulator answers 500 made no job, but the client cannot
// know it: the service may fail after it made, and charged for, the job.
// It is ambiguous, and never sent again.
func TestClientAgainstSimulator500OnCreate(t *testing.T) {
	sim, c := startSim(t, simulator.Options{Latency: time.Second, ErrorRate: 1})
	_, err := c.TextToImage(context.Background(), reference.TextToImageRequest{Prompt: "tile"})
	if !errors.Is(err, apiclient.ErrAmbiguousCreate) {
		t.Fatalf("err = %v, want ErrAmbiguousCreate", err)
	}
	if rep := sim.Jobs(); rep.Requests != 1 {
		t.Errorf("%d requests for one create answered 500, want 1", rep.Requests)
	}
}

// A truncated download is detected and leaves nothing under the final name.
func TestClientAgainstSimulatorTruncation(t *testing.T) {
	clk := simtest.NewClock(time.Now())
	_, c := startSimRetries(t, simulator.Options{Latency: time.Second, TruncateRate: 1, Now: clk.Now}, -1)
	ctx := context.Background()
	id, err := c.TextToImage(ctx, reference.TextToImageRequest{Prompt: "x", Config: &reference.ImageConfig{ImageNumber: ptr(1)}})
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Second)
	det, err := c.Detail(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := c.Download(ctx, det.Outputs[0].MediaURL, dir, "0"); err == nil {
		t.Fatal("a truncated download succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

// A job survives a simulator restart with a data directory.
func TestClientAgainstSimulatorRestart(t *testing.T) {
	data := t.TempDir()
	sim, err := simulator.New(simulator.Options{Token: "tok", Latency: 300 * time.Millisecond, DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim)
	c, _ := newRef(apiclient.Config{BaseURL: srv.URL, Token: "tok"})
	id, err := c.TextToImage(context.Background(), reference.TextToImageRequest{Prompt: "persist me"})
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
	sim.Close()

	_, c2 := startSim(t, simulator.Options{Token: "tok", Latency: 300 * time.Millisecond, DataDir: data})
	time.Sleep(400 * time.Millisecond)
	st, err := c2.Status(context.Background(), id)
	if err != nil || st.State != reference.StateDone {
		t.Fatalf("after restart: %+v %v", st, err)
	}
	if det, err := c2.Detail(context.Background(), id); err != nil || len(det.Outputs) != 4 {
		t.Errorf("detail after restart: %v", err)
	}
}

// The token check against the simulator: it answers the probe 404 for a
// token it accepts and 401 for any other, makes no job, and counts one
// request.
func TestClientAgainstSimulatorCheckCredentials(t *testing.T) {
	ctx := context.Background()
	sim, c := startSim(t, simulator.Options{Token: "right", Latency: time.Second})
	if err := c.CheckCredentials(ctx); err != nil {
		t.Fatalf("the right token: %v", err)
	}
	// What the check relies on: the probe's id is unknown to the service.
	_, err := c.Status(ctx, "00000000-0000-0000-0000-000000000000")
	var se *apiclient.Error
	if !errors.As(err, &se) || se.HTTPStatus != 404 || se.Code != "H-10002003" {
		t.Errorf("status of the nil UUID: %v, want 404 H-10002003", err)
	}
	for _, tok := range []string{"wrong", ""} {
		bad, err := newRef(apiclient.Config{BaseURL: c.BaseURL(), Token: tok})
		if err != nil {
			t.Fatal(err)
		}
		err = bad.CheckCredentials(ctx)
		if !errors.Is(err, apiclient.ErrUnauthorized) || !errors.As(err, &se) || se.HTTPStatus != 401 {
			t.Errorf("token %q: %v, want a 401 matching ErrUnauthorized", tok, err)
		}
	}
	if rep := sim.Jobs(); len(rep.Jobs) != 0 || rep.Requests != 4 {
		t.Errorf("%d jobs and %d requests, want none and 4 (401s are counted)", len(rep.Jobs), rep.Requests)
	}
}

// Every retry against a faulty or busy simulator is reported with the
// answer that caused it: 500 for injected faults, 429 for the concurrency
// limit; one report per extra request the simulator saw.
func TestClientAgainstSimulatorReportsRetries(t *testing.T) {
	tests := []struct {
		name   string
		opts   simulator.Options
		reason string
	}{
		{"injected 500s", simulator.Options{Latency: 200 * time.Millisecond, ErrorRate: 0.3, Seed: 5, ReadErrorsOnly: true}, "500 Internal Server Error"},
		{"concurrency limit", simulator.Options{Latency: 200 * time.Millisecond, MaxConcurrent: 1}, "429 Too Many Requests"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.opts.Token = "tok"
			sim, err := simulator.New(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(sim)
			t.Cleanup(func() { srv.Close(); sim.Close() })
			var mu sync.Mutex
			var infos []apiclient.RetryInfo
			c, err := newRef(apiclient.Config{BaseURL: srv.URL, Token: "tok", OnRetry: func(_ context.Context, i apiclient.RetryInfo) {
				mu.Lock()
				infos = append(infos, i)
				mu.Unlock()
			}})
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 3; i++ {
				id, err := c.TextToImage(context.Background(), reference.TextToImageRequest{Prompt: "tile " + string(rune('a'+i))})
				if err != nil {
					t.Fatalf("create %d: %v", i, err)
				}
				if _, err := c.Status(context.Background(), id); err != nil {
					t.Fatalf("status %d: %v", i, err)
				}
			}
			rep := sim.Jobs()
			mu.Lock()
			defer mu.Unlock()
			if len(infos) == 0 || len(infos) != rep.Requests-2*len(rep.Jobs) {
				t.Fatalf("%d retries reported for %d requests making %d jobs and reading their status", len(infos), rep.Requests, len(rep.Jobs))
			}
			for _, i := range infos {
				if i.Reason() != tt.reason || !strings.HasPrefix(i.Op, "POST /v1/jobs/text2image") && !strings.HasPrefix(i.Op, "GET /v1/jobs/") || i.Attempt < 2 || i.Wait <= 0 {
					t.Errorf("reported %+v (reason %q), want %s", i, i.Reason(), tt.reason)
				}
			}
		})
	}
}

// newRef is a reference client made as apiclient.New makes its HTTP
// client.
func newRef(cfg apiclient.Config) (*reference.Client, error) {
	c, err := apiclient.New(cfg)
	if err != nil {
		return nil, err
	}
	return reference.NewClient(c), nil
}
