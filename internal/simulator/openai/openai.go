package openai

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/genform/genform/internal/simulator/simkit"
)

// Defaults of the simulator, OpenAI's where it documents them.
var Defaults = simkit.Defaults{
	// OpenAI documents no concurrency limit.
	MaxConcurrent: -1,
	// Its image models are limited in images and tokens a minute (5
	// images at tier 1), not in requests: none unless Options.RPM sets
	// one.
	RPM: -1,
	// The images come inline: no URL expires.
}

// QuotaMarker in a prompt makes the simulator answer as OpenAI does an
// account out of credit: 429 insufficient_quota, making nothing.
const QuotaMarker = simkit.QuotaMarker

// The error codes the simulator answers with, OpenAI's.
const (
	codeModeration    = "moderation_blocked"
	codeQuota         = "insufficient_quota"
	codeModelNotFound = "model_not_found"
	codeUnknownParam  = "unknown_parameter"
	codeInvalidKey    = "invalid_api_key"
	codeRateLimited   = "rate_limit_exceeded"
)

// The status of a job in the jobs report. The API itself has none: its
// answer is the result.
const (
	statusInProgress = "in_progress"
	statusCompleted  = "completed"
	statusFailed     = "failed"
)

// Server is the simulated Images API. It is an http.Handler; its methods
// are safe for concurrent use.
type Server struct {
	*simkit.Server
}

// New returns a Server configured by opts, loading the jobs saved in
// opts.DataDir when it is set.
func New(opts simkit.Options) (*Server, error) {
	frame, err := simkit.NewServer(opts, Defaults, "Bearer", refuse, statusName)
	if err != nil {
		return nil, err
	}
	s := &Server{Server: frame}
	s.Mux.HandleFunc("POST /v1/images/generations", s.API(true, s.generate))
	s.Mux.HandleFunc("POST /v1/images/edits", s.API(true, s.edit))
	s.Mux.HandleFunc("GET /v1/models", s.API(false, s.listModels))
	s.Mux.HandleFunc("GET /v1/models/{model}", s.API(false, s.getModel))
	s.Mux.HandleFunc("/v1/", s.API(false, func(w http.ResponseWriter, r *http.Request, _ string) {
		apiError(w, http.StatusNotFound, "Invalid URL ("+r.Method+" "+r.URL.Path+")", "invalid_request_error", "", "")
	}))
	s.Mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		apiError(w, http.StatusNotFound, "Invalid URL ("+r.Method+" "+r.URL.Path+")", "invalid_request_error", "", "")
	})
	return s, nil
}

// statusName is a job's status in the jobs report.
func statusName(r *simkit.Run, st simkit.Stage, _ float64) string {
	switch {
	case st != simkit.Finished:
		return statusInProgress
	case r.End == simkit.Succeed:
		return statusCompleted
	}
	return statusFailed
}

// refuse answers the gate's refusals in OpenAI's words: a key missing or
// wrong (never repeated), a rate limit with its wait, a server error.
func refuse(w http.ResponseWriter, status int, msg string, retryAfter int) {
	switch status {
	case http.StatusUnauthorized:
		if strings.HasPrefix(msg, "missing") {
			apiError(w, status, "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).", "invalid_request_error", "", "")
			return
		}
		apiError(w, status, "Incorrect API key provided. You can find your API key in your organization's settings.", "invalid_request_error", "", codeInvalidKey)
	case http.StatusTooManyRequests:
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
		apiError(w, status, fmt.Sprintf("Rate limit reached (%s). Please try again in %ds.", msg, retryAfter), "requests", "", codeRateLimited)
	default:
		apiError(w, status, "The server had an error while processing your request. Sorry about that! ("+msg+")", "server_error", "", "")
	}
}

// apiError answers OpenAI's error shape; an empty param or code is null.
func apiError(w http.ResponseWriter, status int, msg, typ, param, code string) {
	e := map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}
	if param != "" {
		e["param"] = param
	}
	if code != "" {
		e["code"] = code
	}
	simkit.WriteJSON(w, status, map[string]any{"error": e})
}

// invalid answers a request the reference does not allow: 400, naming
// the parameter.
func invalid(w http.ResponseWriter, param, msg string) {
	apiError(w, http.StatusBadRequest, msg, "invalid_request_error", param, "")
}

// models are the models GET /v1/models lists: the GPT image models of the
// Images API reference and the model pages, as the simulator serves them
// (those it retired included, with their shutdown_date).
var models = []string{
	"gpt-image-2", "gpt-image-2-2026-04-21",
	"gpt-image-2.5-sunburst", "gpt-image-2.5-sunburst-2026-09-08",
	"gpt-image-2.5-flare", "gpt-image-2.5-flare-2026-09-08",
	"gpt-image-2.6-sunburst", "gpt-image-2.6-flare",
	"gpt-image-1.5", "gpt-image-1.5-2025-12-16",
	"gpt-image-1-mini", "chatgpt-image-latest",
}

// retired are the days from which OpenAI no longer serves a model, by
// model, from its deprecations page (developers.openai.com/api/docs/
// deprecations, read 2026-12-07, which also says GET /v1/models gives
// each model's shutdown_date): gpt-image-1.5, its snapshot,
// gpt-image-1-mini and chatgpt-image-latest shut down on 2026-12-01;
// gpt-image-1 on 2026-10-23 (its model page). From that day (UTC, by
// the simulator's clock) the simulator answers them as any model it does
// not serve: 404 model_not_found, making nothing.
var retired = map[string]time.Time{
	"gpt-image-1":              time.Date(2026, 10, 23, 0, 0, 0, 0, time.UTC),
	"gpt-image-1.5":            time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
	"gpt-image-1.5-2025-12-16": time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
	"gpt-image-1-mini":         time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
	"chatgpt-image-latest":     time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
}

// served reports whether the simulator makes images with model by the
// clock now: a GPT image model OpenAI has not retired by then. The clock
// is read only for a model that retires (a test's stepping clock moves
// on each read).
func served(model string, now func() time.Time) bool {
	if day, ok := retired[model]; ok && !now().UTC().Before(day) {
		return false
	}
	return strings.HasPrefix(model, "gpt-image-") || strings.HasPrefix(model, "chatgpt-image-")
}

func modelObject(id string) map[string]any {
	var shutdown any
	if day, ok := retired[id]; ok {
		shutdown = day.Format(time.DateOnly)
	}
	return map[string]any{"id": id, "object": "model", "created": 1745000000, "owned_by": "system", "shutdown_date": shutdown}
}

func modelNotFound(w http.ResponseWriter, model string) {
	apiError(w, http.StatusNotFound, "The model `"+model+"` does not exist or you do not have access to it.", "invalid_request_error", "model", codeModelNotFound)
}

// listModels lists every model the simulator knows, each with its
// shutdown_date (YYYY-MM-DD, or null when none is announced), the field
// OpenAI's deprecations page tells clients to watch. It reads no clock:
// a stepping test clock moves on each read.
func (s *Server) listModels(w http.ResponseWriter, _ *http.Request, _ string) {
	data := make([]map[string]any, len(models))
	for i, m := range models {
		data[i] = modelObject(m)
	}
	simkit.WriteJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

func (s *Server) getModel(w http.ResponseWriter, r *http.Request, _ string) {
	m := r.PathValue("model")
	if !served(m, s.Core.Now) {
		modelNotFound(w, m)
		return
	}
	simkit.WriteJSON(w, http.StatusOK, modelObject(m))
}
