package provider

import "sync"

// Held keeps the answer a job's status read when it said the job was
// done, for the Result the engine asks for right after: on a provider
// whose job answer holds the outputs (Replicate's prediction, Luma's
// generation) that answer is the result, and reading it twice spends the
// provider's request budget for nothing. Result takes it once; a Result
// that finds none (a link that expired, a process that restarted) reads
// the job again. The zero Held is ready to use, and safe for concurrent
// use.
type Held[T any] struct {
	mu sync.Mutex
	m  map[string]heldAnswer[T]
}

type heldAnswer[T any] struct {
	v   *T
	raw []byte
}

// maxHeld bounds the answers a Held keeps; past it the newest are not
// kept (their Result reads them again).
const maxHeld = 1024

// Keep holds v, decoded from raw, as job id's answer.
func (h *Held[T]) Keep(id string, v *T, raw []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[string]heldAnswer[T]{}
	}
	if len(h.m) < maxHeld {
		h.m[id] = heldAnswer[T]{v, raw}
	}
}

// Take returns job id's held answer and forgets it; ok is false when
// none is held.
func (h *Held[T]) Take(id string) (v *T, raw []byte, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	a, ok := h.m[id]
	delete(h.m, id)
	return a.v, a.raw, ok
}
