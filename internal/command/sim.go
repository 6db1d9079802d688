package command

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/provider/all"
	"github.com/genform/genform/internal/simulator/simkit"
	"github.com/genform/genform/internal/words"
)

var simUsage = `Usage: genform sim [-provider=NAME] [-addr=127.0.0.1:8787] [flags]

  Runs a simulator as a standalone server, for anyone's tests: of the
  reference generation service (described in docs/service.md), or with
  -provider of a live provider's API (` + strings.Join(simulatedNames(), ", ") + `;
  described in docs/providers.md), with synthetic outputs. It
  serves GET /_sim/jobs (no key) listing every job it made. It prints the
  address it listens on, then runs until interrupted. Point a provider
  block's base_url at it.

Flags:
  -provider=NAME       simulate the API of provider NAME (default: the
                       reference service)
  -addr=HOST:PORT      address to listen on (default 127.0.0.1:8787)
  -token=T             accept only the key T (default: any key)
  -latency=DUR         time a job takes to finish (default 2s)
  -fail-rate=F         fraction of jobs that fail (default 0)
  -error-rate=F        fraction of API requests answered 500 (default 0)
  -read-errors-only    answer only requests that create no job with those 500s
  -lose-rate=F         fraction of creates made, then answered by a closed
                       connection (default 0)
  -truncate-rate=F     fraction of downloads cut short (default 0)
  -seed=N              seed that makes the faults repeatable (default 0)
  -max-concurrent=N    unfinished jobs allowed per key (default: the API's;
                       40 for the reference service)
  -rpm=N               API requests allowed per key per minute (default:
                       the API's; 500 for the reference service)
  -url-ttl=DUR         lifetime of the output URLs that expire (default:
                       the API's; 60m for the reference service)
  -daily-cap=N         jobs of one model allowed per key in 24 hours, on a
                       provider with a daily cap (default: the API's)
  -data=DIR            keep jobs in DIR so they survive a restart
  -v                   log every request on stderr
`

func init() {
	register(&command{
		name:     "sim",
		synopsis: "Run the simulator of the generation service",
		usage:    simUsage,
		run:      runSim,
	})
}

// simFlags are the flags of genform sim.
type simFlags struct {
	provider string
	addr     string
	opts     simkit.Options
	verbose  bool
}

// simulated is the provider whose API genform sim -provider=name
// simulates: the reference service for "", a live provider otherwise;
// nil for none.
func simulated(name string) *provider.Registration {
	if name == "" {
		return all.Service()
	}
	if r := all.Lookup(name); r != nil && !r.Table.Service {
		return r
	}
	return nil
}

// simulatedNames lists the live providers genform sim simulates,
// sorted.
func simulatedNames() []string {
	var names []string
	for _, r := range all.Providers {
		if !r.Table.Service {
			names = append(names, r.Name())
		}
	}
	slices.Sort(names)
	return names
}

// listenSim starts the simulator f names on f.addr.
func listenSim(f simFlags) (url string, closeSim func() error, err error) {
	h, err := simulated(f.provider).Simulator(f.opts)
	if err != nil {
		return "", nil, err
	}
	inst, err := simkit.Listen(f.addr, h)
	if err != nil {
		return "", nil, err
	}
	return inst.URL, inst.Close, nil
}

func runSim(env *Env, args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serveSim(ctx, env, args)
}

// serveSim runs the simulator until ctx is done; runSim ties ctx to
// SIGINT and SIGTERM, so stopping the server is a clean exit, not an error.
func serveSim(ctx context.Context, env *Env, args []string) int {
	f, ok, code := parseSimFlags(env, args)
	if !ok {
		return code
	}
	if f.verbose {
		var mu sync.Mutex
		f.opts.Logf = func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(env.Stderr, "genform sim: "+format+"\n", args...)
		}
	}
	url, closeSim, err := listenSim(f)
	if err != nil {
		return env.Errorf("starting the simulator: %v", err)
	}
	fmt.Fprintf(env.Stdout, "genform sim: listening on %s\n", url)
	if f.opts.Token == "" {
		fmt.Fprintln(env.Stderr, "genform sim: accepting any key (set -token to require one)")
	}
	<-ctx.Done()
	fmt.Fprintln(env.Stderr, "genform sim: shutting down")
	if err := closeSim(); err != nil {
		return env.Errorf("stopping the simulator: %v", err)
	}
	return ExitOK
}

func parseSimFlags(env *Env, args []string) (f simFlags, ok bool, code int) {
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	fs.StringVar(&f.provider, "provider", "", "")
	fs.Float64Var(&f.opts.LoseRate, "lose-rate", 0, "")
	fs.StringVar(&f.addr, "addr", "127.0.0.1:8787", "")
	fs.StringVar(&f.opts.Token, "token", "", "")
	fs.DurationVar(&f.opts.Latency, "latency", 0, "")
	fs.Float64Var(&f.opts.FailRate, "fail-rate", 0, "")
	fs.Float64Var(&f.opts.ErrorRate, "error-rate", 0, "")
	fs.BoolVar(&f.opts.ReadErrorsOnly, "read-errors-only", false, "")
	fs.Float64Var(&f.opts.TruncateRate, "truncate-rate", 0, "")
	fs.Int64Var(&f.opts.Seed, "seed", 0, "")
	fs.IntVar(&f.opts.MaxConcurrent, "max-concurrent", 0, "")
	fs.IntVar(&f.opts.RPM, "rpm", 0, "")
	fs.DurationVar(&f.opts.URLTTL, "url-ttl", 0, "")
	fs.IntVar(&f.opts.DailyCap, "daily-cap", 0, "")
	fs.StringVar(&f.opts.DataDir, "data", "", "")
	fs.BoolVar(&f.verbose, "v", false, "")
	if ok, code := parseArgs(env, "sim", fs, args, "no arguments", 0); !ok {
		return f, false, code
	}
	if simulated(f.provider) == nil {
		return f, false, env.Errorf("-provider=%s: there is no simulator of that provider; the simulated providers are %s", f.provider, words.List(simulatedNames(), 10))
	}
	// Every limit left unset is the simulated API's own (each simulator
	// fills in its defaults); one set must be one the simulator can run
	// with, the reference service's above 0.
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	for _, r := range []struct {
		name string
		v    float64
	}{{"fail-rate", f.opts.FailRate}, {"error-rate", f.opts.ErrorRate}, {"truncate-rate", f.opts.TruncateRate}, {"lose-rate", f.opts.LoseRate}} {
		if math.IsNaN(r.v) || r.v < 0 || r.v > 1 {
			return f, false, env.Errorf("-%s is not a fraction from 0 to 1: pass one, e.g. 0.1 for one in ten", r.name)
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"latency", f.opts.Latency}, {"url-ttl", f.opts.URLTTL}} {
		if d.v < 0 || d.v == 0 && set[d.name] && f.provider == "" {
			return f, false, env.Errorf("-%s is not a positive duration: pass one such as 2s or 60m", d.name)
		}
	}
	for _, n := range []struct {
		name string
		v    int
	}{{"max-concurrent", f.opts.MaxConcurrent}, {"rpm", f.opts.RPM}} {
		if n.v < 0 || n.v == 0 && set[n.name] && f.provider == "" {
			return f, false, env.Errorf("-%s is below 1: pass a limit of at least 1", n.name)
		}
	}
	if f.addr == "" {
		return f, false, env.Errorf("-addr is empty: pass HOST:PORT, e.g. 127.0.0.1:8787")
	}
	return f, true, ExitOK
}
