package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// Error is every error answer of the service: an HTTP status outside 2xx, or
// a 2xx whose envelope carries an error instead of a value.
type Error struct {
	// HTTPStatus is the status code of the answer.
	HTTPStatus int
	// Code is the application code in string form whatever its wire type
	// ("VB-100011", or "400" for an integer code); "" when absent.
	Code string
	// Message is the service's message, or the start of a body that was not
	// one of the documented error shapes.
	Message string
	// Details is the details member exactly as received; nil when absent.
	Details json.RawMessage
	// Op is the request that failed, e.g. "POST /v1/jobs/text2image".
	Op string
	// RetryAfter is the wait the service asked for in a Retry-After header;
	// zero when it asked for none.
	RetryAfter time.Duration

	// serviceBody records that the body was one of the service's own error
	// shapes, which on a create proves the service answered (and so did not
	// create the job) rather than a gateway in front of it.
	serviceBody bool
	// media records that the answer was to a download: a 401 or 403 there
	// is about the link (an expired signed URL), not the token.
	media bool
	// key says whether the answer is the API's refusal of the token, as
	// the call that got it reads its statuses (Config.KeyRefusals,
	// Call.KeyRefusals): keyDefault leaves it to the status, a 401 or 403.
	key keyVerdict
}

// keyVerdict is whether an error answer refuses the token.
type keyVerdict int8

const (
	// keyDefault: a 401 or 403 refuses the token (an Error made outside
	// a call, and the reference service's answers).
	keyDefault keyVerdict = iota
	// keyRefused: the call's API documents the status as a refused token.
	keyRefused
	// keyNot: the call's API documents the status as something else (a
	// model the account may not use, a locked account), not the token.
	keyNot
)

// FromBody reports whether the message came from one of the service's
// own error shapes, which on a create proves the service answered (and so
// did not create the job) rather than a gateway in front of it.
func (e *Error) FromBody() bool { return e.serviceBody }

// Is makes an answer of the API that refuses the token match
// ErrUnauthorized: a status the call's API documents as a refused key
// (Config.KeyRefusals, Call.KeyRefusals), by default a 401 or 403. A
// download's answer never does (its 401 or 403 is about the link).
func (e *Error) Is(target error) bool {
	if target != ErrUnauthorized || e.media {
		return false
	}
	switch e.key {
	case keyRefused:
		return true
	case keyNot:
		return false
	}
	return e.HTTPStatus == http.StatusUnauthorized || e.HTTPStatus == http.StatusForbidden
}

// Error formats the failure as "POST /v1/jobs/text2image: 400 Bad Request:
// prompt is required (code 40001)".
func (e *Error) Error() string {
	var b strings.Builder
	if e.Op != "" {
		b.WriteString(e.Op)
		b.WriteString(": ")
	}
	b.WriteString(statusText(e.HTTPStatus))
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(Printable(e.Message))
	}
	if e.Code != "" {
		fmt.Fprintf(&b, " (code %s)", Printable(e.Code))
	}
	return b.String()
}

func statusText(code int) string {
	if t := http.StatusText(code); t != "" {
		return fmt.Sprintf("%d %s", code, t)
	}
	return fmt.Sprintf("status %d", code)
}

// ErrAmbiguousCreate is wrapped by the error of a create request that may
// have reached the service although its answer was lost: the job may exist
// and be billed. Such a request is never re-sent automatically; callers test
// for it with errors.Is and keep their intent record.
var ErrAmbiguousCreate = errors.New("the create request may have reached the service, and its outcome is not known")

// ErrUnauthorized is matched (errors.Is) by an answer of the API that
// refuses the token (by default a 401 or 403; a provider's own statuses
// where it documents them, Config.KeyRefusals): every later request would
// be refused too. The error itself is an *Error with the service's answer.
var ErrUnauthorized = errors.New("the service refused the token")

// ErrUnreachable is matched by the error of a request that could not open a
// connection to a service that has never answered this client: the
// connection was refused, the host name did not resolve, or the TLS
// handshake failed. Retrying cannot help; the address, the service or the
// network must be fixed. The error itself is an *UnreachableError.
var ErrUnreachable = errors.New("the service cannot be reached")

// UnreachableError is a request that found no service at the base URL.
type UnreachableError struct {
	// Op is the request, e.g. "GET /v1/jobs/.../status".
	Op string
	// Scheme and Addr (host:port) are where the service was looked for.
	Scheme, Addr string
	// Reason says what failed, e.g. "connection refused".
	Reason string
	// Err is the failure as the network reported it.
	Err error
}

