package command_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/genform/genform/internal/command"
	"github.com/genform/genform/internal/simulator"
	"github.com/genform/genform/statefile"
)

// The no-op plan on a state a real apply made. The seeded states of
// BenchmarkPlanNoOp10kBlocks and its kin are written in one transaction,
// in address order, with short made-up ids; an apply writes its records
// in the order jobs finish, in batched commits, with the service's own
// ids, times and links, and keeps a history and a run start besides.
// Such a state reads heavier (its pages are fuller of other records, its
// records longer), and a slip that only such a state shows went unseen:
// these benchmarks plan on one.
//
//	go test -run='^$' -bench='PlanNoOp10kApplied' -benchtime=10x ./internal/command/
//
// The apply runs once, in this process, through the engine against the
// simulator (its jobs finish at once, no limits), and the working
// directory it leaves, state and files, is kept under the system's
// temporary directory for later runs (appliedDir): making it takes a
// minute. GENFORM_BENCH_FRESH=1 makes it anew.

// appliedStateVersion names how appliedDir makes its directory: changing
// how it applies changes it, so an older directory is not used.
const appliedStateVersion = "1"

// appliedService is the service block of an applied benchmark directory:
// as many jobs at once as the engine allows, polled soon.
const appliedService = "service {\n  parallelism         = 64\n  requests_per_minute = 1000000\n  poll_interval       = \"50ms\"\n}\n"

// appliedDir returns a working directory where n images declared in
// shape sh were applied against a simulator, and the simulator's base URL
// the state records (a plan names it, but a no-op plan sends it nothing).
// It is made once and kept: under the system's temporary directory, named
// by what it holds (the configuration, the state's schema, how it was
// made), and put in place whole by a rename, so a run stopped while making
// it leaves nothing that a later run would take.
func appliedDir(b *testing.B, n int, sh shape) (dir, baseURL string) {
	b.Helper()
	src := b.TempDir()
	writeImages(b, src, n, sh)
	if err := os.WriteFile(filepath.Join(src, "service.gen.hcl"), []byte(appliedService), 0o644); err != nil {
		b.Fatal(err)
	}
	h := sha256.New()
	for _, name := range []string{"main.gen.hcl", "service.gen.hcl", "products.csv"} {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil && !os.IsNotExist(err) {
			b.Fatal(err)
		}
		fmt.Fprintf(h, "%s %d\n%s\n", name, len(data), data)
	}
	fmt.Fprintf(h, "schema %d, made %s\n", statefile.SchemaVersion, appliedStateVersion)
	root := filepath.Join(os.TempDir(), "genform-bench-applied", hex.EncodeToString(h.Sum(nil))[:16])
	work := filepath.Join(root, "work")
	if os.Getenv("GENFORM_BENCH_FRESH") == "" {
		if url, err := os.ReadFile(filepath.Join(root, "service")); err == nil {
			return work, string(url)
		}
	}
	if err := os.RemoveAll(root); err != nil {
		b.Fatal(err)
	}

	// Made in a directory of its own, renamed into place once done.
	making := root + ".making-" + strconv.Itoa(os.Getpid())
	if err := os.MkdirAll(making, 0o755); err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(making)
	if err := os.Rename(src, filepath.Join(making, "work")); err != nil {
		b.Fatal(err)
	}
	sim, err := simulator.Listen("127.0.0.1:0", simulator.Options{Latency: time.Nanosecond, RPM: 100_000_000, MaxConcurrent: 100_000})
	if err != nil {
		b.Fatal(err)
	}
	defer sim.Close()
	b.Setenv("GENFORM_BASE_URL", sim.URL)
	b.Setenv("GENFORM_TOKEN", "bench")
	b.Setenv("GENFORM_IN_AUTOMATION", "1")
	b.Setenv("NO_COLOR", "1")
	wd, err := os.Getwd()
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	var out strings.Builder
	code := command.Run([]string{"-chdir=" + filepath.Join(making, "work"), "apply", "-auto-approve"}, nil, &out, io.Discard)
	if err := os.Chdir(wd); err != nil {
		b.Fatal(err)
	}
	if want := fmt.Sprintf("Apply complete! %d generated", n); code != command.ExitOK || !strings.Contains(out.String(), want) {
		b.Fatalf("apply exited %d, without %q:\n%.3000s", code, want, out.String())
	}
	b.Logf("applied %d images for the benchmark's state in %s (kept in %s)", n, time.Since(start).Round(time.Second), root)
	if err := os.WriteFile(filepath.Join(making, "service"), []byte(sim.URL), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(making, root); err != nil {
		b.Fatal(err)
	}
	// The files reach the disk now, not while the plan is timed.
	syscall.Sync()
	return work, sim.URL
}

// benchPlanNoOpApplied times the no-op plan of the binary on the state
// appliedDir made, and reports its peak resident memory.
func benchPlanNoOpApplied(b *testing.B, n int, sh shape) {
	dir, url := appliedDir(b, n, sh)
	env := []string{"NO_COLOR=1", "GENFORM_BASE_URL=" + url, "GENFORM_TOKEN=bench"}
	genformBinary(b)
	var peak float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, rss := runBinary(b, dir, env, "plan", "-detailed-exitcode")
		if !strings.Contains(out, "No changes") {
			b.Fatalf("plan is not a no-op:\n%.2000s", out)
		}
		peak = max(peak, rss)
	}
	b.ReportMetric(peak, "peak-MiB")
}

// BenchmarkPlanNoOp10kAppliedBlocks: the no-op plan of 10,000 image blocks
// on the state their apply made (target: under 0.2 s and 64 MiB).
func BenchmarkPlanNoOp10kAppliedBlocks(b *testing.B) { benchPlanNoOpApplied(b, 10000, blocks) }

// BenchmarkPlanNoOp10kAppliedForEach: the same with one for_each over
// 10,000 keys.
func BenchmarkPlanNoOp10kAppliedForEach(b *testing.B) { benchPlanNoOpApplied(b, 10000, forEach) }

// BenchmarkPlanInProcess10kApplied runs BenchmarkPlanNoOp10kAppliedBlocks'
// plan in the test's process, where -cpuprofile and -memprofile see it
// (B/op included); as BenchmarkPlanInProcess10kBlocks, without process
// start, and the collector at Go's default unless GOGC is set.
func BenchmarkPlanInProcess10kApplied(b *testing.B) {
	dir, url := appliedDir(b, 10000, blocks)
	b.Setenv("GENFORM_BASE_URL", url)
	b.Setenv("GENFORM_TOKEN", "bench")
	b.Setenv("NO_COLOR", "1")
	wd, err := os.Getwd()
	if err != nil {
		b.Fatal(err)
	}
	defer os.Chdir(wd)
	var out strings.Builder
	b.ResetTimer()
	for b.Loop() {
		out.Reset()
		if code := command.Run([]string{"-chdir=" + dir, "plan"}, nil, &out, io.Discard); code != command.ExitOK {
			b.Fatalf("plan exited %d:\n%.2000s", code, out.String())
		}
	}
	if !strings.Contains(out.String(), "No changes") {
		b.Fatalf("plan is not a no-op:\n%.2000s", out.String())
	}
}
