// Package command is genform's command line: it parses the global flags
// and each command's flags into typed values, chooses the command's view
// (package views) once from them (formatOf: -json, -format=markdown,
// -raw), calls one operation (package operation) and hands what it
// returns to that view, which writes it as text or as a document. It
// never switches on the format itself. Each command lives in a file of
// its own that registers itself with the dispatcher in cli.go.
//
// It owns the process's side of a run: the streams and environment a
// command gets (Env, injected so every command runs in-process in tests),
// exit codes, confirmation prompts, signals, and usage errors that never
// quote what was typed (a flag's value may be a secret). It does not
// plan, apply, open the state or talk to the service itself, and it writes
// no words of its own about what the engine decided: package words does.
package command
