// Package cli is genform's command line: it parses global flags and each
// command's flags into typed values, calls the packages that do the work, and
// renders their results (plans, state, diagnostics) for people and scripts.
//
// It owns printing and exit codes; no other package writes to the terminal or
// chooses how the process ends. Each command lives in a file of its own that
// registers itself with the dispatcher in cli.go.
//
// It owns the words and the documents, too. The engine decides with codes
// (plans.Action, plans.Reason); view_reason.go writes what they mean,
// once, for the human plan, the pull-request comment and the JSON plan. The
// public JSON documents (the plan of view_plan.go, the state of
// view_state.go, format_version "1", fields only ever added) and the saved
// plan file (planfile.go, versioned on its own, holding nothing secret) are
// encoded here, from the engine's model, which has no JSON tags.
package command
