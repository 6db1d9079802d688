package command

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
	"syscall"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/service"
	"github.com/genform/genform/internal/simulator"
	"github.com/genform/genform/internal/workdir"
	"github.com/genform/genform/statefile"
	"github.com/genform/genform/statefile/pgstate"
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
		// Not err itself: it quotes the value.
		return &safeFlagError{"it takes a resource address: image.NAME or video.NAME, with [N] or [\"KEY\"] for one instance of a counted or for_each resource"}
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

// loadForReading loads the configuration for a command that only reads
// the state: show, state list, state show, output and gallery. Of the
// configuration they need where the state file is and, for show -json,
// the service it points at, not the values planning needs; so a required
// variable left unset, or a token read with env() from a variable that is
// not set (as in a pull request's CI job, which has no secrets), does not
// stop them. That holds only while state_file and base_url are written
// without variables or functions: one made from a missing value would
// silently name another file. Every other error is printed, and it
// returns nil, as loadConfig does. unset holds the errors about variables
// left unset, for output to print when a value it shows may be made from
// one.
func loadForReading(env *Env, opts config.Options) (cfg *config.Config, unset hcl.Diagnostics) {
	cfg, diags := config.Load(".", opts)
	if !diags.HasErrors() || !readableDespite(cfg, diags) {
		if len(diags) > 0 {
			writeDiagnostics(env, cfg.Files, diags)
		}
		if diags.HasErrors() {
			return nil, nil
		}
		return cfg, nil
	}
	var warnings hcl.Diagnostics
	for _, d := range diags {
		switch {
		case d.Severity != hcl.DiagError:
			warnings = append(warnings, d)
		case unsetVariable(cfg, *d.Subject):
			unset = append(unset, d)
		}
	}
	writeDiagnostics(env, cfg.Files, warnings)
	return cfg, unset
}

// readableDespite reports whether every error of diags is about an input
// the reading commands do not use (a required variable with no value, the
// service token), and the settings they use are literal values.
func readableDespite(cfg *config.Config, diags hcl.Diagnostics) bool {
	var tokens []hcl.Range
	for _, f := range cfg.Files {
		if f == nil || f.Body == nil {
			return false
		}
		content, _, _ := f.Body.PartialContent(&hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "genform"}, {Type: "service"}}})
		for _, b := range content.Blocks {
			names := []string{"state_file"}
			if b.Type == "service" {
				names = []string{"base_url", "token"}
			}
			schema := &hcl.BodySchema{}
			for _, n := range names {
				schema.Attributes = append(schema.Attributes, hcl.AttributeSchema{Name: n})
			}
			if b.Type == "genform" {
				schema.Blocks = []hcl.BlockHeaderSchema{{Type: "backend", LabelNames: []string{"type"}}}
			}
			attrs, _, _ := b.Body.PartialContent(schema)
			// Where a backend keeps the state must be literal too: a
			// setting left to an unset variable would read another state.
			for _, be := range attrs.Blocks {
				bc, _, _ := be.Body.PartialContent(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "conn_str"}, {Name: "schema_name"}}})
				for _, a := range bc.Attributes {
					if v, d := a.Expr.Value(nil); d.HasErrors() || !v.IsWhollyKnown() {
						return false
					}
				}
			}
			for name, a := range attrs.Attributes {
				if name == "token" {
					tokens = append(tokens, a.Range)
					continue
				}
				if v, d := a.Expr.Value(nil); d.HasErrors() || !v.IsWhollyKnown() {
					return false
				}
			}
		}
	}
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		if d.Subject == nil || !(unsetVariable(cfg, *d.Subject) || within(tokens, *d.Subject)) {
			return false
		}
	}
	return true
}

// unsetVariable reports whether rng is the declaration of a variable that
// has no value: where config reports a required variable left unset.
func unsetVariable(cfg *config.Config, rng hcl.Range) bool {
	for _, v := range cfg.Variables {
		if v.DeclRange == rng && !v.Value.IsWhollyKnown() {
			return true
		}
	}
	return false
}

// within reports whether rng lies inside one of outer.
func within(outer []hcl.Range, rng hcl.Range) bool {
	for _, o := range outer {
		if o.Filename == rng.Filename && o.Start.Byte <= rng.Start.Byte && rng.End.Byte <= o.End.Byte {
			return true
		}
	}
	return false
}

