package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/genform/genform/internal/e2e/harness"
	"github.com/genform/genform/internal/simulator"
	"github.com/genform/genform/internal/simulator/simkit"
	"github.com/genform/genform/internal/simulator/simkit/simtest"
)

var update = flag.Bool("u", false, "update testscript golden files")

func TestMain(m *testing.M) { harness.Main(m) }

// TestScript runs the end-to-end scripts of testdata/script against the real
// binary. Each script gets its own simulator on a loopback port, reachable
// through GENFORM_BASE_URL, with a short latency so the suite stays fast.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			// The ports free-port holds are let go last, once the
			// simulators on them have stopped.
			ports := &heldPorts{}
			env.Defer(ports.close)
			env.Values[portsKey{}] = ports
			h := &simHolder{ports: ports}
			if err := h.start("", simulator.Options{Latency: 300 * time.Millisecond, Token: "test-token"}); err != nil {
				return err
			}
			env.Defer(h.close)
			env.Values[simKey{}] = h
			proxy := &chargeProxy{}
			env.Defer(proxy.close)
			env.Values[proxyKey{}] = proxy
			sims := &providerSims{ports: ports}
			env.Defer(sims.close)
			env.Values[providerSimKey{}] = sims
			pg := &pgHolder{}
			env.Defer(pg.close)
			env.Values[pgKey{}] = pg
			env.Setenv("GENFORM_BASE_URL", h.url())
			env.Setenv("SIM_URL", h.url())
			env.Setenv("GENFORM_TOKEN", "test-token")
			env.Setenv("GENFORM_IN_AUTOMATION", "1")
			env.Setenv("NO_COLOR", "1")
			// Under -race every process sleeps a second at exit to let
			// reports flush; the scripts start hundreds of them.
			if os.Getenv("GORACE") == "" {
				env.Setenv("GORACE", "atexit_sleep_ms=10")
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"sim-start":      cmdSimStart,
			"provider-sim":   cmdProviderSim,
			"provider-stats": cmdProviderStats,
			"provider-wait":  cmdProviderWait,
			"charge-proxy":   cmdChargeProxy,
			"replace":        cmdReplace,
			"cache-tamper":   cmdCacheTamper,
			"sim-stats":      cmdSimStats,
			"sim-wait":       cmdSimWait,
			"state-verify":   cmdStateVerify,
			"sleep":          cmdSleep,
			"sim-create":     cmdSimCreate,
			"free-port":      cmdFreePort,
			"http":           cmdHTTP,
			"tmpfs":          cmdTmpfs,
			"mount-ro":       cmdMountRO,
			"fill":           cmdFill,
			"run-imports":    cmdRunImports,
			"pg-start":       cmdPGStart,
			"pg-stop":        cmdPGStop,
			"pg-restart":     cmdPGRestart,
			"pg-lock":        cmdPGLock,
			"pg-unlock":      cmdPGUnlock,
			"pg-freeze":      cmdPGFreeze,
			"pg-thaw":        cmdPGThaw,
			"read-lock":      cmdReadLock,
			"s3-start":       cmdS3Start,
			"s3-stop":        cmdS3Stop,
			"s3-restart":     cmdS3Restart,
			"s3-ls":          cmdS3Ls,
			"s3-count":       cmdS3Count,
			"s3-corrupt":     cmdS3Corrupt,
			"s3-rm":          cmdS3Rm,
			"s3-put":         cmdS3Put,
		},
		Condition: func(cond string) (bool, error) {
			if cond == "mount" {
				return harness.CanMount(), nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	})
}

type simKey struct{}

// simHolder owns the simulator of one script; sim-start swaps it.
type simHolder struct {
	ports *heldPorts
	mu    sync.Mutex
	inst  *simulator.Instance
}

// start starts a simulator at addr ("" for any free port), in place of
// the one running; one at the same address is stopped first (the service
// restarted: its URL, and so the service's identity, stays). At a port
// free-port holds, it listens on the held socket, so no other process
// can have taken the port since.
func (h *simHolder) start(addr string, opts simulator.Options) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if addr != "" && h.inst != nil && strings.TrimPrefix(h.inst.URL, "http://") == addr {
		h.inst.Close()
		h.inst = nil
	}
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := h.ports.listen(addr)
	if err != nil {
		return err
	}
	inst, err := simulator.Serve(ln, opts)
	if err != nil {
		return err
	}
	if h.inst != nil {
		h.inst.Close()
	}
	h.inst = inst
	return nil
}

func (h *simHolder) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.inst != nil {
		h.inst.Close()
		h.inst = nil
	}
}

// url is the address of the simulator running now.
func (h *simHolder) url() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.inst.URL
}

func holder(ts *testscript.TestScript) *simHolder { return ts.Value(simKey{}).(*simHolder) }

