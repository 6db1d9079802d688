package command_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	cat "github.com/genform/genform/internal/catalog"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/command"
	"github.com/genform/genform/internal/simulator"
	"github.com/genform/genform/reconcile"
	"github.com/genform/genform/statefile"
	"github.com/genform/genform/statefile/boltstate"
	"github.com/genform/genform/statefile/pgstate"
)

// The end-to-end benchmarks behind the performance table of docs/performance.md. They run the real binary
// (built once per benchmark run) so the figures include process start,
// config loading and state opening, and report the child's peak RSS.
//
//	go test -run='^$' -bench=. -benchtime=3x ./internal/command/

var binary string

func genformBinary(b *testing.B) string {
	b.Helper()
	if binary != "" {
		return binary
	}
	dir, err := os.MkdirTemp("", "genform-bench")
	if err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(dir, "genform")
	cmd := exec.Command("go", "build", "-o", out, "../..")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("building genform: %v", err)
	}
	binary = out
	return out
}

// runBinary runs genform in dir and returns its peak RSS in MiB.
// lastChildCPU is the CPU time (user and system) of the process runBinary
// ran last: genform's own, not the simulator's in the test process.
var lastChildCPU time.Duration

func runBinary(b *testing.B, dir string, env []string, args ...string) (stdout string, rssMiB float64) {
	b.Helper()
	cmd := exec.Command(genformBinary(b), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	// ru_maxrss of a child counts the parent's memory at fork time, so
	// the child's own high-water mark is read from /proc while it runs.
	peak := make(chan float64)
	stop := make(chan struct{})
	go func() {
		var hwm float64
		status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
		for {
			if v := readHWM(status); v > hwm {
				hwm = v
			}
			select {
			case <-stop:
				peak <- hwm
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	err := cmd.Wait()
	close(stop)
	rssMiB = <-peak
	lastChildCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
			b.Fatalf("genform %s: %v\n%s\n%s", strings.Join(args, " "), err, out.String(), errb.String())
		}
	}
	return out.String(), rssMiB
}

// readHWM returns VmHWM (peak resident set) in MiB from a /proc status
// file, or 0 once the process is gone.
func readHWM(path string) float64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(rest), "%f", &kb)
			return kb / 1024
		}
	}
	return 0
}

// shape is how a benchmark's configuration declares its n images.
type shape int

const (
	blocks  shape = iota // n image blocks
	forEach              // one block, for_each = toset(a list of n keys)
	catalog              // one block, for_each over a CSV of n products, as examples/catalog
)

// writeImages writes a configuration of n images in the given shape.
func writeImages(b testing.TB, dir string, n int, sh shape) {
	b.Helper()
	var sb strings.Builder
	switch sh {
	case forEach:
		sb.WriteString("locals {\n  keys = [\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&sb, "    \"k%05d\",\n", i)
		}
		sb.WriteString("  ]\n}\n\n")
		sb.WriteString("image \"tile\" {\n  for_each     = toset(local.keys)\n  prompt       = \"tile ${each.key}\"\n  image_number = 1\n}\n")
	case catalog:
		var csv strings.Builder
		csv.WriteString("sku,name,colour\n")
		colours := []string{"terracotta", "sage green", "ink blue", "ochre", "charcoal"}
		for i := 0; i < n; i++ {
			fmt.Fprintf(&csv, "SKU-%06d,product %d,%s\n", i, i, colours[i%len(colours)])
		}
		if err := os.WriteFile(filepath.Join(dir, "products.csv"), []byte(csv.String()), 0o644); err != nil {
			b.Fatal(err)
		}
		sb.WriteString("locals {\n  products = { for p in csvdecode(file(\"products.csv\")) : p.sku => p }\n}\n\n")
		sb.WriteString("image \"product\" {\n  for_each     = local.products\n  prompt       = \"product photo of a ${each.value.colour} ${each.value.name}\"\n  image_number = 1\n  dir          = \"generated/products/${each.key}\"\n}\n")
	default:
		for i := 0; i < n; i++ {
			fmt.Fprintf(&sb, "image \"i%05d\" {\n  prompt       = \"picture number %d\"\n  image_number = 1\n}\n\n", i, i)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "main.gen.hcl"), []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
}

