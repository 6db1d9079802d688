package operation

import (
	"io"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/backend"
	"github.com/genform/genform/internal/history"
	"github.com/genform/genform/internal/operation/outcome"
	"github.com/genform/genform/internal/secrets"
	"github.com/genform/genform/internal/workdir"
	"github.com/genform/genform/statefile"
)

// Env is what an operation takes from the process.
type Env struct {
	// Getenv reads the process environment (GENFORM_BASE_URL,
	// GENFORM_TOKEN, GENFORM_LOG, GOMAXPROCS).
	Getenv func(string) string
	// Log receives the request trace when GENFORM_LOG=debug.
	Log io.Writer
	// Warn hears what an operation goes on despite (a service switch it
	// was asked to make), as data for a view to say; nil discards it.
	Warn func(outcome.Warning)
	// UserAgent is sent with every request to the service.
	UserAgent string
}

func (e Env) warn(w outcome.Warning) {
	if e.Warn != nil {
		e.Warn(w)
	}
}

// Workspace is a working directory's configuration, loaded, with the
// service it points at: what every operation starts from.
type Workspace struct {
	Env
	Config   *config.Config
	Endpoint Endpoint
	// Name is the workspace selected (GENFORM_WORKSPACE, or genform
	// workspace select's): whose state every command reads and writes.
	Name string
}

// Load loads the configuration of the working directory. The workspace
// is returned even when diags has errors, so that they can be printed
// with the configuration's files; it must not be used then.
func Load(env Env, opts config.Options) (*Workspace, hcl.Diagnostics) {
	cfg, diags := config.Load(".", opts)
	diags = append(diags, backend.Diagnostics(cfg)...)
	ws := &Workspace{Env: env, Config: cfg, Endpoint: ResolveEndpoint(cfg, env.Getenv), Name: backend.DefaultWorkspace}
	if name, err := backend.Selected(env.Getenv); err != nil {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid workspace", Detail: err.Error() + "."})
	} else {
		ws.Name = name
	}
	if cfg.Service.BaseURL == "" && config.HasCredentials(ws.Endpoint.BaseURL) {
		// Refused before anything prints or stores the URL.
		ws.Endpoint = ResolveEndpoint(&config.Config{}, func(string) string { return "" })
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Credentials in GENFORM_BASE_URL",
			Detail:   "GENFORM_BASE_URL holds a user name or password before the host. genform would print and store the URL (in plans, the state, saved plans and logs), so it refuses it, and does not show it here: remove them from the URL, and give the service its token with GENFORM_TOKEN.",
		})
	}
	return ws, diags
}

// LoadForReading loads the configuration for a command that only reads
// the state: show, state list, state show, state pull, output, history
// and gallery. Of the configuration they need where the state is and,
// for show -json, the service it points at, not the values planning
// needs; so a required variable left unset, or a token read with env()
// from a variable that is not set (as in a pull request's CI job, which
// has no secrets), does not stop them. That holds only while state_file,
// the backend's settings and base_url are written without variables or
// functions: one made from a missing value would silently name another
// state. Otherwise it is Load. When it reads despite errors, diags holds
// only the warnings, and unset the errors about variables left unset, for
// output to print when a value it shows may be made from one.
func LoadForReading(env Env, opts config.Options) (ws *Workspace, diags, unset hcl.Diagnostics) {
	ws, diags = Load(env, opts)
	if !diags.HasErrors() || !readableDespite(ws.Config, diags) {
		return ws, diags, nil
	}
	var warnings hcl.Diagnostics
	for _, d := range diags {
		switch {
		case d.Severity != hcl.DiagError:
			warnings = append(warnings, d)
		case unsetVariable(ws.Config, *d.Subject):
			unset = append(unset, d)
		}
	}
	return ws, warnings, unset
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

// Hider says what to hide in the views of recorded instances: what the
// configuration makes from a secret.
func (w *Workspace) Hider() *secrets.Hider { return secrets.NewHider(w.Config) }

// OpenState opens the state under its exclusive lock, for a command that
// writes it (or, like plan, must not run beside one that does). With
// create false, a missing state gives (nil, nil).
func (w *Workspace) OpenState(command string, lockTimeout time.Duration, create bool) (*statefile.Store, error) {
	return backend.OpenState(w.Config, w.Name, command, lockTimeout, create)
}

// LockState opens the state under its exclusive lock for a command that
// writes nothing (plan); a missing state gives (nil, nil).
func (w *Workspace) LockState(command string, lockTimeout time.Duration) (*statefile.Store, error) {
	return backend.LockState(w.Config, w.Name, command, lockTimeout)
}

// ReadState opens the state for reading the last state committed, without
// waiting for a writer (statefile.Options.ReadOnly); a missing state gives
// (nil, nil).
func (w *Workspace) ReadState(command string, lockTimeout time.Duration) (*statefile.Store, error) {
	return backend.ReadState(w.Config, w.Name, command, lockTimeout)
}

// StateWhere names where the state is kept, for messages.
func (w *Workspace) StateWhere() string { return backend.Where(w.Config, w.Name) }

// StateInDatabase reports whether the state is kept in a database (a
// backend block), which messages call the state, not the state file.
func (w *Workspace) StateInDatabase() bool { return w.Config.Settings.Backend != nil }

// Snapshot reads the whole state as last committed; a missing state is
// nil.
func (w *Workspace) Snapshot(command string, lockTimeout time.Duration) (*statefile.Snapshot, error) {
	st, err := w.ReadState(command, lockTimeout)
	if err != nil || st == nil {
		return nil, err
	}
	defer st.Close()
	return st.Snapshot()
}

// History reads the state and its history, one committed state for both;
// a missing state is a nil snapshot with an empty history.
func (w *Workspace) History(command string, lockTimeout time.Duration) (*statefile.Snapshot, *history.View, error) {
	c, h := workdir.CacheOf(w.Config, "."), w.Hider()
	st, err := w.ReadState(command, lockTimeout)
	if err != nil || st == nil {
		return nil, history.New(nil, nil, c, h), err
	}
	defer st.Close()
	snap, err := st.Snapshot()
	if err != nil {
		return nil, history.New(nil, nil, c, h), err
	}
	entries, err := st.History(addrs.Instance{})
	if err != nil {
		return nil, history.New(nil, nil, c, h), err
	}
	return snap, history.New(entries, snap, c, h), nil
}

// debugLog is where the request trace goes: Log with GENFORM_LOG=debug,
// nowhere otherwise.
func (w *Workspace) debugLog() io.Writer {
	if w.Getenv != nil && strings.EqualFold(w.Getenv("GENFORM_LOG"), "debug") {
		return w.Log
	}
	return nil
}

// SensitiveRecords lists the instances whose records in st (their
// current generation, or one the history keeps) hold a value the
// configuration makes from a secret, in address order.
func (w *Workspace) SensitiveRecords(st *statefile.Store) ([]string, error) {
	h := w.Hider()
	snap, err := st.Snapshot()
	if err != nil {
		return nil, err
	}
	entries, err := st.History(addrs.Instance{})
	if err != nil {
		return nil, err
	}
	seen := map[addrs.Instance]bool{}
	for _, rec := range snap.Resources {
		if h.Of(rec) != nil {
			seen[rec.Addr] = true
		}
	}
	for _, e := range entries {
		if h.Of(e) != nil {
			seen[e.Addr] = true
		}
	}
	return addrs.Strings(addrs.SortedKeys(seen)), nil
}
