package openai

import (
	"fmt"
	"sync"

	"github.com/genform/genform/internal/provider"
)

// handedLimit bounds the bytes of the images kept after Result handed
// them over (a second Result of the same job gets them again): past it
// the oldest are released. Images not yet handed over are never
// released: they exist nowhere else.
const handedLimit = 256 << 20

// held is what the process holds of a job: its status, and the result
// its answer carried (nil for a refusal, or once released).
type held struct {
	status provider.Status
	res    *provider.Result
	handed bool
}

// holder keeps the jobs this process made. It is safe for concurrent use.
type holder struct {
	limit int64

	mu     sync.Mutex
	jobs   map[string]*held
	handed []string // ids whose images were handed over and are kept, oldest first
	bytes  int64    // the bytes of those images
}

func newHolder(limit int64) *holder {
	return &holder{limit: limit, jobs: map[string]*held{}}
}

// add holds h under id, or under id with a suffix when id is taken (two
// answers alike to the byte), and returns the id it holds it under.
func (s *holder) add(id string, h *held) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	unique := id
	for n := 2; s.jobs[unique] != nil; n++ {
		unique = fmt.Sprintf("%s-%d", id, n)
	}
	s.jobs[unique] = h
	return unique
}

// get returns a copy of the job id holds.
func (s *holder) get(id string) (held, bool) { return s.copyOf(id, false) }

// handOut returns a copy of job id, counting its images as handed over:
// from then on they may be released, oldest first, once the images
// handed over pass the limit.
func (s *holder) handOut(id string) (held, bool) { return s.copyOf(id, true) }

// copyOf returns a copy of job id, its images counted as handed over
// when hand is true.
func (s *holder) copyOf(id string, hand bool) (held, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.jobs[id]
	if !ok {
		return held{}, false
	}
	out := *h
	if hand && h.res != nil && !h.handed {
		h.handed = true
		s.handed = append(s.handed, id)
		s.bytes += size(h.res)
		for s.bytes > s.limit && len(s.handed) > 1 {
			old := s.jobs[s.handed[0]]
			s.bytes -= size(old.res)
			old.res = nil
			s.handed = s.handed[1:]
		}
	}
	return out, true
}

// size is the bytes of res's images.
func size(res *provider.Result) int64 {
	var n int64
	for _, o := range res.Outputs {
		n += int64(len(o.Data))
	}
	return n
}
