// Package apply carries a Plan (package plans) out, turning it into
// generated files: the Engine applies each change, reports progress as
// Events and returns a Result.
//
// The engine writes an intent before each paid request, records the
// generation id the moment the service answers, polls within the shared
// request budget, downloads the outputs atomically and records them, each
// step in its own state transaction, so that an apply killed at any moment
// can be resumed without paying twice. Before its first paid request it
// checks that the service can be reached and accepts the token
// (preflight.go); a later refusal of the token stops it as an interrupt
// would, reported once as Result.Refused.
//
// What was paid for comes back at no cost: before a change removes or
// overwrites output files the engine keeps them in the content-addressed
// cache (package cache), and a Restore takes its files from the cache or
// downloads them again by creation id, checked against their recorded
// sha256 (restore.go). A job an interrupted apply submitted, for a request
// no longer declared, is followed to its end and kept in the history.
//
// Two commands take the engine's steps without a plan: Import adopts a
// creation made elsewhere, downloading its outputs as apply does, and
// MoveRecord moves a record and its files as apply moves a renamed
// instance's (genform state mv). Every change to the disk is confined to
// the working directory (files.go), and every change to the state goes
// through statefile's named operations (RecordIntent, ClearIntent, Record,
// Protect, Forget, Move).
//
// What the package does not do: it does not decide what to change (the
// planner, package reconcile, does; the engine does not import it), it
// does not define what a plan is (package plans does), and it prints
// nothing: it reports progress as Events and returns results for the
// command line (internal/command) to render.
package apply