// seedStateWithHistory records every instance of the configuration in dir
// as applied, with one small output file each on disk, so a plan is a
// no-op; before that, earlier generations of each instance (other
// requests, replaced since), which the history keeps.
func seedStateWithHistory(b testing.TB, dir string, earlier int) {
	b.Helper()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		b.Fatal(err)
	}
	defer os.Chdir(wd)
	cfg, diags := config.Load(".", config.Options{Environ: os.Environ(), Providers: providerTables})
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	opts := statefile.Options{Create: true, Command: "bench"}
	var st *statefile.Store
	var err error
	if be := cfg.Settings.Backend; be != nil {
		st, err = pgstate.Open(pgstate.Config{ConnString: be.ConnStr, Schema: be.SchemaName}, opts)
	} else {
		st, err = boltstate.Open(cfg.Settings.StateFile, opts)
	}
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	plan, diags := reconcile.MakePlan(reconcile.PlanInput{Config: cfg, Service: "simulator"})
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	requests := map[addrs.Instance][]byte{}
	for _, r := range cfg.Resources {
		insts, _ := cfg.Expand(r, config.Scope{})
		for _, inst := range insts {
			requests[inst.Addr] = inst.Request
		}
	}
	content := []byte("not really a png")
	err = st.Update(func(tx *statefile.Tx) error {
		for _, c := range plan.Changes {
			if err := os.MkdirAll(c.Dir, 0o755); err != nil {
				return err
			}
			path := filepath.Join(c.Dir, "0.png")
			if err := os.WriteFile(path, content, 0o644); err != nil {
				return err
			}
			fi, err := os.Stat(path)
			if err != nil {
				return err
			}
			for k := earlier; k >= 0; k-- {
				fp, gid := c.Fingerprint, "g-"+c.Addr.String()
				if k > 0 {
					fp, gid = fmt.Sprintf("old-%d-%s", k, c.Fingerprint), fmt.Sprintf("g%d-%s", k, c.Addr)
				}
				// As the simulator's records are: its creation detail
				// is most of one.
				media := "http://127.0.0.1:8787/media/" + gid + "/image-0"
				detail := fmt.Sprintf(`{"creation_id":%q,"user_id":"u-2d711642b726b044","username":"sim-user-2d7116","avatar":"http://127.0.0.1:8787/media/avatar/u-2d711642b726b044.png","type":"text2image","input_type":"text","prompt":%q,"negative_prompt":"","create_time":"2026-11-24T19:00:38Z","update_time":"2026-11-24T19:00:38Z","status":"succeed","video_url":"","thumbnail_url":%q,"settings":{"fps":0,"width":1280,"height":720},"commits":{"like_count":0,"is_like":false,"collects_count":0,"is_collect":false},"output_type":"image","outputs":[{"id":%q,"media_url":%q,"thumbnail_url":%q}]}`,
					gid, c.Addr.String(), media+"-thumb.png", gid+"-0", media+".png", media+"-thumb.png")
				err = tx.Record(&statefile.Resource{
					Addr: c.Addr, Endpoint: addrs.Text2Image, Fingerprint: fp, Request: requests[c.Addr],
					GenerationID: gid, CreationID: gid, Status: "succeed", Dir: c.Dir, Detail: []byte(detail),
					Outputs: []statefile.Output{{Index: 0, ID: gid + "-0", Path: filepath.ToSlash(path), Size: fi.Size(), ModTime: fi.ModTime(),
						SHA256: hashBytes(content), MediaURL: media + ".png", ThumbnailURL: media + "-thumb.png", ContentType: "image/png"}},
				})
				if err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	// The files and the state written here reach the disk now, and this
	// process collects the garbage of seeding now, not while the plan
	// being measured runs: the kernel writing back 100,000 files, or a
	// collection of a heap that large, competes with it for the cores.
	syscall.Sync()
	debug.FreeOSMemory()
}

func benchPlanNoOp(b *testing.B, n int, sh shape) { benchPlanNoOpHistory(b, n, sh, 0) }

// benchPlanNoOpHistory is benchPlanNoOp with earlier generations of every
// instance in the history.
func benchPlanNoOpHistory(b *testing.B, n int, sh shape, earlier int) {
	dir := b.TempDir()
	writeImages(b, dir, n, sh)
	seedStateWithHistory(b, dir, earlier)
	var peak float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, rss := runBinary(b, dir, []string{"NO_COLOR=1", "GENFORM_BASE_URL="}, "plan", "-detailed-exitcode")
		if !strings.Contains(out, "No changes") {
			b.Fatalf("plan is not a no-op:\n%.2000s", out)
		}
		peak = max(peak, rss)
	}
	b.ReportMetric(peak, "peak-MiB")
}

// BenchmarkPlanNoOp10kBlocks: a no-op plan of 10,000 resources, state and
// files present (target: under 0.2 s and 64 MiB).
func BenchmarkPlanNoOp10kBlocks(b *testing.B)  { benchPlanNoOp(b, 10000, blocks) }
func BenchmarkPlanNoOp10kForEach(b *testing.B) { benchPlanNoOp(b, 10000, forEach) }
func BenchmarkPlanNoOp10kCatalog(b *testing.B) { benchPlanNoOp(b, 10000, catalog) }
func BenchmarkPlanNoOp1kBlocks(b *testing.B)   { benchPlanNoOp(b, 1000, blocks) }

// BenchmarkPlanNoOp100kBlocks, BenchmarkPlanNoOp100kForEach and
// BenchmarkPlanNoOp100kCatalog: the catalog's scale, 100,000 instances
// (target: under 2 s and 600 MiB, linear in the instances). Seeding the
// state takes a while; -bench=. runs them with the others.
func BenchmarkPlanNoOp100kBlocks(b *testing.B)  { benchPlanNoOp(b, 100000, blocks) }
func BenchmarkPlanNoOp100kForEach(b *testing.B) { benchPlanNoOp(b, 100000, forEach) }
func BenchmarkPlanNoOp100kCatalog(b *testing.B) { benchPlanNoOp(b, 100000, catalog) }

// BenchmarkPlanNoOp10kHistory50k: the no-op plan of 10,000 blocks with
// 50,000 generations in the history (target: within 10% of the same plan
// without a history, BenchmarkPlanNoOp10kBlocks).
func BenchmarkPlanNoOp10kHistory50k(b *testing.B) { benchPlanNoOpHistory(b, 10000, blocks, 4) }

// BenchmarkPlanInProcess10kBlocks and BenchmarkPlanInProcess10kCatalog
// run the no-op plan of BenchmarkPlanNoOp10kBlocks and ...Catalog in the
// test's own process, where -cpuprofile and -memprofile see it (the child
// process of the others is out of their reach); its figures lack process
// start, and the collector runs at Go's default unless GOGC is set:
//
//	go test -run='^$' -bench=PlanInProcess10kBlocks -benchtime=20x -cpuprofile=cpu.out ./internal/command/
//	go tool pprof -top command.test cpu.out
func BenchmarkPlanInProcess10kBlocks(b *testing.B)  { benchPlanInProcess(b, 10000, blocks) }
func BenchmarkPlanInProcess10kCatalog(b *testing.B) { benchPlanInProcess(b, 10000, catalog) }

func benchPlanInProcess(b *testing.B, n int, sh shape) {
	dir := b.TempDir()
	writeImages(b, dir, n, sh)
	seedStateWithHistory(b, dir, 0)
	b.Setenv("GENFORM_BASE_URL", "")
	b.Setenv("NO_COLOR", "1")
	var out strings.Builder
	b.ResetTimer()
	for b.Loop() {
		out.Reset()
		if code := command.Run([]string{"-chdir=" + dir, "plan"}, nil, &out, io.Discard); code != command.ExitOK {
			b.Fatalf("plan exited %d", code)
		}
	}
	if !strings.Contains(out.String(), "No changes") {
		b.Fatalf("plan is not a no-op:\n%.2000s", out.String())
	}
}

// BenchmarkPlanCreate5k: a plan of 5,000 new resources.
func BenchmarkPlanCreate5k(b *testing.B) {
	dir := b.TempDir()
	writeImages(b, dir, 5000, blocks)
	var peak float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, rss := runBinary(b, dir, []string{"NO_COLOR=1", "GENFORM_BASE_URL="}, "plan")
		if !strings.Contains(out, "Plan: 5000 to generate") {
			b.Fatalf("unexpected plan:\n%.2000s", out)
		}
		peak = max(peak, rss)
	}
	b.ReportMetric(peak, "peak-MiB")
}

// BenchmarkApply200Images: 200 images against a simulator with 1 s
// latency at parallelism 40; the ideal is 5 s. Reports the ratio to the
// ideal and the status requests per job.
func BenchmarkApply200Images(b *testing.B) { benchApply200(b, false) }

// benchApply200 is BenchmarkApply200Images, with the state in the file or
// in PostgreSQL.
func benchApply200(b *testing.B, pg bool) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := b.TempDir()
		if pg {
			usePostgres(b, dir)
		}
		inst, err := simulator.Listen("127.0.0.1:0", simulator.Options{Latency: time.Second, RPM: 1_000_000, MaxConcurrent: 40})
		if err != nil {
			b.Fatal(err)
		}
		var sb strings.Builder
		sb.WriteString("service {\n  parallelism = 40\n  requests_per_minute = 1000000\n}\n\n")
		sb.WriteString("image \"img\" {\n  count        = 200\n  prompt       = \"frame ${count.index}\"\n  image_number = 1\n}\n")
		os.WriteFile(filepath.Join(dir, "main.gen.hcl"), []byte(sb.String()), 0o644)
		b.StartTimer()
		start := time.Now()
		out, _ := runBinary(b, dir, []string{"NO_COLOR=1", "GENFORM_BASE_URL=" + inst.URL, "GENFORM_TOKEN=t", "GENFORM_IN_AUTOMATION=1"}, "apply", "-auto-approve")
		elapsed := time.Since(start)
		b.StopTimer()
		if !strings.Contains(out, "Apply complete! 200 generated") {
			b.Fatalf("apply did not complete:\n%.3000s", out)
		}
		rep := inst.Server.Jobs()
		polls := 0
		for _, j := range rep.Jobs {
			polls += j.StatusRequests
		}
		inst.Close()
		b.ReportMetric(elapsed.Seconds(), "s/apply")
		b.ReportMetric(elapsed.Seconds()/5, "x-ideal")
		b.ReportMetric(float64(polls)/float64(len(rep.Jobs)), "polls/job")
		b.StartTimer()
	}
}

