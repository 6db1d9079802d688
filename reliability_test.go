package main

// Reliability tests of issue 6: apply killed at random moments, apply
// against a flaky and rate-limited service, and the token kept out of
// everything genform writes. Each runs the real genform binary (the test
// binary, which testscript.Main installs in PATH under that name) against
// a simulator in this process, and checks what a suspicious user would:
// the state file, the files on disk, and what the simulator saw.
//
// The short versions run in the suite. The long ones are opt-in:
//
//	go test -run TestCrashApply -crash.rounds=200 .
//	go test -run TestFaultSoak -soak.long -timeout 30m .

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/genform/genform/service"
	"github.com/genform/genform/simulator"
	"github.com/genform/genform/statefile"

	bolt "go.etcd.io/bbolt"
)

var (
	crashRounds = flag.Int("crash.rounds", 10, "TestCrashApply: how many applies to kill before the last one runs to completion")
	crashSeed   = flag.Uint64("crash.seed", 1, "TestCrashApply: seed of the kill moments")
	soakLong    = flag.Bool("soak.long", false, "TestFaultSoak: the long version (low -rpm, slower jobs); takes minutes")
	soakBudget  = flag.Int("soak.budget", 0, "TestFaultSoak: requests_per_minute instead of the version's own, e.g. above the simulator's limit to see the 429s the budget prevents")
)

// fakeToken is the token of the tests that are not about tokens. genform
// redacts the token wherever it appears in a message, so a realistic one
// keeps the messages the tests read intact.
const fakeToken = "test-token-rel-0451"

// result is what one genform process did.
type result struct {
	args           []string
	stdout, stderr string
	code           int
	took           time.Duration
}

func (r result) String() string {
	return fmt.Sprintf("genform %s: exit %d after %s\n--- stdout\n%s--- stderr\n%s", strings.Join(r.args, " "), r.code, r.took.Round(time.Millisecond), r.stdout, r.stderr)
}

// genformPath is the genform command testscript.Main put in PATH.
func genformPath(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("genform")
	if err != nil {
		t.Fatalf("genform is not in PATH (testscript.Main installs it): %v", err)
	}
	return p
}

// childEnv is the environment of a genform process: the test's own minus
// every GENFORM_ variable, plus automation mode and extra.
func childEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GENFORM_") || strings.HasPrefix(kv, "NO_COLOR=") {
			continue
		}
		env = append(env, kv)
	}
	if os.Getenv("GORACE") == "" {
		// Under -race genform is the race-enabled test binary, which by
		// default sleeps a second at exit.
		env = append(env, "GORACE=atexit_sleep_ms=10")
	}
	return append(env, append([]string{"GENFORM_IN_AUTOMATION=1", "NO_COLOR=1"}, extra...)...)
}

