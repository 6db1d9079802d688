package simkit

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	mrand "math/rand/v2"
	"sync"
)

// Draw is one seeded source of fault draws: the same seed and the same
// sequence of requests see the same faults. It is safe for concurrent
// use.
type Draw struct {
	mu  sync.Mutex
	src *mrand.Rand
}

// NewDraw is the source of stream (a constant per kind of fault, so that
// drawing one kind never shifts another) seeded with seed.
func NewDraw(seed int64, stream uint64) *Draw {
	return &Draw{src: mrand.New(mrand.NewPCG(uint64(seed), stream))}
}

// Happens reports whether a fault of probability rate happens now. A rate
// of zero draws nothing, so a fault left off never shifts the sequence.
func (d *Draw) Happens(rate float64) bool {
	if rate <= 0 {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.src.Float64() < rate
}

// The streams of the faults every simulator draws.
const (
	StreamError    = 0x5e4e_e440
	StreamTruncate = 0x7a0c_a7e0
	StreamLose     = 0x105e_4a7e
)

// FailsAtRandom decides a fail rate for the n-th accepted create of the
// request fingerprint fp. It hashes rather than draws, so the outcome of
// each request is the same whatever order concurrent clients' requests
// arrive in, and a resubmission gets a fresh draw.
func FailsAtRandom(seed int64, rate float64, fp string, n int) bool {
	if rate <= 0 {
		return false
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%d\x00%s\x00%d", seed, fp, n))
	u := float64(binary.BigEndian.Uint64(sum[:8])>>11) / (1 << 53)
	return u < rate
}
