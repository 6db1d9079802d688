// Package harness is what the end-to-end tests share: the root package's
// testscript scripts (testdata/script) and the Go tests of internal/e2e. It
// owns running the real binary (Main makes a test binary answer to the name
// genform, as testscript.Main does, and to peak-rss, a launcher that
// measures a child's peak memory), checking a state file the way a
// suspicious user would (ReadCheckedState, CheckOutput, SHA256), and
// RaceEnabled, which says whether the binary under test carries the race
// detector.
//
// It holds no test and no assertion of its own: what a test checks stays in
// the test. It is not imported by genform itself, only by tests.
package harness
