//go:build !race

package main

// raceEnabled reports whether the tests run under the race detector, whose
// runtime makes every process far larger: memory bounds of the child
// processes hold only without it.
const raceEnabled = false
