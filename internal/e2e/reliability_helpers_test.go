// The machinery the tests of this package share. Each test runs the real
// genform binary (the test binary, which harness.Main installs in PATH
// under that name) against a simulator or a fake service in this process,
// in a working directory whose parent holds nothing else, and checks what a
// suspicious user would: the state file, the files on disk, and what the
// service saw. The state checks under them (harness.ReadCheckedState and
// harness.CheckOutput) also back the state-verify command of the scripts.

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/dirtest"
	"github.com/genform/genform/internal/e2e/harness"
	"github.com/genform/genform/internal/simulator"
	"github.com/genform/genform/statefile"
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

// genformPath is the genform command harness.Main put in PATH.
func genformPath(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("genform")
	if err != nil {
		t.Fatalf("genform is not in PATH (harness.Main installs it): %v", err)
	}
	return p
}

// parallelSlow begins a test that takes a while, running genform (why
// says how): it runs in parallel with the others, and -short skips it.
func parallelSlow(t *testing.T, why string) {
	t.Parallel()
	if testing.Short() {
		t.Skip(why)
	}
}

// anApple is the image most of these tests apply: one picture of an
// apple.
const anApple = `
image "a" {
  prompt       = "an apple"
  image_number = 1
}
`

// serviceEnv is childEnv pointing genform at the service at url with
// token, and extra.
func serviceEnv(url, token string, extra ...string) []string {
	return childEnv(append([]string{"GENFORM_BASE_URL=" + url, "GENFORM_TOKEN=" + token}, extra...)...)
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
func genformCmd(t testing.TB, dir string, env []string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	return genformCmdContext(context.Background(), t, dir, env, args...)
}

// genformCmdContext is genformCmd killed when ctx is done.
func genformCmdContext(ctx context.Context, t testing.TB, dir string, env []string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	cmd := exec.CommandContext(ctx, genformPath(t), args...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return cmd, &stdout, &stderr
}

// genform runs genform args in dir to completion.
func genform(t testing.TB, dir string, env []string, args ...string) result {
	t.Helper()
	return genformContext(context.Background(), t, dir, env, args...)
}

// genformContext is genform killed when ctx is done (see genformWithin):
// killed, it exits with code -1.
func genformContext(ctx context.Context, t testing.TB, dir string, env []string, args ...string) result {
	t.Helper()
	cmd, stdout, stderr := genformCmdContext(ctx, t, dir, env, args...)
	start := time.Now()
	err := cmd.Run()
	r := result{args: args, stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case ctx.Err() == nil:
		t.Fatalf("running genform %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// moduleRoot is the repository's root, the directory of go.mod, found
// from the working directory up: go test runs the tests of this package
// in its own directory, two floors below the examples they run.
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod in the working directory or above it")
		}
		dir = parent
	}
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
	dirtest.Write(t, ws.dir, files)
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
	if rec.Addr.Resource.Kind == addrs.Video && rec.WatermarkFree {
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
			// The simulator's request budget refills with wall time;
			// there is nothing else to wait on.
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
	snap, err := harness.ReadCheckedState(ws.statePath(), "verify")
	if err != nil {
		t.Fatal(err)
	}
	for addr, in := range snap.Intents {
		t.Errorf("intent left for %s (generation %q)", addr, in.GenerationID)
	}
	var got []string
	for addr := range snap.Resources {
		got = append(got, addr.String())
	}
	sort.Strings(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Fatalf("state holds %d resources %v\nwant %d %v", len(got), got, len(want), want)
	}
	var v verified
	known := map[string]bool{}
	for _, s := range want {
		addr, err := addrs.ParseInstance(s)
		if err != nil {
			t.Fatal(err)
		}
		rec := snap.Resources[addr]
		if rec.Status != "succeed" || len(rec.Outputs) == 0 {
			t.Errorf("%s: status %q with %d outputs, want succeed", addr, rec.Status, len(rec.Outputs))
			continue
		}
		for _, o := range rec.Outputs {
			if err := harness.CheckOutput(ws.dir, addr, o); err != nil {
				t.Error(err)
			}
			known[filepath.Clean(filepath.FromSlash(o.Path))] = true
			if sum := harness.SHA256(simBytes(t, sim, token, rec, o)); sum != o.SHA256 {
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
		case apiclient.IsTempFile(d.Name()):
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
		sums[filepath.ToSlash(rel)] = harness.SHA256(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

func writeFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// recorder runs genform in dir and keeps every result, for a test that
// checks afterwards all that genform printed.
type recorder struct {
	t    testing.TB
	dir  string
	runs []result
}

// run runs genform with env and args, and keeps the result; an exit code
// other than wantCode ends the test.
func (rec *recorder) run(wantCode int, env []string, args ...string) result {
	rec.t.Helper()
	r := genform(rec.t, rec.dir, env, args...)
	rec.runs = append(rec.runs, r)
	if r.code != wantCode {
		rec.t.Fatalf("exit %d, want %d:\n%s", r.code, wantCode, r)
	}
	return r
}

// eachPrinted calls check with the stdout and the stderr of every run
// (what genform printed, not its command line), saying which it is.
func (rec *recorder) eachPrinted(check func(where string, b []byte)) {
	for _, r := range rec.runs {
		check("the stdout of genform "+strings.Join(r.args, " "), []byte(r.stdout))
		check("the stderr of genform "+strings.Join(r.args, " "), []byte(r.stderr))
	}
}
