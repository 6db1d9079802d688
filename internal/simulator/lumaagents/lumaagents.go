package lumaagents

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/genform/genform/internal/simulator/simkit"
)

// APIVersion is the X-API-Version every answer carries (docs.agents.
// lumalabs.ai, Rate limits and headers: "The API version that processed
// this request").
const APIVersion = "2026-04-01"

// Defaults of the simulator, Luma's where it documents them.
var Defaults = simkit.Defaults{
	// The concurrent-jobs limit depends on the plan and is shown only in
	// Luma's dashboard: the simulator's choice is 10.
	MaxConcurrent: 10,
	// Luma's RPM limit counts creates only (POST /v1/generations), while
	// Options.RPM counts every request: none unless Options.RPM sets one.
	RPM: -1,
	// "Presigned URL (1hr expiry)" (GenerationOutput.url).
	URLTTL: time.Hour,
}

// The states of a generation, and the one Luma does not document that
// "[weird-status]" generations report.
const (
	stateQueued     = "queued"
	stateProcessing = "processing"
	stateCompleted  = "completed"
	stateFailed     = "failed"
	stateOdd        = "running"
)

// The failure codes of the simulated failures (GenerationFailureCode),
// and the simulator's words for them.
const (
	codeFailed      = "generation_failed"
	codeModerated   = "content_moderated"
	reasonFailed    = "Internal model error during generation"
	reasonModerated = "The prompt or an input image violated the content guidelines"
)

const maxBodyBytes = 64 << 20

var states = simkit.Statuses{
	Queued: stateQueued, Running: stateProcessing, Odd: stateOdd,
	Succeeded: stateCompleted, Failed: stateFailed,
	StartShare: 0.1,
}

// Server is the simulated Agents API. It is an http.Handler; its methods
// are safe for concurrent use.
type Server struct {
	*simkit.Server
}

// New returns a Server configured by opts, loading the generations saved
// in opts.DataDir when it is set.
func New(opts simkit.Options) (*Server, error) {
	frame, err := simkit.NewServer(opts, Defaults, "Bearer", refuse, states.Name)
	if err != nil {
		return nil, err
	}
	s := &Server{Server: frame}
	s.Mux.HandleFunc("POST /generations", s.API(true, s.create))
	s.Mux.HandleFunc("GET /generations/{id}", s.API(false, s.get))
	s.Mux.HandleFunc("GET /files/{id}/{file}", s.serveFile)
	s.Mux.HandleFunc("/", s.API(false, func(w http.ResponseWriter, r *http.Request, _ string) {
		detail(w, http.StatusNotFound, "Not Found: "+r.Method+" "+r.URL.Path, 0)
	}))
	return s, nil
}

// ServeHTTP answers as the route table says, every answer with its
// X-API-Version.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-API-Version", APIVersion)
	s.Server.ServeHTTP(w, r)
}

func refuse(w http.ResponseWriter, status int, msg string, retryAfter int) {
	if status == http.StatusUnauthorized {
		msg = "Invalid or missing API key (" + msg + ")"
	}
	detail(w, status, msg, retryAfter)
}

// detail answers Luma's error object, {"detail": message} ("branch on
// the status code, then read detail for specifics", Error handling).
func detail(w http.ResponseWriter, status int, msg string, retryAfter int) {
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	simkit.WriteJSON(w, status, map[string]any{"detail": msg})
}

// generation is the generation object of run at now.
func (s *Server) generation(r *http.Request, run simkit.Run, now time.Time) map[string]any {
	st, p, _ := run.StageAt(now)
	state := states.Name(&run, st, p)
	req, _ := run.Request.(*request)
	if req == nil {
		req = readRequest(run.Body)
	}
	g := map[string]any{
		"id": run.ID, "created_at": run.CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z"),
		"model": run.Model, "state": state, "type": req.kind(),
		"failure_code": nil, "failure_reason": nil,
	}
	switch {
	case state == stateCompleted:
		base := simkit.BaseURL(r) + "/files/" + run.ID + "/0"
		if run.Video() {
			g["output"] = []any{map[string]any{"type": "video", "url": base + ".gif"}}
		} else {
			g["output"] = []any{map[string]any{"type": "image", "url": base + ".png"}}
		}
	case state == stateFailed && run.End == simkit.Refuse:
		g["failure_code"], g["failure_reason"] = codeModerated, reasonModerated
	case state == stateFailed:
		g["failure_code"], g["failure_reason"] = codeFailed, reasonFailed
	}
	return g
}

func (s *Server) get(w http.ResponseWriter, r *http.Request, owner string) {
	run, ok := s.Core.Get(r.PathValue("id"), owner, true)
	if !ok {
		detail(w, http.StatusNotFound, "Generation not found", 0)
		return
	}
	simkit.WriteJSON(w, http.StatusOK, s.generation(r, run, s.Core.Now()))
}

// completed reports whether id is a completed generation of owner, and
// whether it is a video (read without counting a request of it).
func (s *Server) completed(id, owner string) (done, video bool) {
	now := s.Core.Now()
	for _, run := range s.Core.List(owner) {
		if run.ID == id {
			st, p, _ := run.StageAt(now)
			return states.Name(&run, st, p) == stateCompleted, run.Video()
		}
	}
	return false, false
}

func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	name, _, _ := strings.Cut(r.PathValue("file"), ".")
	i, err := strconv.Atoi(name)
	if err != nil {
		detail(w, http.StatusNotFound, "no such file: "+r.URL.Path, 0)
		return
	}
	s.Core.ServeFile(w, r, r.PathValue("id"), i, func(w http.ResponseWriter, msg string) {
		detail(w, http.StatusNotFound, msg, 0)
	})
}
