// Package cli is genform's command line: it parses global flags and each
// command's flags into typed values, calls the packages that do the work, and
// renders their results (plans, state, diagnostics) for people and scripts.
//
// It owns printing and exit codes; no other package writes to the terminal or
// chooses how the process ends. Each command lives in a file of its own that
// registers itself with the dispatcher in cli.go.
package cli
