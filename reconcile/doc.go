// Package reconcile turns a declaration and a state into a Plan, and a Plan
// into generated files.
//
// Planning (MakePlan) is pure: it reads the configuration, a snapshot of the
// state and the output files on disk, and decides for every resource instance
// one Action with the Reason for it. It never talks to the service, so a plan
// needs no token and runs offline. The decision for one instance is the pure
// function decide (decide.go), given the facts the planner gathered; the
// decision is made from fingerprints, state records and files alone, and a
// Reason, a code with the fields it names, is for explaining it.
//
// The Plan is package plans: a model, not a document, with no words and no
// JSON tags. The cli package owns the public JSON plan, the saved plan file
// and every word a person reads of a plan.
//
// Applying (Engine) carries a Plan out: it writes an intent before each paid
// request, records the generation id the moment the service answers, polls
// within the shared request budget, downloads the outputs atomically and
// records them, each step in its own state transaction, so that an apply
// killed at any moment can be resumed without paying twice. Before its first
// paid request it checks that the service can be reached and accepts the
// token (preflight.go); a later refusal of the token stops it as an
// interrupt would, reported once as Result.Refused.
//
// What was paid for comes back at no cost: before a change removes or
// overwrites output files it keeps them in the content-addressed cache
// (package cache), and a declared request the state's history holds, in
// a generation no instance holds, is planned as Restore rather than
// generated; apply takes its files from the cache or downloads them again
// by creation id, checked against their recorded sha256 (restore.go).
// Planning reads the history only where it would otherwise generate.
//
// Every change to the state goes through statefile's named operations
// (RecordIntent, ClearIntent, Record, Protect, Forget, Move).
//
// The package does not print anything: it reports progress as Events and
// returns results for the cli package to render.
package reconcile
