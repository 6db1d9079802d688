package command

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/genform/genform/internal/simulator"
)

const simUsage = `Usage: genform sim [-addr=127.0.0.1:8787] [flags]

  Runs the simulator of the generation service as a standalone server, for
  anyone's tests. It implements the service's endpoints (described in
  docs/service.md) with synthetic outputs, and serves GET /_sim/jobs (no
  token) listing every job it made. It prints the address it listens on,
  then runs until interrupted.

Flags:
  -addr=HOST:PORT      address to listen on (default 127.0.0.1:8787)
  -token=T             accept only the bearer token T (default: any token)
  -latency=DUR         time a job takes to finish (default 2s)
  -fail-rate=F         fraction of jobs that end in 'failed' (default 0)
  -error-rate=F        fraction of API requests answered 500 (default 0)
  -read-errors-only    answer only requests that create no job with those 500s
  -truncate-rate=F     fraction of downloads cut short (default 0)
  -seed=N              seed that makes the faults repeatable (default 0)
  -max-concurrent=N    unfinished jobs allowed per token (default 40)
  -rpm=N               API requests allowed per token per minute (default 500)
  -url-ttl=DUR         lifetime of watermark-free URLs (default 60m)
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
	addr    string
	opts    simulator.Options
	verbose bool
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
	inst, err := simulator.Listen(f.addr, f.opts)
	if err != nil {
		return env.Errorf("starting the simulator: %v", err)
	}
	fmt.Fprintf(env.Stdout, "genform sim: listening on %s\n", inst.URL)
	if f.opts.Token == "" {
		fmt.Fprintln(env.Stderr, "genform sim: accepting any bearer token (set -token to require one)")
	}
	<-ctx.Done()
	fmt.Fprintln(env.Stderr, "genform sim: shutting down")
	if err := inst.Close(); err != nil {
		return env.Errorf("stopping the simulator: %v", err)
	}
	return ExitOK
}

func parseSimFlags(env *Env, args []string) (f simFlags, ok bool, code int) {
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	fs.StringVar(&f.addr, "addr", "127.0.0.1:8787", "")
	fs.StringVar(&f.opts.Token, "token", "", "")
	fs.DurationVar(&f.opts.Latency, "latency", simulator.DefaultLatency, "")
	fs.Float64Var(&f.opts.FailRate, "fail-rate", 0, "")
	fs.Float64Var(&f.opts.ErrorRate, "error-rate", 0, "")
	fs.BoolVar(&f.opts.ReadErrorsOnly, "read-errors-only", false, "")
	fs.Float64Var(&f.opts.TruncateRate, "truncate-rate", 0, "")
	fs.Int64Var(&f.opts.Seed, "seed", 0, "")
	fs.IntVar(&f.opts.MaxConcurrent, "max-concurrent", simulator.DefaultMaxConcurrent, "")
	fs.IntVar(&f.opts.RPM, "rpm", simulator.DefaultRPM, "")
	fs.DurationVar(&f.opts.URLTTL, "url-ttl", simulator.DefaultURLTTL, "")
	fs.StringVar(&f.opts.DataDir, "data", "", "")
	fs.BoolVar(&f.verbose, "v", false, "")
	if ok, code := parseFlags(env, commands["sim"], fs, args); !ok {
		return f, false, code
	}
	if msg := extraArgs("sim", "no arguments", fs, args, 0); msg != "" {
		return f, false, env.Errorf("%s", msg)
	}
	for _, r := range []struct {
		name string
		v    float64
	}{{"fail-rate", f.opts.FailRate}, {"error-rate", f.opts.ErrorRate}, {"truncate-rate", f.opts.TruncateRate}} {
		if math.IsNaN(r.v) || r.v < 0 || r.v > 1 {
			return f, false, env.Errorf("-%s is not a fraction from 0 to 1: pass one, e.g. 0.1 for one in ten", r.name)
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"latency", f.opts.Latency}, {"url-ttl", f.opts.URLTTL}} {
		if d.v <= 0 {
			return f, false, env.Errorf("-%s is not a positive duration: pass one such as 2s or 60m", d.name)
		}
	}
	for _, n := range []struct {
		name string
		v    int
	}{{"max-concurrent", f.opts.MaxConcurrent}, {"rpm", f.opts.RPM}} {
		if n.v < 1 {
			return f, false, env.Errorf("-%s is below 1: pass a limit of at least 1", n.name)
		}
	}
	if f.addr == "" {
		return f, false, env.Errorf("-addr is empty: pass HOST:PORT, e.g. 127.0.0.1:8787")
	}
	return f, true, ExitOK
}
