// A user's apply dies at any moment (SIGKILL, a power cut, a closed
// laptop): the next apply must lose nothing, leave nothing half-written and
// pay for nothing twice, except where genform warned that a create request
// was in flight when it died. The short version runs in the suite; the
// long one is opt-in:
//
//	go test -run TestCrashApply -crash.rounds=200 ./internal/e2e

package e2e

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/e2e/harness"
	"github.com/genform/genform/internal/simulator"
)

var (
	crashRounds = flag.Int("crash.rounds", 10, "TestCrashApply: how many applies to kill before the last one runs to completion")
	crashSeed   = flag.Uint64("crash.seed", 1, "TestCrashApply: seed of the kill moments")
)

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
	parallelSlow(t, "runs genform dozens of times")
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
	env := serviceEnv(sim.URL, token)
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
		// The kill waits a random wall-clock time, not a condition: the
		// test is about a kill that can land anywhere, between any two
		// steps of the apply, not at a point chosen in advance.
		delay := 50*time.Millisecond + time.Duration(rng.Int64N(int64(2450*time.Millisecond)))
		cmd, stdout, stderr := genformCmd(t, ws.dir, env, "apply", "-auto-approve", "-parallelism", "10")
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

	// Then applies run to completion until one succeeds. A kill between
	// a create request and its answer leaves the instance possibly paid:
	// genform sends nothing for it, and the user decides, as the warning
	// says: adopt the job if the service has it, or pay again knowingly.
	var last result
	decided := 0
	for i := range 3 {
		last = genform(t, ws.dir, env, "apply", "-auto-approve", "-parallelism", "10")
		note(last)
		if last.code == 0 {
			break
		}
		t.Logf("completing apply %d failed:\n%s", i, last)
		decided += decidePossiblyPaid(t, ws, env, sim, prompts, last)
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
	t.Logf("crash test: %d rounds (%d killed) over %d epochs of 50 resources in %s, completed in %s; %d outputs verified; %d creates for %d prompts, %d generated twice after an in-flight warning (%d warnings); %d resumes shown; %d possibly paid decided by the user; %s in all",
		*crashRounds, kills, epoch+1, killing.Round(time.Millisecond), completing.Round(time.Millisecond), v.outputs, creates, len(all), twice, len(warned), resumed, decided, time.Since(start).Round(time.Second))
}

// checkStateAfterKill opens the state left by a killed apply, if it got as
// far as creating one, and runs bbolt's check and every record's decoder.
func checkStateAfterKill(t *testing.T, ws workspace, round int) {
	t.Helper()
	_, err := harness.ReadCheckedState(ws.statePath(), "crash-check")
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		t.Fatalf("round %d: the state left by the killed apply is not sound: %v", round, err)
	}
}

// decidePossiblyPaid does what a user does with the instances an apply
// names as possibly paid: it looks for the job on the service (here the
// simulator's record of the jobs it made for the instance's current
// prompt) and adopts it with import, or, when the service has none,
// generates it again with -replace. It returns how many it decided.
func decidePossiblyPaid(t *testing.T, ws workspace, env []string, sim *simulator.Instance, prompts map[string]string, r result) int {
	t.Helper()
	waiting := map[string]bool{}
	for _, m := range inFlightWarning.FindAllStringSubmatch(r.stdout+r.stderr, -1) {
		waiting[m[1]] = true
	}
	if len(waiting) == 0 {
		return 0
	}
	cfg, err := os.ReadFile(filepath.Join(ws.dir, "main.gen.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	var replace []string
	for addr := range waiting {
		id := ""
		for _, j := range sim.Server.Jobs().Jobs {
			p := promptOf(t, j.Body)
			if prompts[p] == addr && strings.Contains(string(cfg), p) && j.Status != "failed" {
				id = j.ID
			}
		}
		if id != "" {
			if imp := genform(t, ws.dir, env, "import", addr, id); imp.code == 0 {
				continue
			} else {
				t.Logf("import of %s as %s refused:\n%s", addr, id, imp)
			}
		}
		replace = append(replace, "-replace="+addr)
	}
	if len(replace) > 0 {
		rr := genform(t, ws.dir, env, append([]string{"apply", "-auto-approve", "-parallelism", "10"}, replace...)...)
		t.Logf("generating again what the service does not have (%v): exit %d", replace, rr.code)
	}
	return len(waiting)
}
