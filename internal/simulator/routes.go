package simulator

import (
	"fmt"
	"net/http"
	"path"
	"strings"
	"time"
)

// routes is the route table: everything the simulator answers.
//
// The routes under /v1 are the service's API. Each goes through s.api,
// which runs the steps every API request passes before its endpoint, and
// so does the catch-all under /v1: an unknown path or a wrong method there
// is answered only after the token, the RPM limit and injected errors, so a
// request without a token learns nothing about which paths exist. The
// catch-alls answer the simulator's JSON 404 and 405 where ServeMux would
// answer plain text.
func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	for p := range endpointKinds { // the job-creation endpoints
		mux.Handle("POST "+p, s.apiCreate(s.create))
	}
	mux.Handle("GET /v1/jobs/{id}/status", s.api(s.status))
	mux.Handle("GET /v1/creation/{id}", s.api(s.detail))
	mux.Handle("POST /v1/creation/{id}/watermark-free-url", s.api(s.watermarkFreeURL))
	mux.Handle("/v1/", s.api(s.unknownEndpoint))
	mux.Handle("/v1", s.api(s.unknownEndpoint)) // or ServeMux redirects it to /v1/

	mux.HandleFunc("GET /media/{id}/{file}", s.serveMedia)
	mux.HandleFunc("HEAD /media/{id}/{file}", s.serveMedia) // GET answers HEAD too; named so a 405 lists it
	mux.HandleFunc("GET /_sim/jobs", s.serveJobs)
	mux.HandleFunc("/", s.unknownPath)
	return mux
}

// apiHandler is an API endpoint. It runs once the request has passed the
// steps of s.api, for owner (the hash of the request's token) at now.
type apiHandler func(w http.ResponseWriter, r *http.Request, owner string, now time.Time)

// api runs the steps every API request goes through, in this order:
// authentication, the request rate limit, injected errors, then the
// endpoint itself.
func (s *Server) api(endpoint apiHandler) http.HandlerFunc {
	return s.apiSteps(endpoint, false)
}

// apiCreate is api for a job-creation endpoint, which Options.ReadErrorsOnly
// spares the injected errors.
func (s *Server) apiCreate(endpoint apiHandler) http.HandlerFunc {
	return s.apiSteps(endpoint, true)
}

func (s *Server) apiSteps(endpoint apiHandler, create bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests++
		s.mu.Unlock()

		owner, aerr := s.authenticate(r)
		if aerr != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="genform simulator"`)
			aerr.write(w)
			return
		}
		now := s.now()
		if aerr := s.admit(owner, now); aerr != nil {
			aerr.write(w)
			return
		}
		if !(create && s.opts.ReadErrorsOnly) && s.errRand.Happens(s.opts.ErrorRate) {
			(&apiError{status: http.StatusInternalServerError, code: codeServiceError, msg: "internal service error (injected by the simulator's error rate); retry later"}).write(w)
			return
		}
		// ServeMux hands HEAD to GET patterns, but the API answers only
		// the methods its routes name: a HEAD status request would be
		// counted as a status request without the client seeing it.
		if r.Method == http.MethodHead {
			s.unknownEndpoint(w, r, owner, now)
			return
		}
		endpoint(w, r, owner, now)
	}
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
	if allow := s.allowedMethods(r); allow != "" {
		w.Header().Set("Allow", allow)
		(&apiError{status: http.StatusMethodNotAllowed, code: codeNotFound, msg: fmt.Sprintf("%s %s is not supported; use %s", r.Method, r.URL.Path, allow)}).write(w)
		return
	}
	notFound(msg).write(w)
}

// probeMethods are the methods a route could name, in the order an Allow
// header lists them.
var probeMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions}

// allowedMethods lists the methods named by the routes that take r's path,
// asking the route table rather than keeping a second list. Catch-alls name
// no method, and a HEAD that ServeMux would hand to a GET route does not
// count, so the list is what the routes say they answer. No route takes a
// path that is not clean (ServeMux would answer the probe with a redirect
// to the route of the cleaned path).
func (s *Server) allowedMethods(r *http.Request) string {
	if !cleanPath(r.URL.EscapedPath()) {
		return ""
	}
	var allow []string
	for _, m := range probeMethods {
		probe := &http.Request{Method: m, Host: r.Host, URL: r.URL}
		if _, pattern := s.mux.Handler(probe); strings.HasPrefix(pattern, m+" ") {
			allow = append(allow, m)
		}
	}
	return strings.Join(allow, ", ")
}

// cleanPath reports whether ServeMux routes the escaped path p as it is.
// It redirects any other path to a cleaned form, without empty, "." or
// ".." segments.
func cleanPath(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c == p
}

// uncleanPath answers a path that is not in clean form. ServeMux would
// redirect it to its cleaned form, which may name another endpoint or
// file; the service never redirects, and such a path names nothing: 404,
// after the API's steps when it is under /v1, like every path there.
func (s *Server) uncleanPath(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/v1/") {
		s.api(s.unknownEndpoint)(w, r)
		return
	}
	s.unknownPath(w, r)
}
