// A user applies against a flaky, rate-limited service: reruns of apply
// must converge, generating nothing twice except to replace a failed
// generation, and with requests_per_minute below the service's limit no
// request may be refused with 429. The short version runs in the suite;
// the long one is opt-in:
//
//	go test -run TestFaultSoak -soak.long -timeout 30m ./internal/e2e

package e2e

import (
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/simulator"
)

var (
	soakLong   = flag.Bool("soak.long", false, "TestFaultSoak: the long version (low -rpm, slower jobs); takes minutes")
	soakBudget = flag.Int("soak.budget", 0, "TestFaultSoak: requests_per_minute instead of the version's own, e.g. above the simulator's limit to see the 429s the budget prevents")
)

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
// its polls and reads with 500, cuts 10% of downloads short, fails 5% of generations,
// and limits the request rate. Apply is rerun until it succeeds, within a
// bounded number of runs; then every file matches the simulator's bytes,
// nothing was generated twice except to replace a failed generation, and
// with requests_per_minute below the service's limit no request was ever
// answered 429.
func TestFaultSoak(t *testing.T) {
	parallelSlow(t, "applies 100 resources against a faulty service")
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
		Token:     token,
		Latency:   p.latency,
		ErrorRate: 0.2,
		// A create answered 500 may have been paid for: genform sends
		// nothing more for it and waits for the user, which a rerun does
		// not decide (the money-safety tests cover it). The soak's 500s
		// fall on the polls and reads, which a rerun must get past.
		ReadErrorsOnly: true,
		TruncateRate:   0.1,
		FailRate:       0.05,
		RPM:            p.simRPM,
		Seed:           42,
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
	env := serviceEnv(sim.URL, token)

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