// sim-start [-latency D] [-error-rate F] [-read-errors-only] [-truncate-rate F] [-fail-rate F] [-rpm N]
// [-max-concurrent N] [-seed N] [-data DIR] [-url-ttl D] [-token T] [-addr HOST:PORT]
// restarts the script's simulator with these options and points
// GENFORM_BASE_URL at it. With -addr the same address, and -data the same
// directory, it is the same service restarted. It accepts the token
// "test-token", or T (the script sets GENFORM_TOKEN to it).
func cmdSimStart(ts *testscript.TestScript, neg bool, args []string) {
	fs := commandFlags(ts, neg, "sim-start")
	opts := simulator.Options{Token: "test-token"}
	addr := simFlags(ts, fs, &opts, "", args)
	h := holder(ts)
	ts.Check(h.start(addr, opts))
	ts.Setenv("GENFORM_BASE_URL", h.url())
	ts.Setenv("SIM_URL", h.url())
}

// commandFlags is a new flag set of script command name, which has no
// negated form: it fails the script when neg.
func commandFlags(ts *testscript.TestScript, neg bool, name string) *flag.FlagSet {
	if neg {
		ts.Fatalf("unsupported: ! %s", name)
	}
	return flag.NewFlagSet(name, flag.ContinueOnError)
}

// simFlags defines on fs the flags sim-start and provider-sim share,
// each setting the option of its name in opts, and -data and -addr;
// parses args with them; and returns -addr (addr when not given). A
// simulator started with them answers jobs in 300ms and draws its
// faults with seed 1; -token replaces the key it accepts.
func simFlags(ts *testscript.TestScript, fs *flag.FlagSet, opts *simkit.Options, addr string, args []string) string {
	fs.DurationVar(&opts.Latency, "latency", 300*time.Millisecond, "")
	fs.Float64Var(&opts.ErrorRate, "error-rate", 0, "")
	fs.BoolVar(&opts.ReadErrorsOnly, "read-errors-only", false, "")
	fs.Float64Var(&opts.TruncateRate, "truncate-rate", 0, "")
	fs.Float64Var(&opts.FailRate, "fail-rate", 0, "")
	fs.IntVar(&opts.RPM, "rpm", 0, "")
	fs.IntVar(&opts.MaxConcurrent, "max-concurrent", 0, "")
	fs.Int64Var(&opts.Seed, "seed", 1, "")
	fs.DurationVar(&opts.URLTTL, "url-ttl", 0, "")
	fs.StringVar(&opts.Token, "token", opts.Token, "")
	data := fs.String("data", "", "")
	fs.StringVar(&addr, "addr", addr, "")
	ts.Check(fs.Parse(args))
	if *data != "" {
		opts.DataDir = ts.MkAbs(*data)
	}
	return addr
}

// simReport is what the script's simulator serves at GET /_sim/jobs.
func simReport(ts *testscript.TestScript) simulator.JobsReport {
	rep, err := simtest.Report(holder(ts).url())
	ts.Check(err)
	return rep
}

// sim-stats prints what the simulator saw, one "name value" line each:
// jobs, creates-max (the highest create count of any one request
// fingerprint: 1 means nothing was generated twice), requests, throttled.
// sim-stats -downloads prints the media files it served instead, as
// "downloads N": what a client fetched from elsewhere it did not ask for.
func cmdSimStats(ts *testscript.TestScript, neg bool, args []string) {
	fs := commandFlags(ts, neg, "sim-stats")
	downloads := fs.Bool("downloads", false, "")
	ts.Check(fs.Parse(args))
	if fs.NArg() != 0 {
		ts.Fatalf("usage: sim-stats [-downloads]")
	}
	rep := simReport(ts)
	if *downloads {
		fmt.Fprintf(ts.Stdout(), "downloads %d\n", rep.Downloads)
		return
	}
	printStats(ts, rep)
}

// printStats prints what a simulator's report says, as sim-stats and
// provider-stats do.
func printStats(ts *testscript.TestScript, rep simkit.JobsReport) {
	most := 0
	for _, n := range rep.Creates {
		most = max(most, n)
	}
	fmt.Fprintf(ts.Stdout(), "jobs %d\ncreates-max %d\nrequests %d\nthrottled %d\n", len(rep.Jobs), most, rep.Requests, rep.Throttled)
}

// sim-wait [-polled] N waits (up to 30s) until the simulator holds at
// least N jobs. With -polled it waits until at least N jobs have each
// answered a status request: genform commits a job's generation id to its
// state before it first polls the job, so a polled job is one a killed or
// interrupted apply has recorded and the next apply resumes. Scripts wait
// on this rather than sleeping for a while and hoping genform got there.
func cmdSimWait(ts *testscript.TestScript, neg bool, args []string) {
	fs := commandFlags(ts, neg, "sim-wait")
	polled := fs.Bool("polled", false, "")
	ts.Check(fs.Parse(args))
	if fs.NArg() != 1 {
		ts.Fatalf("usage: sim-wait [-polled] N")
	}
	n, err := strconv.Atoi(fs.Arg(0))
	ts.Check(err)
	if !*polled {
		waitSim(ts, fmt.Sprintf("the simulator holds %d jobs", n), func(rep simulator.JobsReport) bool {
			return len(rep.Jobs) >= n
		})
		return
	}
	waitSim(ts, fmt.Sprintf("%d jobs have been polled", n), func(rep simulator.JobsReport) bool {
		seen := 0
		for _, j := range rep.Jobs {
			if j.StatusRequests >= 1 {
				seen++
			}
		}
		return seen >= n
	})
}

