package simkit

import (
	"bytes"
	"io"
	"net/http"
	"path"
	"strings"
	"time"
)

// Endpoint is an endpoint of a simulated API, run once the gate let its
// request through, with the key's owner.
type Endpoint func(w http.ResponseWriter, r *http.Request, owner string)

// EndpointAt is an Endpoint that answers as of now, the instant the gate
// admitted its request at: an API whose answer to a request is of one
// instant reads the clock once.
type EndpointAt func(w http.ResponseWriter, r *http.Request, owner string, now time.Time)

// StatusName names a job's status in a provider's words, from its stage
// and progress.
type StatusName func(r *Run, st Stage, progress float64) string

// Server is the frame every simulator is built in: its core, its route
// table (Mux, which serves GET /_sim/jobs), the gate every API request
// passes (API), the jobs report, and a log line a request. A simulator
// embeds it and keeps its endpoints, fields, statuses and error bodies.
type Server struct {
	Core *Core
	// Mux routes the requests; Handler, when set, answers them in its
	// place (an API whose paths no ServeMux pattern can name, or one
	// that checks a path before routing it).
	Mux     *http.ServeMux
	Handler http.Handler
	// Phase gives each job's status and progress in the jobs report:
	// from its stage, named by the StatusName NewServer was given,
	// unless the API, whose progress is its own, sets its own.
	Phase  Phase
	scheme string
	refuse Refusal
}

// NewServer is the frame of a simulator configured by opts, the zero
// settings taken from d, with the jobs saved in opts.DataDir loaded: its
// API takes the key as "Authorization: scheme key", refuse answers the
// gate's refusals, and status names the jobs' statuses in the report (an
// API that sets Phase itself passes nil).
func NewServer(opts Options, d Defaults, scheme string, refuse Refusal, status StatusName) (*Server, error) {
	c, err := NewCore(opts, d)
	if err != nil {
		return nil, err
	}
	s := &Server{Core: c, Mux: http.NewServeMux(), scheme: scheme, refuse: refuse}
	if status != nil {
		s.Phase = func(r *Run, now time.Time) (string, float64) {
			st, p, _ := r.StageAt(now)
			return status(r, st, p), p
		}
	}
	s.Mux.HandleFunc("GET /_sim/jobs", func(w http.ResponseWriter, _ *http.Request) {
		WriteJSON(w, http.StatusOK, s.Jobs())
	})
	return s, nil
}

// Jobs returns what GET /_sim/jobs serves.
func (s *Server) Jobs() JobsReport { return s.Core.Jobs(s.Phase) }

// Close writes the jobs' counters and cancellations to DataDir.
func (s *Server) Close() error { return s.Core.Close() }

// API runs the gate every API request passes (Core.Gate; a create is
// spared ErrorRate under ReadErrorsOnly), then the endpoint.
func (s *Server) API(create bool, e Endpoint) http.HandlerFunc {
	return s.APIAt(create, func(w http.ResponseWriter, r *http.Request, owner string, _ time.Time) { e(w, r, owner) })
}

// APIAt is API for an endpoint that answers as of the instant the gate
// admitted its request at.
func (s *Server) APIAt(create bool, e EndpointAt) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if owner, now, ok := s.Core.Gate(w, r, s.scheme, create, s.refuse); ok {
			e(w, r, owner, now)
		}
	}
}

// ServeHTTP answers a request as the route table (or Handler) says, and
// logs it with the status it was answered.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	if s.Handler != nil {
		s.Handler.ServeHTTP(rec, r)
	} else {
		s.Mux.ServeHTTP(rec, r)
	}
	if logf := s.Core.Opts.Logf; logf != nil {
		logf("%s %s %d %s", r.Method, r.URL.Path, rec.status, time.Since(start).Round(time.Microsecond))
	}
}

// statusRecorder remembers the status of an answer for the request log.
// Unwrap lets http.ResponseController reach the connection, for the
// answers a simulator drops (Drop) or cuts short (SendMedia).
type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// probeMethods are the methods a route could name, in the order an Allow
// header lists them.
var probeMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions}

// Allowed lists the methods named by the routes of Mux that take r's
// path, for the Allow header of a 405: asked of the route table rather
// than kept as a second list. Catch-alls name no method, and a HEAD that
// ServeMux would hand to a GET route does not count, so the list is what
// the routes say they answer. No route takes a path that is not clean
// (ServeMux would answer the probe with a redirect to the route of the
// cleaned path).
func (s *Server) Allowed(r *http.Request) string {
	if !CleanPath(r.URL.EscapedPath()) {
		return ""
	}
	var allow []string
	for _, m := range probeMethods {
		probe := &http.Request{Method: m, Host: r.Host, URL: r.URL}
		if _, pattern := s.Mux.Handler(probe); strings.HasPrefix(pattern, m+" ") {
			allow = append(allow, m)
		}
	}
	return strings.Join(allow, ", ")
}

// CleanPath reports whether ServeMux routes the escaped path p as it is.
// It redirects any other path to a cleaned form, without empty, "." or
// ".." segments.
func CleanPath(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c == p
}

// ReadBody reads a request's body, refusing one over limit bytes, with
// the white space around it trimmed. Its error is the reading's, for the
// provider to answer in its own words.
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	return bytes.TrimSpace(b), err
}
