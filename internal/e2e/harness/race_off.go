//go:build !race

package harness

// RaceEnabled reports whether the tests run under the race detector, and
// so the genform they run too (the test binary): its runtime makes every
// process far larger, so memory bounds of the child processes hold only
// without it.
const RaceEnabled = false
