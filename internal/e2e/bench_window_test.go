package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/catalog"
	lumasim "github.com/genform/genform/internal/simulator/luma"
	openaisim "github.com/genform/genform/internal/simulator/openai"
	replicatesim "github.com/genform/genform/internal/simulator/replicate"
	runwaysim "github.com/genform/genform/internal/simulator/runway"
	"github.com/genform/genform/internal/simulator/simkit"

	falsim "github.com/genform/genform/internal/simulator/fal"
)

// windowImages is how many images a run of BenchmarkProviderWindow
// applies: 200, or GENFORM_BENCH_IMAGES.
func windowImages() int {
	if n, err := strconv.Atoi(os.Getenv("GENFORM_BENCH_IMAGES")); err == nil && n > 0 {
		return n
	}
	return 200
}

// windowCase is a provider whose simulator the window benchmark runs:
// the model of its images and its simulator.
type windowCase struct {
	name, model, keyEnv string
	newSim              func(simkit.Options) (simkit.Handler, error)
}

var windowCases = []windowCase{
	{"fal", "fal-ai/flux/schnell", "FAL_KEY", func(o simkit.Options) (simkit.Handler, error) { return falsim.New(o) }},
	{"replicate", "black-forest-labs/flux-schnell", "REPLICATE_API_TOKEN", func(o simkit.Options) (simkit.Handler, error) { return replicatesim.New(o) }},
	{"openai", "gpt-image-2", "OPENAI_API_KEY", func(o simkit.Options) (simkit.Handler, error) { return openaisim.New(o) }},
	{"runway", "gen4_image", "RUNWAYML_API_SECRET", func(o simkit.Options) (simkit.Handler, error) { return runwaysim.New(o) }},
	{"luma", "photon-1", "LUMAAI_API_KEY", func(o simkit.Options) (simkit.Handler, error) { return lumasim.New(o) }},
}

// BenchmarkProviderWindow applies 200 images (GENFORM_BENCH_IMAGES) on each
// provider's simulator held to that provider's documented default limits
// (a new account's jobs at once and request rate), each job taking one
// second, with no parallelism set: genform's window starts at the
// default and tunes itself. It reports the run's time over the ideal
// the limits allow (ratio; the target is 1.15 at most) and the share of
// requests answered 429 (the target is 1% at most). It takes minutes a
// provider (OpenAI's 5 images a minute make 40); choose with -bench:
//
//	go test -run '^$' -bench 'ProviderWindow/fal' -benchtime 1x ./internal/e2e
func BenchmarkProviderWindow(b *testing.B) {
	for _, wc := range windowCases {
		b.Run(wc.name, func(b *testing.B) {
			for range b.N {
				runWindow(b, wc, windowImages())
			}
		})
	}
}

func runWindow(b *testing.B, wc windowCase, n int) {
	lim := catalog.Lookup(wc.name).Limits
	opts := simkit.Options{Latency: time.Second, MaxConcurrent: -1, RPM: -1, DailyCap: -1}
	if lim.Parallelism > 0 {
		opts.MaxConcurrent = lim.Parallelism
	}
	if lim.RequestsPerMinute > 0 {
		opts.RPM = lim.RequestsPerMinute
	}
	h, err := wc.newSim(opts)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	dir := b.TempDir()
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "provider %q {\n  base_url = %q\n}\n\nimage \"tile\" {\n  count    = %d\n  provider = %s\n  model    = %q\n  prompt   = \"tile ${count.index}\"\n  aspect_ratio = \"1:1\"\n}\n", wc.name, srv.URL, n, wc.name, wc.model)
	if err := os.WriteFile(filepath.Join(dir, "main.gen.hcl"), []byte(cfg.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	env := childEnv(wc.keyEnv + "=bench")
	b.ResetTimer()
	start := time.Now()
	r := genform(b, dir, env, "apply", "-auto-approve")
	took := time.Since(start)
	b.StopTimer()
	if r.code != 0 {
		b.Fatalf("apply on %s:\n%s", wc.name, r)
	}

	// The ideal: every job at once the limits allow, each one second,
	// and the fewest requests a job needs (its create and one read of its
	// end; the create alone on a synchronous API) no faster than the
	// request rate.
	ideal := time.Second
	if c := opts.MaxConcurrent; c > 0 {
		ideal = time.Duration(math.Ceil(float64(n)/float64(c))) * time.Second
	}
	perJob := 2
	if catalog.Lookup(wc.name).Synchronous {
		perJob = 1 // the create's answer is the result
	}
	if rpm := opts.RPM; rpm > 0 {
		ideal = max(ideal, time.Duration(float64(perJob*n)/float64(rpm)*float64(time.Minute)))
	}
	rep := simReport(b, srv.URL)
	share := float64(rep.Throttled) / float64(max(rep.Requests, 1))
	b.ReportMetric(took.Seconds()/ideal.Seconds(), "ratio")
	b.ReportMetric(100*share, "%429")
	b.ReportMetric(took.Seconds(), "s/apply")
	b.Logf("%s: %d images in %s, ideal %s (%.2fx); %d requests, %d answered 429 (%.2f%%)",
		wc.name, n, took.Round(100*time.Millisecond), ideal, took.Seconds()/ideal.Seconds(), rep.Requests, rep.Throttled, 100*share)
}

// simReport reads a simulator's GET /_sim/jobs.
func simReport(b *testing.B, base string) simkit.JobsReport {
	resp, err := http.Get(base + "/_sim/jobs")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var rep simkit.JobsReport
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		b.Fatal(err)
	}
	return rep
}
