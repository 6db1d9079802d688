package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	falsim "github.com/genform/genform/internal/simulator/fal"
	lumasim "github.com/genform/genform/internal/simulator/luma"
	openaisim "github.com/genform/genform/internal/simulator/openai"
	replicatesim "github.com/genform/genform/internal/simulator/replicate"
	runwaysim "github.com/genform/genform/internal/simulator/runway"
	"github.com/genform/genform/internal/simulator/simkit"
)

// The scripts reach a live provider's API through its simulator, started
// in the test process on a loopback port: provider-sim starts one and
// sets NAME_SIM_URL (FAL_SIM_URL, REPLICATE_SIM_URL) for the provider
// block's base_url, and NAME's usual key variable (FAL_KEY,
// REPLICATE_API_TOKEN) to the key it accepts.

type providerSimKey struct{}

// providerSims owns the provider simulators of one script, by name.
type providerSims struct {
	mu   sync.Mutex
	sims map[string]*simkit.Instance
}

func (p *providerSims) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.sims {
		s.Close()
	}
	p.sims = nil
}

func providerSimsOf(ts *testscript.TestScript) *providerSims {
	return ts.Value(providerSimKey{}).(*providerSims)
}

// providerSimulators build the simulators provider-sim starts, with the
// key variable the provider's own tools read.
var providerSimulators = map[string]struct {
	keyEnv string
	new    func(simkit.Options) (simkit.Handler, error)
}{
	"fal":       {"FAL_KEY", func(o simkit.Options) (simkit.Handler, error) { return falsim.New(o) }},
	"openai":    {"OPENAI_API_KEY", func(o simkit.Options) (simkit.Handler, error) { return openaisim.New(o) }},
	"replicate": {"REPLICATE_API_TOKEN", func(o simkit.Options) (simkit.Handler, error) { return replicatesim.New(o) }},
	"runway":    {"RUNWAYML_API_SECRET", func(o simkit.Options) (simkit.Handler, error) { return runwaysim.New(o) }},
	"luma":      {"LUMAAI_API_KEY", func(o simkit.Options) (simkit.Handler, error) { return lumasim.New(o) }},
}

// provider-sim NAME [-latency D] [-fail-rate F] [-error-rate F]
// [-read-errors-only] [-lose-rate F] [-truncate-rate F] [-rpm N]
// [-max-concurrent N] [-url-ttl D] [-daily-cap N] [-seed N] [-data DIR]
// [-addr HOST:PORT]
// starts the simulator of provider NAME (in place of the one running:
// with -addr the same address and -data the same directory, it is the
// same API restarted) accepting the key "test-key".
func cmdProviderSim(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! provider-sim")
	}
	if len(args) < 1 {
		ts.Fatalf("usage: provider-sim NAME [flags]")
	}
	name := args[0]
	sim, ok := providerSimulators[name]
	if !ok {
		ts.Fatalf("provider-sim: no simulator of %q", name)
	}
	fs := flag.NewFlagSet("provider-sim", flag.ContinueOnError)
	opts := simkit.Options{Token: "test-key"}
	fs.DurationVar(&opts.Latency, "latency", 300*time.Millisecond, "")
	fs.Float64Var(&opts.FailRate, "fail-rate", 0, "")
	fs.Float64Var(&opts.ErrorRate, "error-rate", 0, "")
	fs.BoolVar(&opts.ReadErrorsOnly, "read-errors-only", false, "")
	fs.Float64Var(&opts.LoseRate, "lose-rate", 0, "")
	fs.Float64Var(&opts.TruncateRate, "truncate-rate", 0, "")
	fs.IntVar(&opts.RPM, "rpm", 0, "")
	fs.IntVar(&opts.MaxConcurrent, "max-concurrent", 0, "")
	fs.DurationVar(&opts.URLTTL, "url-ttl", 0, "")
	fs.IntVar(&opts.DailyCap, "daily-cap", 0, "")
	fs.Int64Var(&opts.Seed, "seed", 1, "")
	data := fs.String("data", "", "")
	addr := fs.String("addr", "127.0.0.1:0", "")
	ts.Check(fs.Parse(args[1:]))
	if *data != "" {
		opts.DataDir = ts.MkAbs(*data)
	}
	p := providerSimsOf(ts)
	p.mu.Lock()
	defer p.mu.Unlock()
	if old := p.sims[name]; old != nil {
		old.Close()
		delete(p.sims, name)
	}
	h, err := sim.new(opts)
	ts.Check(err)
	inst, err := simkit.Listen(*addr, h)
	ts.Check(err)
	if p.sims == nil {
		p.sims = map[string]*simkit.Instance{}
	}
	p.sims[name] = inst
	ts.Setenv(strings.ToUpper(name)+"_SIM_URL", inst.URL)
	ts.Setenv(sim.keyEnv, "test-key")
}

// provider-stats NAME prints what the simulator of provider NAME saw, as
// sim-stats does for the reference service's: jobs, creates-max,
// requests, throttled; and sets LAST_JOB to the id of its newest job.
func cmdProviderStats(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: provider-stats NAME")
	}
	p := providerSimsOf(ts)
	p.mu.Lock()
	inst := p.sims[args[0]]
	p.mu.Unlock()
	if inst == nil {
		ts.Fatalf("provider-stats: no simulator of %q is running; start one with provider-sim", args[0])
	}
	rep := inst.Handler.Jobs()
	most := 0
	for _, n := range rep.Creates {
		most = max(most, n)
	}
	fmt.Fprintf(ts.Stdout(), "jobs %d\ncreates-max %d\nrequests %d\nthrottled %d\n", len(rep.Jobs), most, rep.Requests, rep.Throttled)
	if n := len(rep.Jobs); n > 0 {
		ts.Setenv("LAST_JOB", rep.Jobs[n-1].ID)
	}
}

// provider-wait NAME -polled N waits (up to 30s) until N jobs of the
// simulator of provider NAME have each answered a status request: genform
// records a job's id before it first polls it, as sim-wait -polled says
// (a Replicate prediction is polled by reading it whole).
func cmdProviderWait(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 || args[1] != "-polled" {
		ts.Fatalf("usage: provider-wait NAME -polled N")
	}
	n, err := strconv.Atoi(args[2])
	ts.Check(err)
	p := providerSimsOf(ts)
	p.mu.Lock()
	inst := p.sims[args[0]]
	p.mu.Unlock()
	if inst == nil {
		ts.Fatalf("provider-wait: no simulator of %q is running", args[0])
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		polled := 0
		for _, j := range inst.Handler.Jobs().Jobs {
			if j.StatusRequests+j.DetailRequests >= 1 {
				polled++
			}
		}
		if polled >= n {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("gave up after 30s waiting until %d jobs of %s have been polled (%d were)", n, args[0], polled)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
