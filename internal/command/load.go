package command

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/operation"
	"github.com/genform/genform/internal/views"
)

// opEnv is what the operations take from the process: the environment,
// stderr for the request trace, the view of their warnings, the user
// agent.
func (e *Env) opEnv() operation.Env {
	return operation.Env{
		Getenv:    e.Getenv,
		Log:       e.Stderr,
		Warn:      e.Streams.Warn,
		UserAgent: "genform/" + Version,
	}
}

// load loads the configuration of the working directory and prints its
// diagnostics. It returns nil when there were errors.
func load(env *Env, opts config.Options) *operation.Workspace {
	ws, diags := operation.Load(env.opEnv(), opts)
	if !diagnose(env, ws, diags) {
		return nil
	}
	return ws
}

// loadForReading is load for the commands that only read the state
// (operation.LoadForReading); unset holds the errors about variables left
// unset, for output to print when a value it shows may be made from one.
func loadForReading(env *Env, opts config.Options) (ws *operation.Workspace, unset hcl.Diagnostics) {
	ws, diags, unset := operation.LoadForReading(env.opEnv(), opts)
	if !diagnose(env, ws, diags) {
		return nil, nil
	}
	return ws, unset
}

// diagnose prints diags against ws's files and reports whether there
// were no errors.
func diagnose(env *Env, ws *operation.Workspace, diags hcl.Diagnostics) bool {
	if len(diags) > 0 {
		views.Diagnostics(&env.Streams, ws.Config.Files, diags)
	}
	return !diags.HasErrors()
}