// endpoint says which service a command talks to.
type endpoint struct {
	// ID enters fingerprints: the base URL, or "simulator".
	ID string
	// BaseURL is "" for the built-in simulator.
	BaseURL string
	Token   string
	// From says where BaseURL was set: "service.base_url" or
	// "GENFORM_BASE_URL"; "" for the built-in simulator.
	From string
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
	base, from := cfg.Service.BaseURL, "service.base_url"
	if base == "" {
		base, from = env.Getenv("GENFORM_BASE_URL"), "GENFORM_BASE_URL"
	}
	token := cfg.Service.Token
	if token == "" {
		token = env.Getenv("GENFORM_TOKEN")
	}
	if base == "" {
		return endpoint{ID: config.SimulatorService, Token: builtinToken}
	}
	base = strings.TrimRight(base, "/")
	return endpoint{ID: base, BaseURL: base, Token: token, From: from}
}

// The state names the service it was made with (statefile.Meta.Service).
// Every fingerprint includes the service, so a state used with another one
// plans to generate everything anew, and apply would overwrite the files
// with what that service makes: a forgotten GENFORM_BASE_URL would move a
// state made on a paid service to the built-in simulator without a word.
// So plan, apply, destroy and import call checkService before they use the
// state. The engine records the service in the same transaction as the
// first submission (or download) of an apply, and import once it has
// adopted a creation: a state names a service once something was made
// there, and an apply that reached nothing leaves it as it was.

// serviceSwitch is a state made with one service used with another.
type serviceSwitch struct {
	// recorded is the service identity the state names.
	recorded string
	// to is the service the configuration points at.
	to endpoint
}

// String says which service is which; checkService adds what to do.
func (sw *serviceSwitch) String() string {
	return fmt.Sprintf("the state was made with %s, but this configuration uses %s", describeServiceID(sw.recorded), sw.configured())
}

// configured names the configured service and where it was set.
func (sw *serviceSwitch) configured() string {
	if sw.to.builtin() {
		return "the built-in simulator (GENFORM_BASE_URL and service.base_url are unset)"
	}
	return fmt.Sprintf("service %s (set by %s)", sw.to.BaseURL, sw.to.From)
}

// describeServiceID names a service identity in a sentence.
func describeServiceID(id string) string {
	if id == config.SimulatorService {
		return "the built-in simulator"
	}
	return "service " + id
}

// recordedService is the service a state names; "" when there is no
// state, or it names none yet.
func recordedService(snap *statefile.Snapshot) string {
	if snap == nil {
		return ""
	}
	return snap.Meta.Service
}

