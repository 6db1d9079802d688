// Package reconcile turns a declaration and a state into a Plan, and a Plan
// into generated files.
//
// Planning (MakePlan) is pure: it reads the configuration, a snapshot of the
// state and the output files on disk, and decides for every resource instance
// one Action with the reason for it. It never talks to the service, so a plan
// needs no token and runs offline. Reasons are for explaining; the decision
// is made from fingerprints, state records and files alone.
//
// Applying (Engine) carries a Plan out: it writes an intent before each paid
// request, records the generation id the moment the service answers, polls
// within the shared request budget, downloads the outputs atomically and
// records them, each step in its own state transaction, so that an apply
// killed at any moment can be resumed without paying twice.
//
// The package does not print anything: it reports progress as Events and
// returns results for the cli package to render.
package reconcile
