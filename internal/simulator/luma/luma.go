package luma

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/genform/genform/internal/simulator/simkit"
)

// Defaults of the simulator, Luma's where it documents them.
var Defaults = simkit.Defaults{
	// Ray runs 10 generations at once on the Build tier (Photon 40):
	// past it, generations wait "queued". The simulator holds one limit
	// for both families, the tighter.
	MaxConcurrent: 10,
	// Luma's documented rates (20 creates a minute for Ray, 80 for
	// Photon) count creates only, while Options.RPM counts every
	// request: none unless Options.RPM sets one.
	RPM: -1,
	// The reference names no lifetime for asset URLs: the simulator's
	// choice is a day.
	URLTTL: 24 * time.Hour,
}

// The states of a generation, and the one Luma does not document that
// "[weird-status]" generations report.
const (
	stateQueued    = "queued"
	stateDreaming  = "dreaming"
	stateCompleted = "completed"
	stateFailed    = "failed"
	stateOdd       = "processing"
)

// The failure reasons of the simulated failures, as Luma's error
// reference spells them.
const (
	reasonFailed    = "Prompt processing failed"
	reasonModerated = "Advanced prompt moderation failed"
)

const (
	maxBodyBytes = 64 << 20
	// defaultLimit and maxLimit bound a page of GET /generations.
	defaultLimit = 100
	maxLimit     = 1000
	// creditBalance is what GET /credits answers, in US cents.
	creditBalance = 100000.0
)

// Server is the simulated Dream Machine API. It is an http.Handler; its
// methods are safe for concurrent use.
type Server struct {
	*simkit.Server

	mu      sync.Mutex
	deleted map[string]bool
}

// New returns a Server configured by opts, loading the generations saved
// in opts.DataDir when it is set.
func New(opts simkit.Options) (*Server, error) {
	frame, err := simkit.NewServer(opts, Defaults, "Bearer", refuse, states.Name)
	if err != nil {
		return nil, err
	}
	s := &Server{Server: frame, deleted: map[string]bool{}}
	s.Mux.HandleFunc("POST /generations/image", s.API(true, s.createImage))
	s.Mux.HandleFunc("POST /generations/video", s.API(true, s.createVideo))
	s.Mux.HandleFunc("GET /generations/{id}", s.API(false, s.get))
	s.Mux.HandleFunc("DELETE /generations/{id}", s.API(false, s.delete))
	s.Mux.HandleFunc("GET /generations", s.API(false, s.list))
	s.Mux.HandleFunc("GET /credits", s.API(false, func(w http.ResponseWriter, _ *http.Request, _ string) {
		simkit.WriteJSON(w, http.StatusOK, map[string]any{"credit_balance": creditBalance})
	}))
	s.Mux.HandleFunc("GET /ping", s.API(false, func(w http.ResponseWriter, _ *http.Request, _ string) {
		simkit.WriteJSON(w, http.StatusOK, map[string]any{"message": "pong"})
	}))
	s.Mux.HandleFunc("GET /files/{id}/{file}", s.serveFile)
	s.Mux.HandleFunc("/", s.API(false, func(w http.ResponseWriter, r *http.Request, _ string) {
		detail(w, http.StatusNotFound, "Not Found: "+r.Method+" "+r.URL.Path, 0)
	}))
	return s, nil
}

// states are Luma's: a generation still reports "queued" (waiting for a
// worker) for the first tenth of its run before "dreaming", so a create
// is always answered "queued"; one deleted before it ended has failed.
var states = simkit.Statuses{
	Queued: stateQueued, Running: stateDreaming, Odd: stateOdd,
	Succeeded: stateCompleted, Failed: stateFailed,
	StartShare: 0.1,
}

func refuse(w http.ResponseWriter, status int, msg string, retryAfter int) {
	if status == http.StatusUnauthorized {
		msg = "Invalid API key is provided (" + msg + ")"
	}
	detail(w, status, msg, retryAfter)
}

// detail answers Luma's error object, {"detail": message}.
func detail(w http.ResponseWriter, status int, msg string, retryAfter int) {
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	simkit.WriteJSON(w, status, map[string]any{"detail": msg})
}

// invalid answers a request body its schema refuses: 422 with a list of
// validation errors, each with its location and message.
func invalid(w http.ResponseWriter, loc []any, msg string) {
	simkit.WriteJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": []any{
		map[string]any{"loc": append([]any{"body"}, loc...), "msg": msg, "type": "value_error"},
	}})
}

