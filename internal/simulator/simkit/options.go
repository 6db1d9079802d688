package simkit

import (
	"fmt"
	"time"
)

// Options configures a simulator. The zero value is a simulator with the
// real API's limits, jobs of its default latency, no faults, and no
// persistence; each simulator documents its defaults.
type Options struct {
	// Token, when set, is the only key accepted. When empty, any
	// non-empty key is accepted and each distinct key is a user of its
	// own. A missing key is always refused.
	Token string
	// Latency is how long a job takes from creation (or, behind a
	// concurrency limit that queues, from its start) to its final status.
	Latency time.Duration
	// FailRate is the fraction of jobs (0..1) that fail instead of
	// succeeding, on top of prompts containing "[fail]".
	FailRate float64
	// ErrorRate is the fraction of API requests (0..1) answered 500 before
	// anything is done: a create answered 500 creates no job (a client
	// cannot know that, and must take it as possibly paid for).
	ErrorRate float64
	// ReadErrorsOnly spares the job-creation requests ErrorRate's 500s,
	// for tests of a service that fails only where a client may retry.
	ReadErrorsOnly bool
	// TruncateRate is the fraction of media downloads (0..1) that announce
	// their full Content-Length and then stop half way.
	TruncateRate float64
	// LoseRate is the fraction of creates (0..1) whose job is made, and
	// counted as paid for, and whose connection is then closed without an
	// answer: the client cannot know whether anything was made.
	LoseRate float64
	// Seed makes the faults above repeatable.
	Seed int64
	// MaxConcurrent is how many unfinished jobs one key may have; what
	// happens past it is the API's (a 429, or a queue). Zero means the
	// API's default; negative means no limit.
	MaxConcurrent int
	// RPM is how many API requests one key may send in any 60 seconds;
	// past it, 429 with Retry-After. Zero means the API's default;
	// negative means no limit.
	RPM int
	// URLTTL is the lifetime of the output URLs that expire. Zero means
	// the API's.
	URLTTL time.Duration
	// DailyCap is how many jobs of one model one key may create in any 24
	// hours, on a simulator whose API caps them so (Runway's daily
	// generations); past it, a create is refused as that API refuses it.
	// Zero means the API's; negative means no cap. A simulator whose API
	// has no such cap ignores it.
	DailyCap int
	// DataDir, when set, is where jobs (and any signing key) are kept so
	// they survive a restart. Empty means memory only.
	DataDir string
	// Now is the clock; nil means time.Now. Tests pass a fake one.
	Now func() time.Time
	// Logf, when set, receives one line per request.
	Logf func(format string, args ...any)
}

// CheckRates refuses a fault rate outside 0..1.
func (o Options) CheckRates() error {
	for _, r := range []struct {
		name string
		v    float64
	}{{"FailRate", o.FailRate}, {"ErrorRate", o.ErrorRate}, {"TruncateRate", o.TruncateRate}, {"LoseRate", o.LoseRate}} {
		if !(r.v >= 0 && r.v <= 1) {
			return fmt.Errorf("simulator: %s must be a fraction from 0 to 1, got %v", r.name, r.v)
		}
	}
	return nil
}

// Clock is o.Now, or time.Now when it is nil.
func (o Options) Clock() func() time.Time {
	if o.Now == nil {
		return time.Now
	}
	return o.Now
}
