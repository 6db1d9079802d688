// Package plans is what a plan is: the changes that would make the files
// and the state match the configuration (Plan, Change), the Action each
// change takes and the Reason for it, the attributes it changes
// (AttrChange), the local work of an update (LocalChange), and what
// applying it would cost (Estimate).
//
// The planner (package reconcile) makes plans, the apply engine (package
// reconcile/apply) carries them out and the views (internal/command)
// render them; this package is what the three share, so the planner and
// the engine both import it and it imports neither. Beside the model it
// keeps the few readings of a declared instance and of its record that
// making and carrying out a plan must agree on: how many files one
// generation yields (MediaCount, and whether the service's default gives
// that count: MediaDefault), how long a video is (VideoSeconds), the
// statuses a record holds (StatusSucceed, StatusFailed) and the value a
// record gives the instances that refer to it (RecordValue).
//
// An Action is a code, and a Reason a code with the fields that code
// names. A plan is decided from fingerprints, state records and files;
// its reasons are for explaining it, never for deciding one. The names
// String returns are the stable ones the JSON documents spell.
//
// What the package does not do: it decides nothing (the planner does), it
// does no I/O and talks to no service (the engine does), and it holds no
// words, symbols or colours for people (the views do). It has no JSON
// tags and is not a file format: the public JSON plan and the saved plan
// file are the views' encodings of it.
package plans