// waitSim polls the simulator's job report until done holds, and fails the
// script when it does not within 30s; what names the awaited condition.
func waitSim(ts *testscript.TestScript, what string, done func(simulator.JobsReport) bool) {
	waitReport(ts, what, func() simkit.JobsReport { return simReport(ts) }, done)
}

// waitReport is waitSim of the simulator whose report is read by report.
func waitReport(ts *testscript.TestScript, what string, report func() simkit.JobsReport, done func(simkit.JobsReport) bool) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		rep := report()
		if done(rep) {
			return
		}
		if time.Now().After(deadline) {
			for _, j := range rep.Jobs {
				ts.Logf("job %s: %s, %d status requests", j.ID, j.Status, j.StatusRequests)
			}
			ts.Fatalf("gave up after 30s waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// state-verify [STATEFILE] checks the state the way a suspicious user would:
// bbolt's own consistency check passes, no intent is left behind, and every
// recorded output exists on disk with the recorded sha256. It prints
// "verified N outputs of M resources".
func cmdStateVerify(ts *testscript.TestScript, neg bool, args []string) {
	path := ".genform/state.db"
	if len(args) > 0 {
		path = args[0]
	}
	snap, err := harness.ReadCheckedState(ts.MkAbs(path), "state-verify")
	ts.Check(err)
	if len(snap.Intents) > 0 {
		for addr := range snap.Intents {
			ts.Logf("intent left: %s", addr)
		}
		ts.Fatalf("%d intents left in the state", len(snap.Intents))
	}
	n := 0
	for addr, r := range snap.Resources {
		for _, o := range r.Outputs {
			ts.Check(harness.CheckOutput(ts.MkAbs("."), addr, o))
			n++
		}
	}
	fmt.Fprintf(ts.Stdout(), "verified %d outputs of %d resources\n", n, len(snap.Resources))
}

// sleep DURATION pauses the script. It is for waits that are about wall
// time, such as a simulator job's latency; to let genform reach a point,
// wait on what the simulator saw instead (sim-wait).
func cmdSleep(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: sleep DURATION")
	}
	d, err := time.ParseDuration(args[0])
	ts.Check(err)
	time.Sleep(d)
}

// http [-token T] [-wait] [-save VAR=path.to.field] METHOD URL [BODYFILE]
// sends one request, as curl would, and prints "status N" and the body.
// -wait retries connection errors for up to 10s (a server starting);
// -save stores a string field of the JSON answer (dot path) in VAR.
func cmdHTTP(ts *testscript.TestScript, neg bool, args []string) {
	fs := flag.NewFlagSet("http", flag.ContinueOnError)
	token := fs.String("token", "", "")
	wait := fs.Bool("wait", false, "")
	save := fs.String("save", "", "")
	ts.Check(fs.Parse(args))
	if fs.NArg() < 2 {
		ts.Fatalf("usage: http [-token T] [-wait] [-save VAR=path] METHOD URL [BODYFILE]")
	}
	var body []byte
	if fs.NArg() > 2 {
		body = []byte(ts.ReadFile(fs.Arg(2)))
	}
	var resp *http.Response
	deadline := time.Now().Add(10 * time.Second)
	for {
		req, err := http.NewRequest(fs.Arg(0), fs.Arg(1), bytes.NewReader(body))
		ts.Check(err)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if *token != "" {
			req.Header.Set("Authorization", "Bearer "+*token)
		}
		resp, err = http.DefaultClient.Do(req)
		if err == nil {
			break
		}
		if !*wait || time.Now().After(deadline) {
			ts.Fatalf("%s %s: %v", fs.Arg(0), fs.Arg(1), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	ts.Check(err)
	fmt.Fprintf(ts.Stdout(), "status %d\n%s\n", resp.StatusCode, b)
	if *save != "" {
		name, path, _ := strings.Cut(*save, "=")
		var v any
		ts.Check(json.Unmarshal(b, &v))
		for _, k := range strings.Split(path, ".") {
			switch x := v.(type) {
			case map[string]any:
				v = x[k]
			case []any:
				i, err := strconv.Atoi(k)
				if err != nil || i < 0 || i >= len(x) {
					ts.Fatalf("-save %s: no element %q in %s", *save, k, b)
				}
				v = x[i]
			default:
				ts.Fatalf("-save %s: no field %q in %s", *save, k, b)
			}
		}
		s, ok := v.(string)
		if !ok {
			ts.Fatalf("-save %s: %v is not a string", *save, v)
		}
		ts.Setenv(name, s)
	}
}