// kept holds the directories of keptDir, removed when the tests end.
var kept struct {
	sync.Mutex
	dir string
	n   int
}

// keptDir is a new directory that lives until the test process ends,
// where b.TempDir's is removed when the benchmark function returns.
func keptDir(b *testing.B) string {
	kept.Lock()
	defer kept.Unlock()
	if kept.dir == "" {
		d, err := os.MkdirTemp("", "genform-bench-")
		if err != nil {
			b.Fatal(err)
		}
		kept.dir = d
	}
	kept.n++
	d := filepath.Join(kept.dir, strconv.Itoa(kept.n))
	if err := os.Mkdir(d, 0o755); err != nil {
		b.Fatal(err)
	}
	return d
}

// BenchmarkApplyOverhead: genform's own CPU per job, the simulator
// excluded (it runs in the test process; genform in its own): an apply of
// 500 images against a simulator that finishes every job at once, so
// that what the child process spends is its work per job: the requests
// and their answers, the state's commits, the downloads written and
// renamed (target: under 1 ms a job).
//
// The working directories are kept until the test process ends, not
// removed after each run of the benchmark function: on ext4, creating
// files in the 30 seconds after thousands were deleted costs up to 0.2 ms
// more a file, as the allocator skips the inodes just freed, and the run
// with b.N = 1 that precedes the timed one would otherwise delete its 500
// outputs just before the timing starts.
func BenchmarkApplyOverhead(b *testing.B) {
	const n = 500
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := keptDir(b)
		inst, err := simulator.Listen("127.0.0.1:0", simulator.Options{Latency: time.Millisecond, RPM: 1_000_000, MaxConcurrent: 1000})
		if err != nil {
			b.Fatal(err)
		}
		src := fmt.Sprintf("service {\n  parallelism = 50\n  requests_per_minute = 1000000\n  poll_interval = \"50ms\"\n}\n\nimage \"img\" {\n  count        = %d\n  prompt       = \"frame ${count.index}\"\n  image_number = 1\n}\n", n)
		if err := os.WriteFile(filepath.Join(dir, "main.gen.hcl"), []byte(src), 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		out, _ := runBinary(b, dir, []string{"NO_COLOR=1", "GENFORM_BASE_URL=" + inst.URL, "GENFORM_TOKEN=bench-token", "GENFORM_IN_AUTOMATION=1"}, "apply", "-auto-approve")
		b.StopTimer()
		cpu += lastChildCPU
		inst.Close()
		if !strings.Contains(out, fmt.Sprintf("Apply complete! %d generated", n)) {
			b.Fatalf("apply did not complete:\n%.3000s", out)
		}
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*n)/1000, "cpu-ms/job")
}