// generation is the generation object of run at now.
func (s *Server) generation(r *http.Request, run simkit.Run, now time.Time) map[string]any {
	st, p, _ := run.StageAt(now)
	state := states.Name(&run, st, p)
	kind := "image"
	if run.Video() {
		kind = "video"
	}
	var request map[string]any
	if json.Unmarshal(run.Body, &request) != nil || request == nil {
		request = map[string]any{}
	}
	if _, ok := request["generation_type"]; !ok {
		request["generation_type"] = kind
	}
	g := map[string]any{
		"id": run.ID, "generation_type": kind, "state": state, "failure_reason": nil,
		"created_at": run.CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z"),
		"assets":     nil, "model": run.Model, "request": request,
	}
	switch {
	case state == stateCompleted:
		base := simkit.BaseURL(r) + "/files/" + run.ID + "/0"
		if run.Video() {
			g["assets"] = map[string]any{"video": base + ".gif"}
		} else {
			g["assets"] = map[string]any{"image": base + ".png"}
		}
	case state == stateFailed && run.End == simkit.Refuse:
		g["failure_reason"] = reasonModerated
	case state == stateFailed:
		g["failure_reason"] = reasonFailed
	}
	return g
}

// find returns owner's generation id, unless it was deleted.
func (s *Server) find(id, owner string) (simkit.Run, bool) {
	s.mu.Lock()
	gone := s.deleted[id]
	s.mu.Unlock()
	if gone {
		return simkit.Run{}, false
	}
	return s.Core.Get(id, owner, true)
}

func (s *Server) get(w http.ResponseWriter, r *http.Request, owner string) {
	run, ok := s.find(r.PathValue("id"), owner)
	if !ok {
		detail(w, http.StatusNotFound, "Generation not found", 0)
		return
	}
	simkit.WriteJSON(w, http.StatusOK, s.generation(r, run, s.Core.Now()))
}

// delete removes owner's generation: from then on it is not found, not
// listed, and its files answer 404. Deletions are kept in memory only.
func (s *Server) delete(w http.ResponseWriter, r *http.Request, owner string) {
	id := r.PathValue("id")
	if _, ok := s.find(id, owner); !ok {
		detail(w, http.StatusNotFound, "Generation not found", 0)
		return
	}
	s.mu.Lock()
	s.deleted[id] = true
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// list answers a page of owner's generations, newest first: limit (1 to
// maxLimit, default 100) from offset.
func (s *Server) list(w http.ResponseWriter, r *http.Request, owner string) {
	q := r.URL.Query()
	limit, offset := defaultLimit, 0
	for _, p := range []struct {
		name     string
		v        *int
		min, max int
	}{{"limit", &limit, 1, maxLimit}, {"offset", &offset, 0, math.MaxInt}} {
		raw := q.Get(p.name)
		if raw == "" {
			continue
		}
		n, err := strconv.Atoi(raw)
		if err != nil || n < p.min || n > p.max {
			simkit.WriteJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": []any{map[string]any{
				"loc": []any{"query", p.name}, "msg": fmt.Sprintf("%s must be a whole number from %d to %d", p.name, p.min, p.max), "type": "value_error",
			}}})
			return
		}
		*p.v = n
	}
	var all []simkit.Run
	s.mu.Lock()
	for _, run := range s.Core.List(owner) {
		if !s.deleted[run.ID] {
			all = append(all, run)
		}
	}
	s.mu.Unlock()
	now := s.Core.Now()
	page := []map[string]any{}
	for i := offset; i < len(all) && i < offset+limit; i++ {
		page = append(page, s.generation(r, all[i], now))
	}
	simkit.WriteJSON(w, http.StatusOK, map[string]any{
		"generations": page, "count": len(page), "limit": limit, "offset": offset,
		"has_more": offset+len(page) < len(all),
	})
}

func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	name, _, _ := strings.Cut(r.PathValue("file"), ".")
	i, err := strconv.Atoi(name)
	s.mu.Lock()
	gone := s.deleted[id]
	s.mu.Unlock()
	if err != nil || gone {
		detail(w, http.StatusNotFound, "no such file: "+r.URL.Path, 0)
		return
	}
	s.Core.ServeFile(w, r, id, i, func(w http.ResponseWriter, msg string) {
		detail(w, http.StatusNotFound, msg, 0)
	})
}
