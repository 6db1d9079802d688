package simulator

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/genform/genform/internal/simulator/simkit"
)

// routes fills the frame's route table with everything the simulator
// answers (the frame serves GET /_sim/jobs), and checks each path before
// routing it.
//
// The routes under /v1 are the service's API. Each goes through s.api,
// which runs the steps every API request passes before its endpoint, and
// so does the catch-all under /v1: an unknown path or a wrong method there
// is answered only after the token, the RPM limit and injected errors, so a
// request without a token learns nothing about which paths exist. The
// catch-alls answer the simulator's JSON 404 and 405 where ServeMux would
// answer plain text.
func (s *Server) routes() {
	mux := s.Mux
	for p := range endpointKinds { // the job-creation endpoints
		mux.Handle("POST "+p, s.api(true, s.create))
	}
	mux.Handle("GET /v1/jobs/{id}/status", s.api(false, s.status))
	mux.Handle("GET /v1/creation/{id}", s.api(false, s.detail))
	mux.Handle("POST /v1/creation/{id}/watermark-free-url", s.api(false, s.watermarkFreeURL))
	mux.Handle("/v1/", s.api(false, s.unknownEndpoint))
	mux.Handle("/v1", s.api(false, s.unknownEndpoint)) // or ServeMux redirects it to /v1/

	mux.HandleFunc("GET /media/{id}/{file}", s.serveMedia)
	mux.HandleFunc("HEAD /media/{id}/{file}", s.serveMedia) // GET answers HEAD too; named so a 405 lists it
	mux.HandleFunc("/", s.unknownPath)
	s.Handler = http.HandlerFunc(s.route)
}

// route hands a path in clean form to the route table, and answers any
// other itself (see uncleanPath).
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	if simkit.CleanPath(r.URL.EscapedPath()) {
		s.Mux.ServeHTTP(w, r)
		return
	}
	s.uncleanPath(w, r)
}

// api runs the steps every API request goes through, in this order:
// authentication, the request rate limit, injected errors (which
// Options.ReadErrorsOnly spares a create), then the endpoint itself, as
// of the instant the request was admitted.
func (s *Server) api(create bool, endpoint simkit.EndpointAt) http.HandlerFunc {
	return s.APIAt(create, func(w http.ResponseWriter, r *http.Request, owner string, now time.Time) {
		// ServeMux hands HEAD to GET patterns, but the API answers only
		// the methods its routes name: a HEAD status request would be
		// counted as a status request without the client seeing it.
		if r.Method == http.MethodHead {
			s.unknownEndpoint(w, r, owner, now)
			return
		}
		endpoint(w, r, owner, now)
	})
}

// unknownEndpoint answers an API request that no route takes.
func (s *Server) unknownEndpoint(w http.ResponseWriter, r *http.Request, _ string, _ time.Time) {
	s.noRoute(w, r, "no such endpoint: "+r.Method+" "+r.URL.Path)
}

// unknownPath answers a request outside the API that no route takes.
func (s *Server) unknownPath(w http.ResponseWriter, r *http.Request) {
	s.noRoute(w, r, "no such path: "+r.URL.Path)
}

// noRoute answers a request that no route takes: 405 with Allow when
// routes take its path with other methods, 404 with msg otherwise.
func (s *Server) noRoute(w http.ResponseWriter, r *http.Request, msg string) {
	if allow := s.Allowed(r); allow != "" {
		w.Header().Set("Allow", allow)
		(&apiError{status: http.StatusMethodNotAllowed, code: codeNotFound, msg: fmt.Sprintf("%s %s is not supported; use %s", r.Method, r.URL.Path, allow)}).write(w)
		return
	}
	notFound(msg).write(w)
}

// uncleanPath answers a path that is not in clean form. ServeMux would
// redirect it to its cleaned form, which may name another endpoint or
// file; the service never redirects, and such a path names nothing: 404,
// after the API's steps when it is under /v1, like every path there.
func (s *Server) uncleanPath(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/v1/") {
		s.api(false, s.unknownEndpoint)(w, r)
		return
	}
	s.unknownPath(w, r)
}