// BenchmarkVersion: `genform version` (target: under 20 ms).
func BenchmarkVersion(b *testing.B) {
	dir := b.TempDir()
	genformBinary(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, _ := runBinary(b, dir, nil, "version")
		if !strings.Contains(out, "state schema") {
			b.Fatalf("version printed %q", out)
		}
	}
}

// countingHandler records when every API request reached the service.
type countingHandler struct {
	next  http.Handler
	mu    sync.Mutex
	times []time.Time
}

func (c *countingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/v1/") {
		c.mu.Lock()
		c.times = append(c.times, time.Now())
		c.mu.Unlock()
	}
	c.next.ServeHTTP(w, r)
}

// peakWindow is the most requests seen in any window of length w.
func (c *countingHandler) peakWindow(w time.Duration) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	best, j := 0, 0
	for i := range c.times {
		for c.times[i].Sub(c.times[j]) >= w {
			j++
		}
		best = max(best, i-j+1)
	}
	return best
}

// applyAgainst runs apply in a fresh directory holding config against a
// simulator behind a request counter, and returns the counter and report.
func applyAgainst(b *testing.B, config string, opts simulator.Options) (*countingHandler, simulator.JobsReport, time.Duration) {
	dir := b.TempDir()
	sim, err := simulator.New(opts)
	if err != nil {
		b.Fatal(err)
	}
	counter := &countingHandler{next: sim}
	srv := httptest.NewServer(counter)
	defer srv.Close()
	os.WriteFile(filepath.Join(dir, "main.gen.hcl"), []byte(config), 0o644)
	start := time.Now()
	out, _ := runBinary(b, dir, []string{"NO_COLOR=1", "GENFORM_BASE_URL=" + srv.URL, "GENFORM_TOKEN=t", "GENFORM_IN_AUTOMATION=1"}, "apply", "-auto-approve")
	elapsed := time.Since(start)
	if !strings.Contains(out, "Apply complete!") {
		b.Fatalf("apply did not complete:\n%.3000s", out)
	}
	return counter, sim.Jobs(), elapsed
}