// command prepares genform args in dir.
func command(t testing.TB, dir string, env []string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	cmd := exec.Command(genformPath(t), args...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return cmd, &stdout, &stderr
}

// genform runs genform args in dir to completion.
func genform(t testing.TB, dir string, env []string, args ...string) result {
	t.Helper()
	cmd, stdout, stderr := command(t, dir, env, args...)
	start := time.Now()
	err := cmd.Run()
	r := result{args: args, stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("running genform %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// startSim starts a simulator on a loopback port for the test's lifetime.
func startSim(t testing.TB, opts simulator.Options) *simulator.Instance {
	t.Helper()
	inst, err := simulator.Listen("127.0.0.1:0", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close() })
	return inst
}

// promptOf is the prompt of a job's request body.
func promptOf(t testing.TB, body json.RawMessage) string {
	t.Helper()
	var b struct {
		Prompt string `json:"prompt"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatalf("job body %s: %v", body, err)
	}
	return b.Prompt
}

// jobsByPrompt counts the simulator's jobs per prompt, all of them and
// those that ended failed.
func jobsByPrompt(t testing.TB, rep simulator.JobsReport) (all, failed map[string]int) {
	all, failed = map[string]int{}, map[string]int{}
	for _, j := range rep.Jobs {
		p := promptOf(t, j.Body)
		all[p]++
		if j.Status == "failed" {
			failed[p]++
		}
	}
	return all, failed
}

// workspace is a working directory inside a parent that holds nothing
// else, so that anything genform writes outside it is seen.
type workspace struct {
	parent, dir string
}

func newWorkspace(t testing.TB, files map[string]string) workspace {
	t.Helper()
	parent := t.TempDir()
	ws := workspace{parent: parent, dir: filepath.Join(parent, "work")}
	for name, text := range files {
		p := filepath.Join(ws.dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(ws.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return ws
}

// checkNothingOutside fails when the parent holds anything but the working
// directory and the names in allowed.
func (ws workspace) checkNothingOutside(t testing.TB, allowed ...string) {
	t.Helper()
	entries, err := os.ReadDir(ws.parent)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "work" && !slices.Contains(allowed, e.Name()) {
			t.Errorf("genform wrote %s outside its working directory", filepath.Join(ws.parent, e.Name()))
		}
	}
}

func (ws workspace) statePath() string { return filepath.Join(ws.dir, ".genform", "state.db") }

// simBytes fetches what the simulator serves for an output: the plain
// media URL, or for a watermark-free video a freshly signed URL. Injected
// faults (500s, truncated bodies) are retried.
func simBytes(t testing.TB, sim *simulator.Instance, token string, rec *statefile.Resource, o statefile.Output) []byte {
	t.Helper()
	url := o.MediaURL
	if rec.Kind == "video" && rec.WatermarkFree {
		var v struct {
			Value struct {
				URL string `json:"url"`
			} `json:"value"`
		}
		b := fetch(t, http.MethodPost, sim.URL+"/v1/creation/"+rec.CreationID+"/watermark-free-url", token)
		if err := json.Unmarshal(b, &v); err != nil || v.Value.URL == "" {
			t.Fatalf("watermark-free URL of %s: %s (%v)", rec.Addr, b, err)
		}
		url = v.Value.URL
	}
	return fetch(t, http.MethodGet, url, token)
}

// fetch sends one request, retrying the simulator's injected faults.
func fetch(t testing.TB, method, url, token string) []byte {
	t.Helper()
	var last error
	for range 40 {
		req, err := http.NewRequest(method, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			last = err
			continue
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case err != nil:
			last = err
		case resp.StatusCode == http.StatusInternalServerError:
			last = fmt.Errorf("%s", resp.Status)
		case resp.StatusCode == http.StatusTooManyRequests:
			last = fmt.Errorf("%s", resp.Status)
			time.Sleep(time.Second)
		case resp.StatusCode != http.StatusOK:
			t.Fatalf("%s %s: %s: %s", method, url, resp.Status, b)
		default:
			return b
		}
	}
	t.Fatalf("%s %s: %v", method, url, last)
	return nil
}

// verified is what verifyState found.
type verified struct {
	outputs   int
	tempFiles []string
}

// verifyState checks the end state of a converged apply: bbolt's check
// passes; exactly the addresses of want are recorded, each succeeded, no
// intent left; every output is on disk with the recorded sha256, which is
// also the sha256 of the bytes the simulator serves for it; and the output
// directory holds no file the state does not know, apart from temporary
// files of killed downloads, which it returns.
func verifyState(t testing.TB, ws workspace, sim *simulator.Instance, token string, want []string) verified {
	t.Helper()
	st, err := statefile.Open(ws.statePath(), statefile.Options{Command: "verify"})
	if err != nil {
		t.Fatalf("opening the state: %v", err)
	}
	defer st.Close()
	if err := st.Check(); err != nil {
		t.Fatalf("bbolt check: %v", err)
	}
	snap, err := st.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	for addr, in := range snap.Intents {
		t.Errorf("intent left for %s (generation %q)", addr, in.GenerationID)
	}
	var got []string
	for addr := range snap.Resources {
		got = append(got, addr)
	}
	sort.Strings(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Fatalf("state holds %d resources %v\nwant %d %v", len(got), got, len(want), want)
	}
	var v verified
	known := map[string]bool{}
	for _, addr := range want {
		rec := snap.Resources[addr]
		if rec.Status != "succeed" || len(rec.Outputs) == 0 {
			t.Errorf("%s: status %q with %d outputs, want succeed", addr, rec.Status, len(rec.Outputs))
			continue
		}
		for _, o := range rec.Outputs {
			b, err := os.ReadFile(filepath.Join(ws.dir, filepath.FromSlash(o.Path)))
			if err != nil {
				t.Errorf("%s output %d: %v", addr, o.Index, err)
				continue
			}
			known[filepath.Clean(filepath.FromSlash(o.Path))] = true
			if sum := sha(b); sum != o.SHA256 {
				t.Errorf("%s output %d (%s): sha256 %s on disk, %s recorded", addr, o.Index, o.Path, sum, o.SHA256)
			}
			if sum := sha(simBytes(t, sim, token, rec, o)); sum != o.SHA256 {
				t.Errorf("%s output %d (%s): the simulator serves sha256 %s, %s recorded", addr, o.Index, o.Path, sum, o.SHA256)
			}
			v.outputs++
		}
	}
	err = filepath.WalkDir(filepath.Join(ws.dir, "generated"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(ws.dir, path)
		switch {
		case service.IsTempFile(d.Name()):
			v.tempFiles = append(v.tempFiles, rel)
		case !known[rel]:
			t.Errorf("%s is in the output directory but not in the state", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// crashConfig declares 50 resources of every kind: images with one or two
// outputs, for_each instances, text-to-video (one watermark-free), an
// image-to-video and a key-frame video depending on images. Every prompt
// names the epoch, so a new epoch replaces all 50. It returns the
// configuration and the address of each prompt.
func crashConfig(epoch int) (string, map[string]string) {
	var b strings.Builder
	addrs := map[string]string{}
	// The request budget is the soak's subject; here it would only slow
	// the rounds down.
	b.WriteString("service {\n  requests_per_minute = 100000\n}\n\n")
	for i := range 40 {
		p := fmt.Sprintf("crash image %d, epoch %d", i, epoch)
		fmt.Fprintf(&b, "image \"i%02d\" {\n  prompt       = %q\n  image_number = %d\n  aspect_ratio = \"1:1\"\n}\n\n", i, p, 1+i%2)
		addrs[p] = fmt.Sprintf("image.i%02d", i)
	}
	fmt.Fprintf(&b, "image \"set\" {\n  for_each     = toset([\"a\", \"b\", \"c\", \"d\", \"e\"])\n  prompt       = \"crash set ${each.key}, epoch %d\"\n  image_number = 1\n  aspect_ratio = \"1:1\"\n}\n\n", epoch)
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		addrs[fmt.Sprintf("crash set %s, epoch %d", k, epoch)] = fmt.Sprintf("image.set[%q]", k)
	}
	for i := range 3 {
		p := fmt.Sprintf("crash video %d, epoch %d", i, epoch)
		fmt.Fprintf(&b, "video \"t%d\" {\n  prompt         = %q\n  duration       = 2\n  watermark_free = %v\n}\n\n", i, p, i == 0)
		addrs[p] = fmt.Sprintf("video.t%d", i)
	}
	p := fmt.Sprintf("crash animate, epoch %d", epoch)
	fmt.Fprintf(&b, "video \"anim\" {\n  source_image = image.i00.outputs[0].media_url\n  prompt       = %q\n  duration     = 2\n}\n\n", p)
	addrs[p] = "video.anim"
	p = fmt.Sprintf("crash keyframes, epoch %d", epoch)
	fmt.Fprintf(&b, "video \"kf\" {\n  source_images = [image.i01.outputs[1].media_url, image.i02.outputs[0].media_url]\n  frame_indices = [0, 15]\n  input_width   = 720\n  input_height  = 720\n  duration      = 2\n  prompt        = %q\n}\n", p)
	addrs[p] = "video.kf"
	return b.String(), addrs
}

// inFlightWarning is how plan names a resource whose create request may
// have reached the service before the apply sending it died.
var inFlightWarning = regexp.MustCompile(`sent the create request for (\S+) at [^;]*; that generation may already have been paid for`)

// TestCrashApply kills apply with SIGKILL at random moments, round after
// round, then lets one finish, and checks that nothing was lost, nothing
// left half-written, and nothing generated twice except where genform
// warned that a create request was in flight when it died. When an apply
// finishes before its kill, the next epoch changes every prompt, so that
// every round has 50 generations (creates, then replaces) to interrupt.
func TestCrashApply(t *testing.T) {
	if testing.Short() {
		t.Skip("runs genform dozens of times")
	}
	const token = "crash-token"
	sim := startSim(t, simulator.Options{
		Token:   token,
		Latency: time.Second,
		DataDir: t.TempDir(),
		RPM:     -1, // the rounds are many and quick; the budget is the soak's concern
	})
	ws := newWorkspace(t, nil)
	epoch := 0
	prompts := map[string]string{} // every epoch's prompts -> address
	setEpoch := func(n int) {
		cfg, addrs := crashConfig(n)
		if err := os.WriteFile(filepath.Join(ws.dir, "main.gen.hcl"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		for p, a := range addrs {
			prompts[p] = a
		}
		epoch = n
	}
	setEpoch(0)
	env := childEnv("GENFORM_BASE_URL="+sim.URL, "GENFORM_TOKEN="+token)
	rng := rand.New(rand.NewPCG(*crashSeed, 0xc4a5))
	start := time.Now()

	type epochAddr struct {
		epoch int
		addr  string
	}
	warned := map[epochAddr]int{} // rounds whose plan printed the in-flight warning
	resumed := 0                  // resumes the plans showed
	note := func(r result) {
		for _, m := range inFlightWarning.FindAllStringSubmatch(r.stdout+r.stderr, -1) {
			warned[epochAddr{epoch, m[1]}]++
		}
		resumed += strings.Count(r.stdout, "will be resumed")
	}
	kills := 0
	for round := range *crashRounds {
		delay := 50*time.Millisecond + time.Duration(rng.Int64N(int64(2450*time.Millisecond)))
		cmd, stdout, stderr := command(t, ws.dir, env, "apply", "-auto-approve", "-parallelism", "10")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(delay):
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			<-done
			kills++
			err = errors.New("killed")
		}
		note(result{stdout: stdout.String(), stderr: stderr.String()})
		// Whatever moment the kill hit, the state file is consistent.
		checkStateAfterKill(t, ws, round)
		if err == nil {
			// It finished before its kill: the next round replaces all.
			setEpoch(epoch + 1)
		}
	}
	killing := time.Since(start)

	// Then applies run to completion until one succeeds.
	var last result
	for i := range 3 {
		last = genform(t, ws.dir, env, "apply", "-auto-approve", "-parallelism", "10")
		note(last)
		if last.code == 0 {
			break
		}
		t.Logf("completing apply %d failed:\n%s", i, last)
	}
	if last.code != 0 {
		t.Fatalf("apply does not converge after the kills:\n%s", last)
	}
	if r := genform(t, ws.dir, env, "plan", "-detailed-exitcode"); r.code != 0 || !strings.Contains(r.stdout, "No changes.") {
		t.Fatalf("plan after the last apply is not empty:\n%s", r)
	}
	completing := time.Since(start) - killing

	rep := sim.Server.Jobs()
	_, final := crashConfig(epoch)
	v := verifyState(t, ws, sim, token, slices.Collect(maps.Values(final)))

	all, _ := jobsByPrompt(t, rep)
	creates, twice := 0, 0
	for prompt, n := range all {
		addr, ok := prompts[prompt]
		if !ok {
			t.Errorf("the simulator made %d job(s) of unknown prompt %q", n, prompt)
			continue
		}
		var e int
		fmt.Sscanf(prompt[strings.LastIndex(prompt, "epoch "):], "epoch %d", &e)
		w := warned[epochAddr{e, addr}]
		creates += n
		if n > 1 {
			twice++
		}
		if n > 1+w {
			t.Errorf("%s (epoch %d): generated %d times, but genform warned of an in-flight create only %d time(s)", addr, e, n, w)
		}
	}
	for prompt, addr := range final {
		if all[prompt] == 0 {
			t.Errorf("%s: the simulator never received its create request", addr)
		}
	}
	if len(v.tempFiles) > 0 {
		t.Errorf("temporary files of killed downloads are left: %v", v.tempFiles)
	}
	ws.checkNothingOutside(t)
	t.Logf("crash test: %d rounds (%d killed) over %d epochs of 50 resources in %s, completed in %s; %d outputs verified; %d creates for %d prompts, %d generated twice after an in-flight warning (%d warnings); %d resumes shown; %s in all",
		*crashRounds, kills, epoch+1, killing.Round(time.Millisecond), completing.Round(time.Millisecond), v.outputs, creates, len(all), twice, len(warned), resumed, time.Since(start).Round(time.Second))
}

// checkStateAfterKill opens the state left by a killed apply, if it got as
// far as creating one, and runs bbolt's check and every record's decoder.
func checkStateAfterKill(t *testing.T, ws workspace, round int) {
	t.Helper()
	st, err := statefile.Open(ws.statePath(), statefile.Options{Command: "crash-check"})
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		t.Fatalf("round %d: the state left by the killed apply does not open: %v", round, err)
	}
	defer st.Close()
	if err := st.Check(); err != nil {
		t.Fatalf("round %d: the state left by the killed apply fails its check: %v", round, err)
	}
}

// soakParams are the sizes of one version of the fault soak.
type soakParams struct {
	resources   int
	latency     time.Duration
	simRPM      int // the simulator's limit
	budget      int // requests_per_minute, below simRPM
	parallelism int
	maxRuns     int
}

// TestFaultSoak applies 100 images against a service that answers 20% of
// requests with 500, cuts 10% of downloads short, fails 5% of generations,
// and limits the request rate. Apply is rerun until it succeeds, within a
// bounded number of runs; then every file matches the simulator's bytes,
// nothing was generated twice except to replace a failed generation, and
// with requests_per_minute below the service's limit no request was ever
// answered 429.
func TestFaultSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("applies 100 resources against a faulty service")
	}
	p := soakParams{resources: 100, latency: time.Second, simRPM: 2000, budget: 1500, parallelism: 20, maxRuns: 6}
	if *soakLong {
		// The rate limit binds here: about 700 requests at 150 a minute.
		// The budget leaves room below the limit for a rerun's requests,
		// since each genform process keeps its own budget.
		p = soakParams{resources: 100, latency: 2 * time.Second, simRPM: 200, budget: 150, parallelism: 10, maxRuns: 6}
	}
	if *soakBudget > 0 {
		p.budget = *soakBudget
	}
	const token = "soak-token"
	sim := startSim(t, simulator.Options{
		Token:        token,
		Latency:      p.latency,
		ErrorRate:    0.2,
		TruncateRate: 0.1,
		FailRate:     0.05,
		RPM:          p.simRPM,
		Seed:         42,
	})
	cfg := fmt.Sprintf(`service {
  requests_per_minute = %d
  poll_interval       = "2s"
}

image "s" {
  count        = %d
  prompt       = "soak ${count.index}"
  image_number = 1
  aspect_ratio = "1:1"
}
`, p.budget, p.resources)
	ws := newWorkspace(t, map[string]string{"main.gen.hcl": cfg})
	env := childEnv("GENFORM_BASE_URL="+sim.URL, "GENFORM_TOKEN="+token)

	start := time.Now()
	var runs []result
	for len(runs) < p.maxRuns {
		r := genform(t, ws.dir, env, "apply", "-auto-approve", "-parallelism", fmt.Sprint(p.parallelism))
		runs = append(runs, r)
		t.Logf("run %d: exit %d after %s", len(runs), r.code, time.Since(start).Round(time.Second))
		if r.code == 0 {
			break
		}
		if !strings.Contains(r.stderr, "failed on the service") && !strings.Contains(r.stderr, "rerun apply") {
			t.Fatalf("run %d failed for a reason a rerun does not fix:\n%s", len(runs), r)
		}
	}
	if last := runs[len(runs)-1]; last.code != 0 {
		t.Fatalf("apply did not converge in %d runs; the last:\n%s", p.maxRuns, last)
	}
	elapsed := time.Since(start)
	if r := genform(t, ws.dir, env, "plan", "-detailed-exitcode"); r.code != 0 {
		t.Fatalf("plan after convergence is not empty:\n%s", r)
	}
	rep := sim.Server.Jobs() // before verifyState adds requests of its own

	var want []string
	for i := range p.resources {
		want = append(want, fmt.Sprintf("image.s[%d]", i))
	}
	v := verifyState(t, ws, sim, token, want)
	if len(v.tempFiles) > 0 {
		t.Logf("temporary files left: %v", v.tempFiles)
	}

	if rep.Throttled != 0 {
		t.Errorf("the simulator answered 429 %d times, with requests_per_minute = %d and its limit %d", rep.Throttled, p.budget, p.simRPM)
	}
	all, failed := jobsByPrompt(t, rep)
	failedJobs := 0
	for i := range p.resources {
		prompt := fmt.Sprintf("soak %d", i)
		failedJobs += failed[prompt]
		if ok := all[prompt] - failed[prompt]; ok != 1 {
			t.Errorf("image.s[%d]: %d jobs that did not fail (and %d failed ones), want exactly 1", i, ok, failed[prompt])
		}
	}
	t.Logf("fault soak: %d resources converged in %d run(s) and %s; %d jobs (%d failed and replaced), %d API requests, %d throttled; %d outputs verified against the simulator's bytes",
		p.resources, len(runs), elapsed.Round(time.Second), len(rep.Jobs), failedJobs, rep.Requests, rep.Throttled, v.outputs)
}

// TestSecretsNeverWritten runs every command a user runs, with the request
// trace on, against a service that fails often enough for retries and
// error messages to be printed, and proves that the token appears in none
// of the state file, the saved plans, the gallery, any other file genform
// wrote, or anything it printed.
func TestSecretsNeverWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("runs genform many times")
	}
	const secret = "tok-SECRET-4242-genform"
	sim := startSim(t, simulator.Options{Token: secret, Latency: 300 * time.Millisecond, ErrorRate: 0.15, Seed: 3})
	other := startSim(t, simulator.Options{Token: "another-token", Latency: 300 * time.Millisecond})
	ws := newWorkspace(t, map[string]string{"main.gen.hcl": `
service {
  token         = env("GEN_TOKEN")
  poll_interval = "1s"
}

variable "style" {
  default = "noir"
}

image "a" {
  prompt       = "a red apple, ${var.style}"
  image_number = 2
}

image "b" {
  for_each     = toset(["x", "y"])
  prompt       = "a pear ${each.key}"
  image_number = 1
}

video "v" {
  source_image   = image.a.outputs[0].media_url
  prompt         = "slow spin"
  duration       = 2
  watermark_free = true
}

output "a_file" {
  value = image.a.outputs[0].path
}
`})
	env := childEnv("GENFORM_BASE_URL="+sim.URL, "GEN_TOKEN="+secret, "GENFORM_TOKEN="+secret, "GENFORM_LOG=debug")
	var runs []result
	run := func(wantCode int, env []string, args ...string) result {
		t.Helper()
		r := genform(t, ws.dir, env, args...)
		runs = append(runs, r)
		if r.code != wantCode {
			t.Fatalf("exit %d, want %d:\n%s", r.code, wantCode, r)
		}
		return r
	}
	run(0, env, "validate")
	run(0, env, "validate", "-json")
	run(0, env, "plan")
	run(0, env, "plan", "-json")
	run(0, env, "plan", "-format=markdown")
	run(0, env, "plan", "-out=saved.tfplan")
	run(0, env, "show", "saved.tfplan")
	run(0, env, "show", "-json", "saved.tfplan")
	applied := run(0, env, "apply", "saved.tfplan")
	run(0, env, "apply", "-auto-approve")
	run(0, env, "show")
	run(0, env, "show", "-json")
	run(0, env, "show", "image.a")
	run(0, env, "state", "list")
	run(0, env, "state", "show", "video.v")
	run(0, env, "output")
	run(0, env, "output", "-json")
	run(0, env, "graph")
	run(0, env, "gallery", "-out=gallery.html")
	run(0, env, "plan", "-replace=image.a", "-out=replace.tfplan")
	// A service that refuses the token: its errors are printed.
	refused := run(1, childEnv("GENFORM_BASE_URL="+other.URL, "GEN_TOKEN="+secret, "GENFORM_LOG=debug"), "apply", "-auto-approve", "-target=image.a")
	if !strings.Contains(refused.stderr, "401") {
		t.Errorf("the refused apply does not report the service's 401:\n%s", refused)
	}

	// The token was really used and the trace was really on: the tests
	// below would otherwise prove nothing.
	if jobs := len(sim.Server.Jobs().Jobs); jobs == 0 {
		t.Fatal("the simulator that accepts only the token made no job")
	}
	if !strings.Contains(applied.stderr, "authorization=[redacted]") || !strings.Contains(applied.stderr, "retrying") {
		t.Fatalf("the apply's debug trace shows no redacted authorization header or no retry:\n%s", applied.stderr)
	}

	forms := map[string]string{
		"the token":            secret,
		"the token in base64":  base64.StdEncoding.EncodeToString([]byte(secret)),
		"the header in base64": base64.StdEncoding.EncodeToString([]byte("Bearer " + secret)),
		"the token in hex":     hex.EncodeToString([]byte(secret)),
	}
	leaks := func(where string, b []byte) {
		for what, s := range forms {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds %s", where, what)
			}
		}
	}
	for _, r := range runs {
		leaks("the stdout of genform "+strings.Join(r.args, " "), []byte(r.stdout))
		leaks("the stderr of genform "+strings.Join(r.args, " "), []byte(r.stderr))
	}
	var files []string
	err := filepath.WalkDir(ws.parent, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		leaks(path, b)
		rel, _ := filepath.Rel(ws.parent, path)
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{".genform/state.db", "saved.tfplan", "replace.tfplan", "gallery.html"} {
		if _, err := os.Stat(filepath.Join(ws.dir, filepath.FromSlash(want))); err != nil {
			t.Errorf("%s was not written, so it was not checked: %v", want, err)
		}
	}
	ws.checkNothingOutside(t)
	slowest := slices.MaxFunc(runs, func(a, b result) int { return cmp.Compare(a.took, b.took) })
	t.Logf("secrets: %d commands and %d files checked (the slowest: genform %s, %s): %v",
		len(runs), len(files), strings.Join(slowest.args, " "), slowest.took.Round(time.Millisecond), files)
}

// copyTree copies the regular files under src into dst.
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// treeSums maps every regular file under dir to its sha256.
func treeSums(t testing.TB, dir string) map[string]string {
	t.Helper()
	sums := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		sums[filepath.ToSlash(rel)] = sha(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

// appliedWorkspace applies a small configuration once and returns a
// function that gives each caller a fresh copy of the result: the working
// directory with its state file and outputs.
func appliedWorkspace(t *testing.T, sim *simulator.Instance, env []string) func(t *testing.T) workspace {
	t.Helper()
	tmpl := newWorkspace(t, map[string]string{"main.gen.hcl": `
image "a" {
  prompt       = "an apple"
  image_number = 2
}

image "b" {
  prompt       = "a pear"
  image_number = 1
}
`})
	if r := genform(t, tmpl.dir, env, "apply", "-auto-approve"); r.code != 0 {
		t.Fatalf("%s", r)
	}
	return func(t *testing.T) workspace {
		ws := newWorkspace(t, nil)
		copyTree(t, tmpl.dir, ws.dir)
		return ws
	}
}

// TestBadStateFile damages the state file in each way a disk, a merge or a
// newer genform can, and runs every command that reads it: each refuses
// with a message that names the file and says what to do, and nothing is
// lost, changed, generated or written outside the working directory.
func TestBadStateFile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs genform many times")
	}
	sim := startSim(t, simulator.Options{Token: fakeToken, Latency: 200 * time.Millisecond})
	env := childEnv("GENFORM_BASE_URL="+sim.URL, "GENFORM_TOKEN="+fakeToken)
	fresh := appliedWorkspace(t, sim, env)
	jobsBefore := len(sim.Server.Jobs().Jobs)

	tests := []struct {
		name   string
		damage func(t *testing.T, path string)
		want   []string
	}{
		{
			name: "random bytes",
			damage: func(t *testing.T, path string) {
				rng := rand.New(rand.NewPCG(1, 2))
				b := make([]byte, 32<<10)
				for i := range b {
					b[i] = byte(rng.Uint32())
				}
				writeFile(t, path, b)
			},
			want: []string{"is not readable", "not a bbolt database", "restore it from version control or a backup"},
		},
		{
			name: "a text file",
			damage: func(t *testing.T, path string) {
				writeFile(t, path, []byte("<<<<<<< HEAD\nthis is not a state file\n=======\n>>>>>>> branch\n"))
			},
			want: []string{"is not readable", "restore it from version control or a backup"},
		},
		{
			name: "truncated to half",
			damage: func(t *testing.T, path string) {
				b := readFile(t, path)
				writeFile(t, path, b[:len(b)/2])
			},
			want: []string{"is not readable", "truncated"},
		},
		{
			name: "written by a newer genform",
			damage: func(t *testing.T, path string) {
				rawBolt(t, path, func(tx *bolt.Tx) error {
					return tx.Bucket([]byte("genform")).Bucket([]byte("meta")).Put([]byte("schema_version"), []byte(fmt.Sprint(statefile.SchemaVersion+1)))
				})
			},
			want: []string{fmt.Sprintf("written by a newer genform (schema %d", statefile.SchemaVersion+1), "upgrade genform"},
		},
		{
			name: "one record damaged",
			damage: func(t *testing.T, path string) {
				rawBolt(t, path, func(tx *bolt.Tx) error {
					return tx.Bucket([]byte("genform")).Bucket([]byte("resources")).Put([]byte("image.a"), []byte{0x08, 0x01, 0x12, 0xff, 0xff})
				})
			},
			want: []string{"resource record image.a is corrupt", "genform state rm image.a"},
		},
	}
	commands := [][]string{
		{"plan"},
		{"apply", "-auto-approve"},
		{"destroy", "-auto-approve"},
		{"show"},
		{"state", "list"},
		{"gallery"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := fresh(t)
			tt.damage(t, ws.statePath())
			before := treeSums(t, ws.dir)
			for _, args := range commands {
				r := genform(t, ws.dir, env, args...)
				if r.code != 1 {
					t.Errorf("exit %d, want 1:\n%s", r.code, r)
					continue
				}
				for _, want := range append(tt.want, "state file .genform/state.db") {
					if !strings.Contains(r.stderr, want) {
						t.Errorf("genform %s: stderr does not say %q:\n%s", strings.Join(args, " "), want, r.stderr)
					}
				}
			}
			after := treeSums(t, ws.dir)
			delete(after, ".genform/state.db.lock.info") // the last holder's name
			if diff := cmpSums(before, after); diff != "" {
				t.Errorf("files changed:\n%s", diff)
			}
			ws.checkNothingOutside(t)
		})
	}
	if n := len(sim.Server.Jobs().Jobs); n != jobsBefore {
		t.Errorf("the simulator made %d new jobs from damaged states", n-jobsBefore)
	}
}

func cmpSums(before, after map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(before)) {
		switch a, ok := after[k]; {
		case !ok:
			fmt.Fprintf(&b, "  %s was removed\n", k)
		case a != before[k]:
			fmt.Fprintf(&b, "  %s was changed\n", k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(after)) {
		if _, ok := before[k]; !ok {
			fmt.Fprintf(&b, "  %s was added\n", k)
		}
	}
	return b.String()
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// rawBolt changes a bbolt file with fn, as a tool other than genform would.
func rawBolt(t testing.TB, path string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestStatePathsStayInside gives the state file records whose output paths
// or directory lead outside the working directory, as a state file
// committed by someone else could, written past genform's own checks: every
// command refuses the record, and none deletes, moves, reads or publishes
// the file outside.
func TestStatePathsStayInside(t *testing.T) {
	if testing.Short() {
		t.Skip("runs genform many times")
	}
	sim := startSim(t, simulator.Options{Token: fakeToken, Latency: 200 * time.Millisecond})
	env := childEnv("GENFORM_BASE_URL="+sim.URL, "GENFORM_TOKEN="+fakeToken)
	fresh := appliedWorkspace(t, sim, env)

	const victimText = "a file of the user's, outside the working directory\n"
	// The record is patched in place, each string replaced by one of the
	// same length so the encoding stays well-formed: "generated/image/a"
	// and its output paths become paths that clean to "..".
	patches := map[string][][2]string{
		"output path": {{"generated/image/a/0.png", "./././././../victim.txt"}},
		"directory and output path": {
			{"\x11generated/image/a", "\x11.//////////////.."},
			{"generated/image/a/0.png", "./././././../victim.txt"},
		},
	}
	configs := map[string]string{
		"kept in the configuration": "",
		"deleted from the configuration": `image "b" {
  prompt       = "a pear"
  image_number = 1
}
`,
	}
	for pname, patch := range patches {
		for cname, config := range configs {
			t.Run(pname+", "+cname, func(t *testing.T) {
				ws := fresh(t)
				victim := filepath.Join(ws.parent, "victim.txt")
				writeFile(t, victim, []byte(victimText))
				rawBolt(t, ws.statePath(), func(tx *bolt.Tx) error {
					b := tx.Bucket([]byte("genform")).Bucket([]byte("resources"))
					rec := bytes.Clone(b.Get([]byte("image.a")))
					for _, p := range patch {
						if !bytes.Contains(rec, []byte(p[0])) {
							t.Fatalf("the record holds no %q", p[0])
						}
						rec = bytes.Replace(rec, []byte(p[0]), []byte(p[1]), 1)
					}
					return b.Put([]byte("image.a"), rec)
				})
				if config != "" {
					writeFile(t, filepath.Join(ws.dir, "main.gen.hcl"), []byte(config))
				}
				for _, args := range [][]string{
					{"plan"},
					{"gallery", "-out=gallery.html"},
					{"apply", "-auto-approve"},
					{"destroy", "-auto-approve"},
					{"show"},
				} {
					r := genform(t, ws.dir, env, args...)
					if r.code != 1 || !strings.Contains(r.stderr, "resource record image.a is corrupt") || !strings.Contains(r.stderr, "leads outside the working directory") {
						t.Errorf("want a refusal naming the record and why:\n%s", r)
					}
				}
				if b, err := os.ReadFile(victim); err != nil || string(b) != victimText {
					t.Errorf("the file outside the working directory was deleted, moved or changed (%v)", err)
				}
				if g, err := os.ReadFile(filepath.Join(ws.dir, "gallery.html")); err == nil {
					if bytes.Contains(g, []byte(victimText)) || bytes.Contains(g, []byte(base64.StdEncoding.EncodeToString([]byte(victimText)))) {
						t.Errorf("the gallery publishes the file outside the working directory")
					}
				}
				ws.checkNothingOutside(t, "victim.txt")
			})
		}
	}
}

// TestCorruptRecordRemedy follows the advice every corrupt-record error
// gives, "forget the resource with: genform state rm ADDR": it must work,
// and the next plan generates the forgotten resource again while keeping
// the others.
func TestCorruptRecordRemedy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs genform many times")
	}
	sim := startSim(t, simulator.Options{Token: fakeToken, Latency: 200 * time.Millisecond})
	env := childEnv("GENFORM_BASE_URL="+sim.URL, "GENFORM_TOKEN="+fakeToken)
	ws := appliedWorkspace(t, sim, env)(t)
	rawBolt(t, ws.statePath(), func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("genform")).Bucket([]byte("resources")).Put([]byte("image.a"), []byte{0x08, 0x01, 0x12, 0xff, 0xff})
	})
	r := genform(t, ws.dir, env, "plan")
	if r.code != 1 || !strings.Contains(r.stderr, "forget the resource with: genform state rm image.a") {
		t.Fatalf("want the advice to forget image.a:\n%s", r)
	}
	if r := genform(t, ws.dir, env, "state", "rm", "image.a"); r.code != 0 || !strings.Contains(r.stdout, "Removed image.a") {
		t.Fatalf("the advised command fails:\n%s", r)
	}
	r = genform(t, ws.dir, env, "plan")
	if r.code != 0 || !strings.Contains(r.stdout, "image.a will be generated") || strings.Contains(r.stdout, "image.b will") {
		t.Fatalf("after state rm, plan should generate image.a and leave image.b alone:\n%s", r)
	}
}

// fakeService answers like the service, except where a test overrides an
// endpoint with a bad answer. It counts the create requests it receives.
type fakeService struct {
	url     string
	creates atomic.Int32
	create  http.HandlerFunc
	status  http.HandlerFunc
	detail  http.HandlerFunc
	media   http.HandlerFunc
}

// fakePNG is what the fake service serves as an image.
var fakePNG = []byte("\x89PNG\r\n\x1a\n fake image bytes")

// newFakeService starts a fake service whose handlers setup may replace
// before it starts.
func newFakeService(t *testing.T, setup func(f *fakeService)) *fakeService {
	f := &fakeService{}
	f.create = func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"status":"success","value":{"generation_id":"gen-1"}}`)
	}
	f.status = func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"status":"success","value":{"status":"succeed","progress":1}}`)
	}
	f.detail = func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"status":"success","value":{"creation_id":"gen-1","status":"succeed","outputs":[{"id":"o0","media_url":%q}]}}`, "http://"+r.Host+"/media/0.png")
	}
	f.media = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(fakePNG)
	}
	setup(f)
	srv := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch p := r.URL.Path; {
		case p == "/v1/jobs/text2image":
			f.creates.Add(1)
			f.create(w, r)
		case strings.HasPrefix(p, "/v1/jobs/") && strings.HasSuffix(p, "/status"):
			f.status(w, r)
		case strings.HasPrefix(p, "/v1/creation/"):
			f.detail(w, r)
		case strings.HasPrefix(p, "/media/"):
			f.media(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	f.url = srv
	return f
}

// httptestServer serves h on a loopback port for the test's lifetime.
func httptestServer(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestMalformedServiceAnswers runs apply against a service that answers
// one endpoint badly: malformed JSON, wrong types, huge bodies, unknown
// status values, and media URLs or redirects to other schemes. Each apply
// fails with an error that says what was wrong; the state stays consistent
// and says what the next run does (resume the job, warn that it may have
// been paid for, or download again); and nothing is written outside the
// working directory or read from it.
func TestMalformedServiceAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs genform against a fake service")
	}
	const config = `service {
  timeout       = "3s"
  poll_interval = "1s"
}

image "a" {
  prompt       = "an apple"
  image_number = 1
}
`
	tests := []struct {
		name  string
		setup func(f *fakeService, secret string)
		// wantErr are in apply's stderr; wantPlan in the next plan's stdout.
		wantErr  []string
		wantPlan []string
		// intent is the generation id an intent keeps ("" for one with
		// none); noIntent means none is kept.
		intent   string
		noIntent bool
		// recorded: image.a is in the state after the apply.
		recorded bool
		creates  int32
	}{
		{
			name: "create answer is not JSON",
			setup: func(f *fakeService, _ string) {
				f.create = func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<html>gateway says hello</html>") }
			},
			wantErr:  []string{"image.a", "not a JSON object", "the service may have created the job"},
			wantPlan: []string{"may already have been paid for"},
			intent:   "", creates: 1,
		},
		{
			name: "generation id of the wrong type",
			setup: func(f *fakeService, _ string) {
				f.create = func(w http.ResponseWriter, r *http.Request) {
					io.WriteString(w, `{"status":"success","value":{"generation_id":42}}`)
				}
			},
			wantErr:  []string{`"generation_id" is number, want string`, "the service may have created the job"},
			wantPlan: []string{"may already have been paid for"},
			intent:   "", creates: 1,
		},
		{
			name: "create answer without a generation id",
			setup: func(f *fakeService, _ string) {
				f.create = func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"status":"success","value":{}}`) }
			},
			wantErr:  []string{`no "generation_id"`},
			wantPlan: []string{"may already have been paid for"},
			intent:   "", creates: 1,
		},
		{
			name: "status of the wrong type",
			setup: func(f *fakeService, _ string) {
				f.status = func(w http.ResponseWriter, r *http.Request) {
					io.WriteString(w, `{"status":"success","value":{"status":["succeed"],"progress":"half"}}`)
				}
			},
			wantErr:  []string{"polling image.a (job gen-1)", `"status" is array, want string`, "rerun apply to resume"},
			wantPlan: []string{"will be resumed"},
			intent:   "gen-1", creates: 1,
		},
		{
			name: "unknown status value",
			setup: func(f *fakeService, _ string) {
				f.status = func(w http.ResponseWriter, r *http.Request) {
					io.WriteString(w, `{"status":"success","value":{"status":"queued_elsewhere","progress":0.5}}`)
				}
			},
			wantErr:  []string{`reports unknown status "queued_elsewhere"; treating it as running`, "still queued_elsewhere after 3s", "rerun apply to resume"},
			wantPlan: []string{"will be resumed"},
			intent:   "gen-1", creates: 1,
		},
		{
			name: "huge status answer",
			setup: func(f *fakeService, _ string) {
				f.status = func(w http.ResponseWriter, r *http.Request) {
					io.WriteString(w, `{"status":"success","value":{"status":"processing","pad":"`)
					w.Write(bytes.Repeat([]byte("x"), 5<<20))
					io.WriteString(w, `"}}`)
				}
			},
			wantErr:  []string{"larger than 4 MiB", "rerun apply to resume"},
			wantPlan: []string{"will be resumed"},
			intent:   "gen-1", creates: 1,
		},
		{
			name: "detail with outputs of the wrong type",
			setup: func(f *fakeService, _ string) {
				f.detail = func(w http.ResponseWriter, r *http.Request) {
					io.WriteString(w, `{"status":"success","value":{"status":"succeed","outputs":"0.png"}}`)
				}
			},
			wantErr:  []string{"fetching the detail of image.a (job gen-1)", `"outputs" is string`, "rerun apply to resume"},
			wantPlan: []string{"will be resumed"},
			intent:   "gen-1", creates: 1,
		},
		{
			name: "detail without outputs",
			setup: func(f *fakeService, _ string) {
				f.detail = func(w http.ResponseWriter, r *http.Request) {
					io.WriteString(w, `{"status":"success","value":{"status":"succeed","outputs":[]}}`)
				}
			},
			wantErr:  []string{"succeeded but listed no outputs"},
			wantPlan: []string{"will be resumed"},
			intent:   "gen-1", creates: 1,
		},
		{
			name: "media URL of the file scheme",
			setup: func(f *fakeService, secret string) {
				f.detail = func(w http.ResponseWriter, r *http.Request) {
					fmt.Fprintf(w, `{"status":"success","value":{"status":"succeed","outputs":[{"id":"o0","media_url":%q}]}}`, "file://"+filepath.ToSlash(secret))
				}
			},
			wantErr:  []string{`refusing to download a "file" URL: only http and https are followed`, "nothing is regenerated"},
			wantPlan: []string{"image.a will be updated in place (no new generation)", "1 to re-download"},
			noIntent: true, recorded: true, creates: 1,
		},
		{
			name: "media URL of another scheme",
			setup: func(f *fakeService, _ string) {
				f.detail = func(w http.ResponseWriter, r *http.Request) {
					io.WriteString(w, `{"status":"success","value":{"status":"succeed","outputs":[{"id":"o0","media_url":"ftp://127.0.0.1/0.png"}]}}`)
				}
			},
			wantErr:  []string{`refusing to download a "ftp" URL`},
			wantPlan: []string{"image.a will be updated in place (no new generation)", "1 to re-download"},
			noIntent: true, recorded: true, creates: 1,
		},
		{
			name: "media redirect to a file URL",
			setup: func(f *fakeService, secret string) {
				f.media = func(w http.ResponseWriter, r *http.Request) {
					http.Redirect(w, r, "file://"+filepath.ToSlash(secret), http.StatusFound)
				}
			},
			wantErr:  []string{`refusing to follow a redirect to a "file" URL`},
			wantPlan: []string{"image.a will be updated in place (no new generation)", "1 to re-download"},
			noIntent: true, recorded: true, creates: 1,
		},
		{
			name: "generation id with path characters",
			setup: func(f *fakeService, _ string) {
				f.create = func(w http.ResponseWriter, r *http.Request) {
					io.WriteString(w, `{"status":"success","value":{"generation_id":"../../../x"}}`)
				}
				old := f.status
				f.status = func(w http.ResponseWriter, r *http.Request) {
					if r.URL.EscapedPath() != "/v1/jobs/..%2F..%2F..%2Fx/status" {
						http.Error(w, `{"message":"unexpected path `+r.URL.EscapedPath()+`"}`, http.StatusBadRequest)
						return
					}
					old(w, r)
				}
			},
			noIntent: true, recorded: true, creates: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws := newWorkspace(t, map[string]string{"main.gen.hcl": config})
			secret := filepath.Join(ws.parent, "secret.txt")
			const secretText = "the user's private notes"
			writeFile(t, secret, []byte(secretText))
			f := newFakeService(t, func(f *fakeService) { tt.setup(f, secret) })
			env := childEnv("GENFORM_BASE_URL="+f.url, "GENFORM_TOKEN="+fakeToken, "GENFORM_LOG=debug")

			r := genform(t, ws.dir, env, "apply", "-auto-approve")
			if len(tt.wantErr) == 0 {
				if r.code != 0 {
					t.Fatalf("%s", r)
				}
			} else {
				if r.code != 1 {
					t.Errorf("exit %d, want 1", r.code)
				}
				for _, want := range tt.wantErr {
					if !strings.Contains(r.stderr, want) {
						t.Errorf("stderr does not say %q", want)
					}
				}
				if strings.Contains(r.stderr, "panic") {
					t.Error("genform panicked")
				}
			}
			if t.Failed() {
				t.Logf("%s", r)
			}

			st, err := statefile.Open(ws.statePath(), statefile.Options{Command: "check"})
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Check(); err != nil {
				t.Error(err)
			}
			snap, err := st.Snapshot()
			st.Close()
			if err != nil {
				t.Fatal(err)
			}
			in := snap.Intents["image.a"]
			switch {
			case tt.noIntent && in != nil:
				t.Errorf("an intent is left: %+v", in)
			case !tt.noIntent && in == nil:
				t.Errorf("no intent is kept for the job, so the next apply cannot resume it or warn about it")
			case !tt.noIntent && in.GenerationID != tt.intent:
				t.Errorf("the intent keeps generation %q, want %q", in.GenerationID, tt.intent)
			}
			if rec := snap.Resources["image.a"]; (rec != nil) != tt.recorded {
				t.Errorf("image.a recorded: %v, want %v", rec != nil, tt.recorded)
			}
			if n := f.creates.Load(); n != tt.creates {
				t.Errorf("the service received %d create requests, want %d", n, tt.creates)
			}
			if len(tt.wantPlan) > 0 {
				p := genform(t, ws.dir, env, "plan")
				for _, want := range tt.wantPlan {
					if !strings.Contains(p.stdout, want) {
						t.Errorf("the next plan does not say %q:\n%s", want, p)
					}
				}
			}

			// Nothing outside was written, and the file outside was not
			// copied in.
			ws.checkNothingOutside(t, "secret.txt")
			for name, sum := range treeSums(t, ws.dir) {
				if sum == sha([]byte(secretText)) {
					t.Errorf("%s is a copy of the file outside the working directory", name)
				}
			}
		})
	}
}