// Error says where the service was looked for and what failed; the
// request is left out, since the address is the same for all of them.
func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach the service at %s (%s): %s", e.Addr, e.Scheme, e.Reason)
}

// Unwrap returns the network's failure.
func (e *UnreachableError) Unwrap() error { return e.Err }

// Is makes the error match ErrUnreachable.
func (e *UnreachableError) Is(target error) bool { return target == ErrUnreachable }

// errStalled is the cause of a download cancelled because its body came
// slower than Config.LowSpeedLimit over Config.LowSpeedTime.
var errStalled = errors.New("the download stalled")

// errNoAnswer is the cause of a download cancelled because its answer did
// not start within the request timeout.
var errNoAnswer = errors.New("no answer")

// LocalError is a download that failed on this machine, not on the
// service or the network: its directory or file could not be created,
// written, synced or renamed (a full disk, a read-only file system, a
// permission refused). No retry can get past it, so it is never retried;
// its message names the path and the cause.
type LocalError struct {
	// Path is the file or directory that could not be written.
	Path string
	// Err is the failure, which names Path.
	Err error
}

func (e *LocalError) Error() string {
	if strings.Contains(e.Err.Error(), e.Path) {
		return e.Err.Error()
	}
	return e.Path + ": " + e.Err.Error()
}

// Unwrap returns the failure.
func (e *LocalError) Unwrap() error { return e.Err }

// transportError is a request that got no usable HTTP answer: a failed dial,
// a timeout, a reset connection, a body cut short.
type transportError struct {
	op string
	// sent reports that a connection was made, so the service may have
	// received the request and acted on it.
	sent bool
	err  error
}

func (e *transportError) Error() string { return e.op + ": " + e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

// answerError is a success answer that could not be used: too large, not
// JSON, not the envelope. For a create it means the job exists but its id is
// unknown.
type answerError struct {
	op  string
	err error
}

func (e *answerError) Error() string { return e.op + ": " + e.err.Error() }
func (e *answerError) Unwrap() error { return e.err }

// IsRetryable reports whether err is a transient failure that the same
// request may get past later: a 429, a 5xx other than 501, a network failure
// or a stalled download. A cancelled context, a final refusal (4xx), an
// ambiguous create, an unreachable service and a link-local address
// (ErrLinkLocal) are not retryable.
func IsRetryable(err error) bool {
	var le *LocalError
	if err == nil || errors.Is(err, ErrAmbiguousCreate) ||
		errors.Is(err, ErrUnreachable) || errors.Is(err, context.Canceled) || errors.As(err, &le) ||
		errors.Is(err, ErrLinkLocal) {
		return false
	}
	var se *Error
	if errors.As(err, &se) {
		return retryableStatus(se.HTTPStatus)
	}
	var te *transportError
	if errors.As(err, &te) {
		return true // including the client's own per-request timeouts
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return false // the caller's deadline, which no retry can beat
	}
	if errors.Is(err, errStalled) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	// A syscall.Errno satisfies net.Error too, so a full disk (ENOSPC), a
	// read-only file system (EROFS) or a refused permission (EACCES) would
	// pass for a network failure: only a net.Error that is not a bare
	// errno counts (the network's own wrap theirs in a *net.OpError).
	var ne net.Error
	if errors.As(err, &ne) {
		_, errno := ne.(syscall.Errno)
		return !errno
	}
	return false
}

func retryableStatus(code int) bool {
	return code == http.StatusTooManyRequests ||
		(code >= 500 && code <= 599 && code != http.StatusNotImplemented)
}

// BodyError is the error an answer carries in the service's own error
// shapes ({"error":{"message","code","details"}}, or the same members
// flat), in place of a value; ok is false when body is not one of them.
// It is for an API whose success answers may carry an error (an
// envelope, read by Call.Decode): Do fills in its request and status.
func BodyError(body []byte) (e *Error, ok bool) {
	msg, code, details, ok := decodeErrorBody(body)
	if !ok {
		return nil, false
	}
	return &Error{Message: msg, Code: code, Details: details, serviceBody: true}, true
}

// newError builds the Error of an answer with a non-success status from its
// (already size-capped) body.
func newError(op string, status int, h http.Header, body []byte, now time.Time) *Error {
	e := &Error{Op: op, HTTPStatus: status, RetryAfter: parseRetryAfter(h.Get("Retry-After"), now)}
	if msg, code, details, ok := decodeErrorBody(body); ok {
		e.Message, e.Code, e.Details, e.serviceBody = msg, code, details, true
	} else if msg, ok := decodeDetail(body); ok {
		e.Message = msg
	} else {
		e.Message = snippet(body)
	}
	return e
}

// maxRetryAfter bounds how long one Retry-After may hold a request: an
// absurd value must not park an apply for hours. Waiting less than asked
// only costs another 429 that carries the remaining wait.
const maxRetryAfter = 5 * time.Minute

// parseRetryAfter reads a Retry-After header in either form RFC 9110 allows:
// delay-seconds or an HTTP date. Anything unreadable counts as absent.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs > int64(maxRetryAfter/time.Second) {
			return maxRetryAfter
		}
		d = time.Duration(secs) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), maxRetryAfter)
}

