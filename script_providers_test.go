package main

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/provider/all"
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
	ports *heldPorts
	mu    sync.Mutex
	sims  map[string]*simkit.Instance
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

// running is the simulator of provider name that provider-sim started
// for the script; cmd, the command that asks, fails the script when
// there is none.
func running(ts *testscript.TestScript, cmd, name string) *simkit.Instance {
	p := providerSimsOf(ts)
	p.mu.Lock()
	inst := p.sims[name]
	p.mu.Unlock()
	if inst == nil {
		ts.Fatalf("%s: no simulator of %q is running; start one with provider-sim", cmd, name)
	}
	return inst
}

// liveProvider is the live provider named name in genform's one list
// of providers: its simulator, and the key variable its own tools read.
func liveProvider(name string) (*provider.Registration, bool) {
	r := all.Lookup(name)
	return r, r != nil && !r.Table.Service
}

// provider-sim NAME [-latency D] [-fail-rate F] [-error-rate F]
// [-read-errors-only] [-lose-rate F] [-truncate-rate F] [-rpm N]
// [-max-concurrent N] [-url-ttl D] [-daily-cap N] [-seed N] [-data DIR]
// [-token T] [-addr HOST:PORT] [-date YYYY-MM-DD]
// starts the simulator of provider NAME (in place of the one running:
// with -addr the same address and -data the same directory, it is the
// same API restarted) accepting the key "test-key", or T, and sets the
// provider's key variable to it. -date sets the day its clock is on (a
// model retired by then is answered as retired).
func cmdProviderSim(ts *testscript.TestScript, neg bool, args []string) {
	fs := commandFlags(ts, neg, "provider-sim")
	if len(args) < 1 {
		ts.Fatalf("usage: provider-sim NAME [flags]")
	}
	name := args[0]
	sim, ok := liveProvider(name)
	if !ok {
		ts.Fatalf("provider-sim: no simulator of %q", name)
	}
	opts := simkit.Options{Token: "test-key"}
	fs.Float64Var(&opts.LoseRate, "lose-rate", 0, "")
	fs.IntVar(&opts.DailyCap, "daily-cap", 0, "")
	date := fs.String("date", "", "")
	addr := simFlags(ts, fs, &opts, "127.0.0.1:0", args[1:])
	if *date != "" {
		// The simulator lives on that day: its clock runs from the
		// time of day it is now, so that jobs still take their latency.
		day, err := time.Parse(time.DateOnly, *date)
		ts.Check(err)
		now := time.Now().UTC()
		y, m, d := now.Date()
		offset := day.Sub(time.Date(y, m, d, 0, 0, 0, 0, time.UTC))
		opts.Now = func() time.Time { return time.Now().Add(offset) }
	}
	p := providerSimsOf(ts)
	p.mu.Lock()
	defer p.mu.Unlock()
	if old := p.sims[name]; old != nil {
		old.Close()
		delete(p.sims, name)
	}
	inst, err := p.start(addr, sim.Simulator, opts)
	ts.Check(err)
	if p.sims == nil {
		p.sims = map[string]*simkit.Instance{}
	}
	p.sims[name] = inst
	ts.Setenv(strings.ToUpper(name)+"_SIM_URL", inst.URL)
	ts.Setenv(sim.Table.KeyEnv, opts.Token)
}

// start serves the simulator newSim makes from opts at addr: at a port
// free-port holds, on the held socket, so that a simulator restarted at
// its address never finds the port taken. Called with p.mu held, the
// simulator it replaces stopped.
func (p *providerSims) start(addr string, newSim func(simkit.Options) (simkit.Handler, error), opts simkit.Options) (*simkit.Instance, error) {
	ln, err := p.ports.listen(addr)
	if err != nil {
		return nil, err
	}
	h, err := newSim(opts)
	if err != nil {
		ln.Close()
		return nil, err
	}
	return simkit.Serve(ln, h), nil
}

// provider-stats NAME prints what the simulator of provider NAME saw, as
// sim-stats does for the reference service's: jobs, creates-max,
// requests, throttled; and sets LAST_JOB to the id of its newest job.
func cmdProviderStats(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: provider-stats NAME")
	}
	rep := running(ts, "provider-stats", args[0]).Handler.Jobs()
	printStats(ts, rep)
	if n := len(rep.Jobs); n > 0 {
		ts.Setenv("LAST_JOB", rep.Jobs[n-1].ID)
	}
}

// provider-wait NAME -polled N waits (up to 30s) until N jobs of the
// simulator of provider NAME have each answered a status request: genform
// records a job's id before it first polls it, as sim-wait -polled says
// (a Replicate prediction is polled by reading it whole). With -done N it
// waits until N jobs have finished their work (on OpenAI's synchronous
// API, the moment the answer carrying the images is sent), and with
// -requests N until the simulator has received N API requests.
func cmdProviderWait(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 || (args[1] != "-polled" && args[1] != "-done" && args[1] != "-requests") {
		ts.Fatalf("usage: provider-wait NAME -polled|-done|-requests N")
	}
	n, err := strconv.Atoi(args[2])
	ts.Check(err)
	inst := running(ts, "provider-wait", args[0])
	if args[1] == "-requests" {
		waitReport(ts, fmt.Sprintf("%s has received %d requests", args[0], n), inst.Handler.Jobs, func(rep simkit.JobsReport) bool {
			return rep.Requests >= n
		})
		return
	}
	if args[1] == "-done" {
		waitReport(ts, fmt.Sprintf("%d jobs of %s are done", n, args[0]), inst.Handler.Jobs, func(rep simkit.JobsReport) bool {
			done := 0
			for _, j := range rep.Jobs {
				if j.Progress >= 1 {
					done++
				}
			}
			return done >= n
		})
		return
	}
	waitReport(ts, fmt.Sprintf("%d jobs of %s have been polled", n, args[0]), inst.Handler.Jobs, func(rep simkit.JobsReport) bool {
		polled := 0
		for _, j := range rep.Jobs {
			if j.StatusRequests+j.DetailRequests >= 1 {
				polled++
			}
		}
		return polled >= n
	})
}