// checkService is the check plan, apply, destroy and import make before
// they use a state that names the service recorded (see recordedService)
// with ep. A state that names ep, or none yet (a new state, or one written
// by a genform that did not record it), passes. Otherwise, with migrate
// (the command's -migrate-service) it warns and returns the service the
// state moves away from; without, it prints an error naming both services
// and the way to switch on purpose, and returns ExitError.
func checkService(env *Env, command, recorded string, ep endpoint, migrate bool) (from string, code int) {
	if recorded == "" || recorded == ep.ID {
		return "", ExitOK
	}
	sw := &serviceSwitch{recorded: recorded, to: ep}
	to := describeServiceID(ep.ID)
	switch {
	case command == "destroy":
		// destroy deletes the files the state records and forgets them: it
		// sends nothing to any service and compares no fingerprint, so the
		// configured service changes nothing of what it does, and nothing
		// is paid for again. Refusing would only leave a user who can no
		// longer reach the old service unable to clean up. It warns, since
		// the mismatch is usually a mistake the next plan would stop at.
		fmt.Fprintf(env.Stderr, "Warning: %v; destroy sends nothing to a service, so it deletes what the state records all the same.\n", sw)
		return "", ExitOK
	case migrate && command == "import":
		fmt.Fprintf(env.Stderr, "Warning: %v; with -migrate-service the creation is imported from %s and the state will name it: plan then generates anew what was made with %s.\n", sw, to, describeServiceID(recorded))
		return recorded, ExitOK
	case migrate:
		fmt.Fprintf(env.Stderr, "Warning: %v; with -migrate-service everything made there is generated anew on %s, and the state will name it.\n", sw, to)
		return recorded, ExitOK
	case command == "import":
		return "", env.Errorf("%v; set it back, or pass -migrate-service to import from %s and have the state name it", sw, to)
	}
	return "", env.Errorf("%v; set it back, or pass -migrate-service to plan and apply to generate everything anew on %s", sw, to)
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
		MaxDownloadSize:   cfg.Service.MaxDownloadSize,
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

// openState opens the state file under its exclusive lock, for a command
// that writes the state (or, like plan, must not run beside one that
// does). With create false, a missing file gives (nil, nil).
func openState(cfg *config.Config, command string, lockTimeout time.Duration, create bool) (*statefile.Store, error) {
	return openStateFile(cfg, statefile.Options{LockTimeout: lockTimeout, Command: command, Create: create})
}

// readState opens the state file for reading, under a shared lock: the
// commands that only read it (show, state list, state show, output,
// gallery) run beside each other, and on a read-only checkout, and wait
// only for a command holding the exclusive lock. A missing file gives
// (nil, nil).
func readState(cfg *config.Config, command string, lockTimeout time.Duration) (*statefile.Store, error) {
	return openStateFile(cfg, statefile.Options{LockTimeout: lockTimeout, Command: command, ReadOnly: true})
}

func openStateFile(cfg *config.Config, opts statefile.Options) (*statefile.Store, error) {
	if err := checkStorage(cfg); err != nil {
		return nil, err
	}
	var st *statefile.Store
	var err error
	if be := cfg.Settings.Backend; be != nil {
		st, err = pgstate.Open(pgstate.Config{ConnString: be.ConnStr, Schema: be.SchemaName}, opts)
	} else {
		if err := workdir.CheckInside(".", filepath.Dir(cfg.Settings.StateFile)); err != nil {
			return nil, fmt.Errorf("state_file: %w", err)
		}
		st, err = statefile.Open(cfg.Settings.StateFile, opts)
	}
	switch {
	case err == nil:
		return st, nil
	case !opts.Create && errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case !opts.ReadOnly && (errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission)):
		return nil, fmt.Errorf("%w; genform %s takes the state's exclusive lock, which needs the state file and its directory writable: run it in a writable checkout (show, state list, state show, output and gallery only read the state, and work in a read-only one)", err, opts.Command)
	}
	return nil, err
}

// stateWhere names where the state is kept, for messages: the state
// file, or the PostgreSQL schema of the backend block.
func stateWhere(cfg *config.Config) string {
	if be := cfg.Settings.Backend; be != nil {
		return "PostgreSQL schema " + be.SchemaName
	}
	return cfg.Settings.StateFile
}

// readSnapshot reads the whole state under the shared lock of readState; a
// missing state file is an empty state.
func readSnapshot(cfg *config.Config, command string, lockTimeout time.Duration) (*statefile.Snapshot, error) {
	st, err := readState(cfg, command, lockTimeout)
	if err != nil || st == nil {
		return nil, err
	}
	defer st.Close()
	return st.Snapshot()
}

// planFlagsUsage documents the flags planFlags registers for planning, for
// the usage text of plan and apply.
const planFlagsUsage = `  -target=ADDR         limit to ADDR and what it depends on (repeatable)
  -replace=ADDR        generate ADDR anew (repeatable)
  -var 'NAME=VALUE'    set a variable (repeatable)
  -var-file=FILE       read variables from a *.genvars.hcl file (repeatable)
  -refresh=false       do not check output files on disk
  -lock-timeout=DUR    wait this long for the state lock (default 0s)
  -migrate-service     use the configured service although the state was made
                       with another: generate anew there what was made with it
`

// planFlags are the flags plan, apply and destroy share.
type planFlags struct {
	vars        varFlags
	targets     addrsFlag
	replace     addrsFlag
	lockTimeout time.Duration
	refresh     bool
	// migrateService accepts a state made with another service than the
	// configured one (see checkService).
	migrateService bool
}

// register registers the flags; planning is true for plan and apply, which
// compare the configuration with the state and so also take -refresh and
// -migrate-service.
func (p *planFlags) register(fs *flag.FlagSet, planning bool) {
	p.vars.register(fs)
	fs.Var(&p.targets, "target", "limit to this resource address and what it depends on (repeatable)")
	fs.Var(&p.replace, "replace", "generate this resource instance anew (repeatable)")
	fs.DurationVar(&p.lockTimeout, "lock-timeout", 0, "how long to wait for the state lock")
	p.refresh = true
	if planning {
		fs.BoolVar(&p.refresh, "refresh", true, "check output files on disk")
		fs.BoolVar(&p.migrateService, "migrate-service", false, "use the configured service although the state was made with another")
	}
}
