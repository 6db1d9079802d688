// Package operation does, once, what genform's commands would otherwise
// each repeat: load the configuration (Load, or LoadForReading for the
// commands that only read the state), name the service it points at
// (Endpoint), open the state where it is kept (file or PostgreSQL,
// through package backend), check that the state was made with that
// service, connect to it or start the built-in simulator (Connect), and
// run the engine: Plan, BeginApply and BeginDestroy then Run.Execute,
// Import, Pull and Push. It is OpenTofu's backend/local for genform.
//
// A command parses its flags into a request, calls one operation and
// hands what it returns to a view. An operation returns data, never
// sentences: values, errors and diagnostics, and for the views the
// types of package outcome (the services a plan uses, for its header;
// what pull, push, state rm and state mv did). It prints nothing and
// chooses no exit code, and it hears of progress only through the hooks
// it is given (Events, Started, Progress); what it goes on despite (a
// service switch it was asked to make) it hands to Env.Warn as an
// outcome.Warning, which a view says in words. Only its errors are
// English, wrapped and lowercase. What is made from a secret is hidden
// before anything leaves it: plans are marked sensitive and the errors
// of a run are masked.
//
// It does not decide what to change (package reconcile does), how to
// carry it out (package reconcile/apply) or how anything reads (packages
// views, words and formats/...); signals and confirmation prompts belong
// to the command layer.
package operation
