package simulator

import (
	"net/http"
	"strconv"

	"github.com/genform/genform/internal/simulator/simkit"
)

// Nested (string) error codes. The H- and VB- codes marked documented are
// the service's own; the others fill gaps its documentation leaves (see
// docs/service.md).
const (
	codeUnauthorized  = "H-10001001" // simulator's own: missing or wrong bearer token
	codeNotFound      = "H-10002001" // documented: content not found
	codeForbidden     = "H-10002002" // documented: permission denied
	codeNoGeneration  = "H-10002003" // documented: generation does not exist or no permission
	codeMaxConcurrent = "VB-100011"  // documented: max concurrent tasks
	codeMaxRequests   = "VB-100012"  // documented: max generation tasks (used for the request rate)
	codeServiceError  = "H-10005001" // simulator's own: injected service error
)

// apiError is an error answer. Its code decides the body shape: an int code
// is written flat, {"message","code","details"}; a string code nested,
// {"error":{"message","code","details"}}. Both shapes were documented for
// the service, and answering with both keeps clients honest.
type apiError struct {
	status     int
	code       any // int or string
	msg        string
	retryAfter int // seconds; sent as Retry-After when positive
}

func badRequest(code int, msg string) *apiError {
	return &apiError{status: http.StatusBadRequest, code: code, msg: msg}
}

func notFound(msg string) *apiError {
	return &apiError{status: http.StatusNotFound, code: codeNotFound, msg: msg}
}

func noGeneration(id string) *apiError {
	return &apiError{status: http.StatusNotFound, code: codeNoGeneration, msg: "generation " + id + " does not exist or you have no permission to see it"}
}

type errorFields struct {
	Message string `json:"message"`
	Code    any    `json:"code"`
	Details []any  `json:"details"`
}

func (e *apiError) write(w http.ResponseWriter) {
	if e.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.retryAfter))
	}
	body := errorFields{Message: e.msg, Code: e.code, Details: []any{}}
	if _, flat := e.code.(int); flat {
		simkit.WriteJSON(w, e.status, body)
		return
	}
	simkit.WriteJSON(w, e.status, struct {
		Error errorFields `json:"error"`
	}{body})
}

// successStatus is the top-level status of every success envelope; the
// service does not say what its values are.
const successStatus = "success"

func writeValue(w http.ResponseWriter, value any) {
	simkit.WriteJSON(w, http.StatusOK, struct {
		Status string `json:"status"`
		Value  any    `json:"value"`
	}{successStatus, value})
}
