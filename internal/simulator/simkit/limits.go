package simkit

import (
	"math"
	"slices"
	"sync"
	"time"
)

// RateWindow is the window a requests-per-minute limit counts over.
const RateWindow = time.Minute

// Limiter admits at most a number of requests per key in any sliding
// RateWindow. Refused requests do not count, so a client that waits the
// Retry-After it is told gets through. It is safe for concurrent use.
type Limiter struct {
	perMinute int // negative: no limit
	mu        sync.Mutex
	windows   map[string][]time.Time // per key hash: admitted requests, oldest first
}

// NewLimiter admits perMinute requests per key a minute; a negative
// perMinute admits everything.
func NewLimiter(perMinute int) *Limiter {
	return &Limiter{perMinute: perMinute, windows: map[string][]time.Time{}}
}

// Admit counts a request of owner at now, or refuses it and says in how
// many whole seconds (at least 1) the oldest request leaves the window.
func (l *Limiter) Admit(owner string, now time.Time) (retryAfter int, ok bool) {
	if l.perMinute < 0 {
		return 0, true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	win := l.windows[owner]
	cut := now.Add(-RateWindow)
	i := 0
	for i < len(win) && !win[i].After(cut) {
		i++
	}
	win = win[i:]
	if len(win) >= l.perMinute {
		l.windows[owner] = win
		return CeilSeconds(win[0].Add(RateWindow).Sub(now)), false
	}
	l.windows[owner] = append(win, now)
	return 0, true
}

// CeilSeconds is d in whole seconds, rounded up, at least 1: a
// Retry-After.
func CeilSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

// Queue schedules jobs behind a concurrency limit: each key has that many
// slots. Start queues a job past the limit (fal and Replicate hold it
// until a slot frees up): it starts on the slot that frees up first, in
// the order the jobs came. Take refuses it instead (the reference
// service answers 429). A job's start is fixed when it is made, so its
// status stays a function of the clock. It is safe for concurrent use.
type Queue struct {
	slots int // negative: no limit
	mu    sync.Mutex
	free  map[string][]time.Time // per key hash: when each busy slot frees up
}

// NewQueue gives each key slots slots; a negative slots never queues.
func NewQueue(slots int) *Queue {
	return &Queue{slots: slots, free: map[string][]time.Time{}}
}

// Start returns when a job of owner made at now, taking latency once it
// starts, starts: now when a slot is free, or when the first one frees up.
func (q *Queue) Start(owner string, now time.Time, latency time.Duration) time.Time {
	if q.slots < 0 {
		return now
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	busy := slices.DeleteFunc(q.free[owner], func(t time.Time) bool { return !t.After(now) })
	start := now
	if len(busy) >= q.slots {
		slices.SortFunc(busy, time.Time.Compare)
		start = busy[0]
		busy = busy[1:]
	}
	q.free[owner] = append(busy, start.Add(latency))
	return start
}

// Holds records that a job loaded from disk holds a slot of owner until
// finish.
func (q *Queue) Holds(owner string, finish time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.free[owner] = append(q.free[owner], finish)
}

// Take starts a job of owner made at now, taking latency, at once when
// one of owner's slots is free. When none is, it takes nothing and says
// in how many whole seconds (at least 1) the first frees up.
func (q *Queue) Take(owner string, now time.Time, latency time.Duration) (retryAfter int, ok bool) {
	if q.slots < 0 {
		return 0, true
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	busy := slices.DeleteFunc(q.free[owner], func(t time.Time) bool { return !t.After(now) })
	q.free[owner] = busy
	if len(busy) >= q.slots {
		return CeilSeconds(slices.MinFunc(busy, time.Time.Compare).Sub(now)), false
	}
	q.free[owner] = append(busy, now.Add(latency))
	return 0, true
}

// Release frees the slot of a job of owner that would have finished at
// finish: a create that was not made after all.
func (q *Queue) Release(owner string, finish time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if i := slices.IndexFunc(q.free[owner], finish.Equal); i >= 0 {
		q.free[owner] = slices.Delete(q.free[owner], i, i+1)
	}
}
