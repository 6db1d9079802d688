package apply

import (
	"context"
	"testing"
	"time"

	"github.com/genform/genform/internal/simulator/simkit/simtest"
)

func testWindow(start, ceiling int) (*window, *simtest.Clock) {
	w := newWindow(start, ceiling)
	c := simtest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	w.now = c.Now
	return w, c
}

// Clean answers widen the window one step per window's worth, from its
// start up to its ceiling and no further.
func TestWindowWidensToItsCeiling(t *testing.T) {
	w, _ := testWindow(2, 6)
	acks := 0
	for w.width < 6 {
		w.ok()
		acks++
		if acks > 100 {
			t.Fatalf("the window is %d after %d clean answers, never reaching its ceiling 6", w.width, acks)
		}
	}
	// 2+3+4+5 answers: one window's worth per step.
	if acks != 14 {
		t.Errorf("%d clean answers widened 2 to 6, want 14", acks)
	}
	for range 50 {
		w.ok()
	}
	if w.width != 6 {
		t.Errorf("the window grew past its ceiling: %d", w.width)
	}
}

// A throttle narrows the window to three quarters, once per crowding;
// the width it came at is tried again only after many clean answers.
func TestWindowNarrowsOnAThrottle(t *testing.T) {
	w, clock := testWindow(8, 40)
	w.throttled(0)
	w.throttled(0) // the same crowding: jobs in flight throttled together
	if w.width != 6 || w.narrowed != 1 {
		t.Fatalf("after a throttle at 8 the window is %d (narrowed %d times), want 6, once", w.width, w.narrowed)
	}
	clock.Advance(2 * time.Second)
	w.throttled(0)
	if w.width != 4 {
		t.Fatalf("a later throttle left the window at %d, want 4", w.width)
	}
	for range 4 {
		w.ok()
	}
	if w.width != 5 {
		t.Fatalf("a window's worth of clean answers left it at %d, want 5", w.width)
	}
	// 6 was throttled: trying it again waits for many clean answers.
	n := 0
	for w.width == 5 {
		w.ok()
		n++
	}
	if n != probeAfter*5 {
		t.Errorf("%d clean answers before the throttled width was tried again, want %d", n, probeAfter*5)
	}
	clock.Advance(2 * time.Second)
	w.throttled(0)
	if w.width != 4 {
		t.Errorf("a throttle at 6 left the window at %d, want 4", w.width)
	}
	for range 20 {
		clock.Advance(2 * time.Second)
		w.throttled(0)
	}
	if w.width != 1 {
		t.Errorf("the window is %d after many throttles, want 1 and never less", w.width)
	}
}

// The window bounds what runs at once, a Retry-After holds every new
// start until it passes, and an ended context ends the wait.
func TestWindowGatesStarts(t *testing.T) {
	w := newWindow(2, 2)
	ctx := context.Background()
	for range 2 {
		if err := w.acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := w.acquire(cctx); err == nil {
		t.Fatal("a third start passed a window of 2")
	}
	w.release()
	if err := w.acquire(ctx); err != nil {
		t.Fatalf("the room released was not given: %v", err)
	}
	w.release()
	w.release()
	w.throttled(300 * time.Millisecond)
	start := time.Now()
	if err := w.acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < 250*time.Millisecond {
		t.Errorf("a start came %s after a Retry-After of 300ms", waited)
	}
}