// BenchmarkRequestRate: requests_per_minute set below the service's limit
// must never be exceeded and must draw no 429. 40 images through a budget
// of 240 requests per minute, against a service allowing 300.
func BenchmarkRequestRate(b *testing.B) {
	config := "service {\n  requests_per_minute = 240\n  parallelism = 40\n}\nimage \"img\" {\n  count = 40\n  prompt = \"tile ${count.index}\"\n  image_number = 1\n}\n"
	for i := 0; i < b.N; i++ {
		counter, rep, elapsed := applyAgainst(b, config, simulator.Options{Latency: time.Second, RPM: 300})
		b.ReportMetric(float64(counter.peakWindow(time.Minute)), "peak-req/min")
		b.ReportMetric(float64(rep.Throttled), "429s")
		b.ReportMetric(elapsed.Seconds(), "s/apply")
	}
}

// BenchmarkPollsPerJob: status requests per job must stay within
// latency / poll_interval + 3; here 3 s / 1 s + 3 = 6.
func BenchmarkPollsPerJob(b *testing.B) {
	config := "service {\n  poll_interval = \"1s\"\n  requests_per_minute = 100000\n}\nimage \"img\" {\n  count = 20\n  prompt = \"tile ${count.index}\"\n  image_number = 1\n}\n"
	for i := 0; i < b.N; i++ {
		_, rep, _ := applyAgainst(b, config, simulator.Options{Latency: 3 * time.Second, RPM: 100000})
		most, total := 0, 0
		for _, j := range rep.Jobs {
			most = max(most, j.StatusRequests)
			total += j.StatusRequests
		}
		b.ReportMetric(float64(total)/float64(len(rep.Jobs)), "polls/job")
		b.ReportMetric(float64(most), "max-polls")
	}
}

// providerTables is what configuration knows of the providers genform
// speaks, as the command hands it in.
var providerTables = cat.Tables