// snippet turns a body that is not a documented error shape into a short,
// printable message: a proxy's HTML page must not flood the terminal, nor
// reach it with escape sequences. The body must have had the token
// scrubbed already: cut first, a token could be left as a prefix that no
// longer matches.
func snippet(body []byte) string {
	const maxLen = 200
	s := strings.TrimSpace(strings.ToValidUTF8(string(body), "\uFFFD"))
	s = Printable(strings.Join(strings.Fields(s), " "))
	if utf8.RuneCountInString(s) > maxLen {
		r := []rune(s)
		s = string(r[:maxLen]) + "…"
	}
	return s
}

// decodeErrorBody reads an error answer in either documented shape:
// {"error":{"message","code","details"}} or the flat {"message","code",
// "details"}. It also accepts {"error":"text"}. A code is returned in string
// form whatever its wire type. ok is false when the body is not a JSON object
// with at least one of those members.
func decodeErrorBody(body []byte) (message, code string, details json.RawMessage, ok bool) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		return "", "", nil, false
	}
	fields := func(m map[string]json.RawMessage) bool {
		found := false
		if raw, has := m["message"]; has {
			message, found = rawText(raw), true
		}
		if raw, has := m["code"]; has {
			code, found = rawText(raw), true
		}
		if raw, has := m["details"]; has && !isNull(raw) {
			details, found = raw, true
		}
		return found
	}
	if raw, has := top["error"]; has && !isNull(raw) {
		var nested map[string]json.RawMessage
		if json.Unmarshal(raw, &nested) == nil && nested != nil {
			fields(nested)
		} else {
			message = rawText(raw)
		}
		// A flat member fills what the nested object left out.
		if message == "" {
			if raw, has := top["message"]; has {
				message = rawText(raw)
			}
		}
		if code == "" {
			if raw, has := top["code"]; has {
				code = rawText(raw)
			}
		}
		return message, code, details, true
	}
	ok = fields(top)
	return message, code, details, ok
}

// rawText is a JSON value as text: a string unquoted, a number as written,
// anything else compacted; null is "".
func rawText(raw json.RawMessage) string {
	if isNull(raw) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return string(raw)
	}
	return buf.String()
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}

// decodeDetail reads the error body most other APIs answer with: a
// "detail" member, a string or a list of validation errors each with a
// "msg" (and a "loc"), and a "title" beside it.
func decodeDetail(body []byte) (string, bool) {
	var top struct {
		Title  json.RawMessage `json:"title"`
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &top) != nil || len(top.Detail) == 0 || isNull(top.Detail) {
		return "", false
	}
	var items []struct {
		Msg string `json:"msg"`
		Loc []any  `json:"loc"`
	}
	msg := ""
	if json.Unmarshal(top.Detail, &items) == nil && len(items) > 0 {
		parts := make([]string, 0, len(items))
		for _, it := range items {
			p := it.Msg
			if len(it.Loc) > 0 {
				p = fmt.Sprint(it.Loc[len(it.Loc)-1]) + ": " + p
			}
			parts = append(parts, p)
		}
		msg = strings.Join(parts, "; ")
	} else {
		msg = rawText(top.Detail)
	}
	if t := rawText(top.Title); t != "" && msg != "" && !strings.HasPrefix(msg, t) {
		msg = t + ": " + msg
	}
	if msg == "" {
		return "", false
	}
	return Printable(snippet([]byte(msg))), true
}
