package simkit

import (
	"bytes"
	"io"
	"net/http"
	"time"
)

// Endpoint is an endpoint of a simulated API, run once the gate let its
// request through, with the key's owner.
type Endpoint func(w http.ResponseWriter, r *http.Request, owner string)

// StatusName names a job's status in a provider's words, from its stage
// and progress.
type StatusName func(r *Run, st Stage, progress float64) string

// Server is the frame every live provider's simulator is built in: its
// core, its route table (Mux, which serves GET /_sim/jobs), the gate
// every API request passes (API), the jobs report, and a log line a
// request. A simulator embeds it and keeps its endpoints, fields,
// statuses and error bodies.
type Server struct {
	Core *Core
	// Mux routes the requests; Handler, when set, answers them in its
	// place (an API whose paths no ServeMux pattern can name).
	Mux     *http.ServeMux
	Handler http.Handler
	scheme  string
	refuse  Refusal
	status  StatusName
}

// NewServer is the frame of a simulator configured by opts, the zero
// settings taken from d, with the jobs saved in opts.DataDir loaded: its
// API takes the key as "Authorization: scheme key", refuse answers the
// gate's refusals, and status names the jobs' statuses in the report.
func NewServer(opts Options, d Defaults, scheme string, refuse Refusal, status StatusName) (*Server, error) {
	c, err := NewCore(opts, d)
	if err != nil {
		return nil, err
	}
	s := &Server{Core: c, Mux: http.NewServeMux(), scheme: scheme, refuse: refuse, status: status}
	s.Mux.HandleFunc("GET /_sim/jobs", func(w http.ResponseWriter, _ *http.Request) {
		WriteJSON(w, http.StatusOK, s.Jobs())
	})
	return s, nil
}

// Jobs returns what GET /_sim/jobs serves.
func (s *Server) Jobs() JobsReport { return s.Core.Jobs(s.status) }

// Close writes the jobs' counters and cancellations to DataDir.
func (s *Server) Close() error { return s.Core.Close() }

// API runs the gate every API request passes (Core.Gate; a create is
// spared ErrorRate under ReadErrorsOnly), then the endpoint.
func (s *Server) API(create bool, e Endpoint) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if owner, ok := s.Core.Gate(w, r, s.scheme, create, s.refuse); ok {
			e(w, r, owner)
		}
	}
}

// ServeHTTP answers a request as the route table (or Handler) says, and
// logs it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if s.Handler != nil {
		s.Handler.ServeHTTP(w, r)
	} else {
		s.Mux.ServeHTTP(w, r)
	}
	if logf := s.Core.Opts.Logf; logf != nil {
		logf("%s %s %s", r.Method, r.URL.Path, time.Since(start).Round(time.Microsecond))
	}
}

// ReadBody reads a request's body, refusing one over limit bytes, with
// the white space around it trimmed. Its error is the reading's, for the
// provider to answer in its own words.
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	return bytes.TrimSpace(b), err
}
