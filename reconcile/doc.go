// Package reconcile is genform's planner: it turns a declaration and a
// state into a Plan (package plans).
//
// Planning (MakePlan, MakeDestroyPlan) is pure: it reads the configuration,
// a snapshot of the state and the output files on disk, and decides for
// every resource instance one Action with the Reason for it. It never
// talks to the service, so a plan needs no token and runs offline. The
// decision for one instance is the pure function decide (decide.go), given
// the facts the planner gathered; the decision is made from fingerprints,
// state records and files alone, and a Reason, a code with the fields it
// names, is for explaining it.
//
// What was paid for comes back at no cost: a declared request the state's
// history holds, in a generation no instance holds, is planned as Restore
// rather than generated, and the plan says whether the local cache still
// holds its files. Planning reads the history only where it would
// otherwise generate.
//
// The package also evaluates the configuration against what the state
// records, for the commands that read the state without planning (output,
// import, state mv): StateScope.
//
// What the package does not do: it does not carry a plan out (package
// reconcile/apply does, and imports none of the planner), it does not
// define what a plan is (package plans does), and it changes nothing, on
// disk or in the state. It writes no words and prints nothing: the
// command line (internal/command) owns the public JSON plan, the saved
// plan file and every word a person reads of a plan.
package reconcile
