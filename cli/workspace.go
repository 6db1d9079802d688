package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/genform/genform/config"
	"github.com/genform/genform/config/addrs"
	"github.com/genform/genform/reconcile"
	"github.com/genform/genform/service"
	"github.com/genform/genform/simulator"
	"github.com/genform/genform/statefile"
)

// This file holds what the commands that plan and apply share: loading the
// configuration, naming the service, opening the state, starting the
// built-in simulator. Each command takes only the pieces it needs.

// builtinToken is what genform presents to its own in-process simulator.
const builtinToken = "genform-builtin"

// addrsFlag collects a repeatable address flag (-target, -replace),
// refusing at parse time what is not an address.
type addrsFlag []addrs.Instance

func (s *addrsFlag) String() string { return strings.Join(addrStrings(*s), ",") }

func (s *addrsFlag) Set(v string) error {
	a, err := addrs.ParseInstance(v)
	if err != nil {
		return err
	}
	*s = append(*s, a)
	return nil
}

// loadConfig loads the configuration of the working directory and prints
// its diagnostics. It returns nil when there were errors.
func loadConfig(env *Env, opts config.Options) *config.Config {
	cfg, diags := config.Load(".", opts)
	if len(diags) > 0 {
		writeDiagnostics(env, cfg.Files, diags)
	}
	if diags.HasErrors() {
		return nil
	}
	return cfg
}

// endpoint says which service a command talks to.
type endpoint struct {
	// ID enters fingerprints: the base URL, or "simulator".
	ID string
	// BaseURL is "" for the built-in simulator.
	BaseURL string
	Token   string
}

func (ep endpoint) builtin() bool { return ep.BaseURL == "" }

// describe is the plan header's service line.
func (ep endpoint) describe() string {
	if ep.builtin() {
		return "built-in simulator (outputs are synthetic)"
	}
	return ep.BaseURL
}

// resolveEndpoint applies the precedence config > environment > built-in.
func resolveEndpoint(env *Env, cfg *config.Config) endpoint {
	base := cfg.Service.BaseURL
	if base == "" {
		base = env.Getenv("GENFORM_BASE_URL")
	}
	token := cfg.Service.Token
	if token == "" {
		token = env.Getenv("GENFORM_TOKEN")
	}
	if base == "" {
		return endpoint{ID: config.SimulatorService, Token: builtinToken}
	}
	base = strings.TrimRight(base, "/")
	return endpoint{ID: base, BaseURL: base, Token: token}
}

// connect returns a client of the service; for the built-in simulator it
// first starts one on a loopback port, its jobs kept under .genform/ so an
// interrupted apply resumes against it. stop releases what connect started.
// onRetry, when not nil, hears of every retry (service.Config.OnRetry).
func connect(env *Env, cfg *config.Config, ep endpoint, onRetry func(context.Context, service.RetryInfo)) (client *service.Client, stop func(), err error) {
	stop = func() {}
	base := ep.BaseURL
	var httpClient *http.Client
	if ep.builtin() {
		dataDir := filepath.Join(filepath.Dir(cfg.Settings.StateFile), "simulator")
		inst, err := simulator.Listen("127.0.0.1:0", simulator.Options{
			Latency: time.Second,
			DataDir: dataDir,
			Token:   builtinToken,
		})
		if err != nil {
			return nil, stop, fmt.Errorf("starting the built-in simulator: %w", err)
		}
		base = inst.URL
		stop = func() { inst.Close() }
		// The simulator's media URLs name the loopback port it had when
		// the job was made, and the built-in one gets a new port every
		// run: every connection goes to this run's instance instead.
		addr := strings.TrimPrefix(inst.URL, "http://")
		var d net.Dialer
		httpClient = &http.Client{Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return d.DialContext(ctx, network, addr)
			},
			MaxIdleConnsPerHost: 64,
		}}
	}
	var debug io.Writer
	if strings.EqualFold(env.Getenv("GENFORM_LOG"), "debug") {
		debug = env.Stderr
	}
	client, err = service.New(service.Config{
		BaseURL:           base,
		Token:             ep.Token,
		RequestsPerMinute: cfg.Service.RequestsPerMinute,
		Debug:             debug,
		HTTPClient:        httpClient,
		AllowRemoteHTTP:   true, // the base URL was set explicitly by the user
		UserAgent:         "genform/" + Version,
		OnRetry:           onRetry,
	})
	if err != nil {
		stop()
		return nil, func() {}, err
	}
	return client, stop, nil
}

// openState opens the state file under its exclusive lock. With create
// false, a missing file gives (nil, nil).
func openState(cfg *config.Config, command string, lockTimeout time.Duration, create bool) (*statefile.Store, error) {
	if err := reconcile.CheckInside(".", filepath.Dir(cfg.Settings.StateFile)); err != nil {
		return nil, fmt.Errorf("state_file: %w", err)
	}
	st, err := statefile.Open(cfg.Settings.StateFile, statefile.Options{
		LockTimeout: lockTimeout,
		Command:     command,
		Create:      create,
	})
	if err != nil {
		if !create && errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	return st, nil
}

// snapshot reads the whole state under the lock; a missing state file is
// an empty state.
func snapshot(cfg *config.Config, command string, lockTimeout time.Duration) (*statefile.Snapshot, error) {
	st, err := openState(cfg, command, lockTimeout, false)
	if err != nil || st == nil {
		return nil, err
	}
	defer st.Close()
	return st.Snapshot()
}

// planFlagsUsage documents the flags planFlags registers with refresh, for
// the usage text of plan and apply.
const planFlagsUsage = `  -target=ADDR         limit to ADDR and what it depends on (repeatable)
  -replace=ADDR        generate ADDR anew (repeatable)
  -var 'NAME=VALUE'    set a variable (repeatable)
  -var-file=FILE       read variables from a *.genvars.hcl file (repeatable)
  -refresh=false       do not check output files on disk
  -lock-timeout=DUR    wait this long for the state lock (default 0s)
`

// planFlags are the flags plan, apply and destroy share.
type planFlags struct {
	vars        varFlags
	targets     addrsFlag
	replace     addrsFlag
	lockTimeout time.Duration
	refresh     bool
}

func (p *planFlags) register(fs *flag.FlagSet, withRefresh bool) {
	p.vars.register(fs)
	fs.Var(&p.targets, "target", "limit to this resource address and what it depends on (repeatable)")
	fs.Var(&p.replace, "replace", "generate this resource instance anew (repeatable)")
	fs.DurationVar(&p.lockTimeout, "lock-timeout", 0, "how long to wait for the state lock")
	p.refresh = true
	if withRefresh {
		fs.BoolVar(&p.refresh, "refresh", true, "check output files on disk")
	}
}
