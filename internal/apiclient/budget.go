package apiclient

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// budgetWindow is the window requests_per_minute is counted over.
const budgetWindow = time.Minute

// budgetSlack is kept beyond the window between a request and the one
// len(sent) sends later: the service counts a request when it arrives,
// and the first may arrive later after its send than the last does, so
// requests sent exactly a window apart can land within one window of
// the service's count and be answered 429.
const budgetSlack = time.Second

// maxRequestsPerMinute bounds the budget so its window log stays small
// (8 bytes a request); beyond it 0, unlimited, is what the user means.
const maxRequestsPerMinute = 1_000_000

// budget is the one request budget every request of a Client draws from. See
// the package documentation for why it is a token bucket plus a window log.
type budget struct {
	now   func() time.Time
	sleep func(context.Context, time.Duration) error

	mu      sync.Mutex
	limiter *rate.Limiter
	start   time.Time
	// sent is a ring of the scheduled send times of the last len(sent)
	// requests, as offsets from start; filled counts the slots in use.
	sent   []time.Duration
	next   int
	filled int
}

func newBudget(perMinute int, now func() time.Time, sleep func(context.Context, time.Duration) error) *budget {
	if perMinute <= 0 {
		return nil
	}
	// A burst of one second's worth lets a handful of requests leave at once
	// (a poll round, an output's downloads) without spiking the service.
	burst := max(1, (perMinute+59)/60)
	return &budget{
		now:     now,
		sleep:   sleep,
		limiter: rate.NewLimiter(rate.Limit(float64(perMinute)/budgetWindow.Seconds()), burst),
		start:   now(),
		sent:    make([]time.Duration, perMinute),
	}
}

// take waits until one more request may be sent. A nil budget is unlimited.
// The slot is booked before waiting, so concurrent callers are served in
// order; a caller whose context ends while waiting gives up its place but
// its slot stays booked, which only ever makes the client slower, never
// faster than the budget.
func (b *budget) take(ctx context.Context) error {
	if b == nil {
		return ctx.Err()
	}
	b.mu.Lock()
	now := b.now()
	at := now.Add(b.limiter.ReserveN(now, 1).DelayFrom(now)).Sub(b.start)
	// The request len(sent) sends ago must have left a full window (and
	// the slack) before this one: then no window [t, t+1m) can hold more
	// than len(sent), even as the service counts arrivals.
	if b.filled == len(b.sent) {
		if earliest := b.sent[b.next] + budgetWindow + budgetSlack; at < earliest {
			at = earliest
		}
	} else {
		b.filled++
	}
	// Keep the log ordered even if the clock went backwards.
	if last := b.sent[(b.next+len(b.sent)-1)%len(b.sent)]; b.filled > 1 && at < last {
		at = last
	}
	b.sent[b.next] = at
	b.next = (b.next + 1) % len(b.sent)
	b.mu.Unlock()

	if wait := at - now.Sub(b.start); wait > 0 {
		return b.sleep(ctx, wait)
	}
	return ctx.Err()
}

// sleepContext waits for d or until ctx ends, whichever comes first.
func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
