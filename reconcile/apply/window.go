package apply

import (
	"context"
	"sync"
	"time"
)

// window is how many generations of one provider an apply runs at once,
// and it moves as TCP's congestion window does: narrowed when the
// provider throttles (a 429, or a job it reports held back for the
// account's limit), widened again one step after a window's worth of
// clean answers, never below one nor above the ceiling. A width that
// was throttled is tried again only after many clean answers, so a
// provider at its account's limit sees a throttle now and then, not a
// storm. A Retry-After holds every new generation of the provider until
// it passes.
//
// The window only gates what is started: a generation already running
// keeps running when it narrows, so no job is lost or paid twice.
type window struct {
	mu      sync.Mutex
	changed *sync.Cond
	// width is the current limit; ceiling the most it may reach.
	width, ceiling int
	// inFlight are the generations started and not yet released.
	inFlight int
	// clean counts clean answers since the width last moved.
	clean int
	// throttledAt is the width at the last throttle (0: none yet); the
	// window grows to it again only after probeAfter clean answers.
	throttledAt int
	// lastCut is when the width was last narrowed: throttles of the
	// jobs already in flight then tell of the same crowding, and narrow
	// it once.
	lastCut time.Time
	// pausedUntil holds new generations for a Retry-After.
	pausedUntil time.Time
	// narrowed and widened count the moves.
	narrowed, widened int
	now               func() time.Time
}

// probeAfter is how many windows of clean answers pass before the width
// a throttle came at is tried again.
const probeAfter = 8

func newWindow(start, ceiling int) *window {
	ceiling = max(ceiling, 1)
	w := &window{width: min(max(start, 1), ceiling), ceiling: ceiling, now: time.Now}
	w.changed = sync.NewCond(&w.mu)
	return w
}

// acquire waits for room in the window (and for a Retry-After to pass),
// or for ctx to end.
func (w *window) acquire(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		w.mu.Lock()
		w.changed.Broadcast()
		w.mu.Unlock()
	})
	defer stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if wait := w.pausedUntil.Sub(w.now()); wait > 0 {
			// Sleep out the pause without holding the lock; the loop
			// checks everything again after it.
			w.mu.Unlock()
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
			}
			t.Stop()
			w.mu.Lock()
			continue
		}
		if w.inFlight < w.width {
			w.inFlight++
			return nil
		}
		w.changed.Wait()
	}
}

// release frees the room of one generation.
func (w *window) release() {
	w.mu.Lock()
	w.inFlight--
	w.mu.Unlock()
	w.changed.Broadcast()
}

// ok notes a clean answer (a create accepted, a job finished without
// being held back), which widens the window after a window's worth.
func (w *window) ok() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.clean++
	if w.width >= w.ceiling || w.clean < w.width {
		return
	}
	if w.throttledAt > 0 && w.width+1 >= w.throttledAt && w.clean < probeAfter*w.width {
		return
	}
	w.width++
	w.widened++
	w.clean = 0
	if w.width > w.throttledAt {
		// Past the width that was throttled, with no throttle: the
		// account's limit is higher now, or the crowding was passing.
		w.throttledAt = 0
	}
	w.changed.Broadcast()
}

// throttled notes that the provider throttled a request or held a job
// back, asking to wait retryAfter (0 when it did not say): the window is
// narrowed to three quarters, once per crowding, and new generations wait
// out the Retry-After.
func (w *window) throttled(retryAfter time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	if retryAfter > 0 && now.Add(retryAfter).After(w.pausedUntil) {
		w.pausedUntil = now.Add(retryAfter)
	}
	w.clean = 0
	if now.Sub(w.lastCut) < time.Second {
		return
	}
	w.lastCut = now
	w.throttledAt = w.width
	w.width = max(1, w.width*3/4)
	w.narrowed++
}
