package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// Once the live heap passes largeHeap, the collector's target goes back to
// Go's default; below it, it stays at gcPercent.
func TestWatchHeapRaisesTheTarget(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(gcPercent))
	watchHeap()
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	if got := debug.SetGCPercent(gcPercent); got != gcPercent {
		t.Fatalf("target %d with a small heap, want %d", got, gcPercent)
	}
	live := make([][]byte, 0, 160)
	for i := 0; i < 160; i++ {
		live = append(live, make([]byte, 1<<20))
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
		if got := debug.SetGCPercent(-1); got == 100 {
			break
		} else {
			debug.SetGCPercent(got)
		}
		if time.Now().After(deadline) {
			t.Fatalf("target still not 100 with %d MiB live", len(live))
		}
	}
	runtime.KeepAlive(live)
}