// TestLinkedDirsStayInside makes the output directory and the state
// directory links to directories outside the working directory, as a
// repository can hold them: apply must refuse rather than write there.
func TestLinkedDirsStayInside(t *testing.T) {
	if testing.Short() {
		t.Skip("runs genform")
	}
	sim := startSim(t, simulator.Options{Token: fakeToken, Latency: 200 * time.Millisecond})
	env := childEnv("GENFORM_BASE_URL="+sim.URL, "GENFORM_TOKEN="+fakeToken)
	for _, link := range []string{"generated", ".genform", "pics"} {
		t.Run(link, func(t *testing.T) {
			ws := newWorkspace(t, map[string]string{"main.gen.hcl": `
image "a" {
  prompt       = "an apple"
  image_number = 1
}

image "b" {
  prompt       = "a pear"
  image_number = 1
  dir          = "pics/pears"
}
`})
			outside := filepath.Join(ws.parent, "outside")
			if err := os.Mkdir(outside, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join("..", "outside"), filepath.Join(ws.dir, link)); err != nil {
				t.Skipf("no symbolic links here: %v", err)
			}
			r := genform(t, ws.dir, env, "apply", "-auto-approve")
			if r.code != 1 || !strings.Contains(r.stderr, link) || !strings.Contains(r.stderr, "outside the working directory") {
				t.Errorf("want apply to refuse the link %s:\n%s", link, r)
			}
			if entries, _ := os.ReadDir(outside); len(entries) > 0 {
				t.Errorf("apply wrote %d entries through the link into %s", len(entries), outside)
			}
		})
	}
}
