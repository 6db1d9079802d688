package apply

import (
	"testing"
	"time"
)

func TestNextPoll(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name              string
		prev, elapsed     time.Duration
		progress          float64
		interval, wantMin time.Duration
		wantMax           time.Duration
	}{
		{"half way aims at the end", 1000 * ms, 1000 * ms, 0.5, 5 * time.Second, 1000 * ms, 1100 * ms},
		{"no progress doubles", 500 * ms, 500 * ms, 0, 5 * time.Second, 1000 * ms, 1000 * ms},
		{"capped by the interval", 4 * time.Second, 10 * time.Second, 0.1, 5 * time.Second, 5 * time.Second, 5 * time.Second},
		{"post-processing polls soon", 1000 * ms, 1200 * ms, 1, 5 * time.Second, 50 * ms, 150 * ms},
	} {
		got := nextPoll(tc.prev, tc.elapsed, tc.progress, tc.interval)
		if got < tc.wantMin || got > tc.wantMax {
			t.Errorf("%s: %v, want %v..%v", tc.name, got, tc.wantMin, tc.wantMax)
		}
	}
}
