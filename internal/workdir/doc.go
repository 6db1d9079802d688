// Package workdir is what genform checks of the working directory before it
// trusts a file there or changes anything: whether an output file on disk
// is still the one its record describes (CheckFile), whether a path stays
// inside the directory once symbolic links are followed (CheckInside), and
// where a configuration keeps its cache (CacheOf).
//
// Both the planner (package reconcile) and the apply engine (package
// reconcile/apply) read the disk through it, and the commands check the
// state file's directory with it; it sits below all of them so that
// neither has to import the other for a file check.
//
// What the package does not do: it changes nothing on disk (the engine
// removes, moves and downloads files, each through os.Root), it does not
// decide what a changed or missing file means for a plan (the planner
// does), and it does not know what a file should hold beyond the size,
// modification time and sha256 its record gives.
package workdir
