package apiclient

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// The seed corpora live in testdata/fuzz/<FuzzName>; these seeds add the
// documented shapes so a plain `go test` exercises them too.

// FuzzDecodeError checks that any error answer, however malformed, yields a
// usable *Error without panicking, and that the documented shapes keep
// their message and code.
func FuzzDecodeError(f *testing.F) {
	for _, s := range []string{
		`{"error":{"message":"max concurrent tasks","code":"VB-100011","details":[]}}`,
		`{"message":"prompt is required","code":40001,"details":["prompt"]}`,
		`{"error":"plain"}`,
		`{"error":{"code":1.5e3}}`,
		`{"error":null,"message":"m","code":true}`,
		`<html>502 Bad Gateway</html>`,
		`[]`, `null`, ``, `{"error":{"message":{"nested":1}}}`,
	} {
		f.Add([]byte(s), 400)
	}
	f.Fuzz(func(t *testing.T, body []byte, status int) {
		status = 400 + abs(status)%200
		e := newError("POST /v1/jobs/text2image", status, http.Header{}, body, time.Now())
		s := e.Error()
		if !strings.HasPrefix(s, "POST /v1/jobs/text2image: "+statusText(status)) {
			t.Errorf("Error() = %q does not start with the op and status", s)
		}
		if !e.serviceBody && utf8.RuneCountInString(e.Message) > 201 {
			t.Errorf("a foreign body gave a %d-rune message", utf8.RuneCountInString(e.Message))
		}
		if e.Details != nil && !json.Valid(e.Details) {
			t.Errorf("Details %q is not JSON", e.Details)
		}
		// A flat object whose message and code are a string and an integer
		// must come back as written.
		var top map[string]json.RawMessage
		if json.Unmarshal(body, &top) == nil {
			var msg string
			var code int64
			_, hasError := top["error"]
			if !hasError && json.Unmarshal(top["message"], &msg) == nil && json.Unmarshal(top["code"], &code) == nil &&
				!bytes.ContainsAny(top["code"], ".eE") {
				if e.Message != msg || e.Code != strconv.FormatInt(code, 10) {
					t.Errorf("decoded (%q, %q), want (%q, %d)", e.Message, e.Code, msg, code)
				}
			}
		}
	})
}

// FuzzErrorShapes builds both documented shapes from arbitrary values and
// checks that message and code survive the round trip.
func FuzzErrorShapes(f *testing.F) {
	f.Add("prompt is required", "VB-100011", int64(40001), false)
	f.Add("", "", int64(0), true)
	f.Add("ünïcode \"quoted\" \\ ", "H-10002001", int64(-1), true)
	f.Fuzz(func(t *testing.T, message, code string, intCode int64, nested bool) {
		if !utf8.ValidString(message) || !utf8.ValidString(code) {
			return // JSON cannot carry them unchanged
		}
		for _, c := range []any{code, intCode} {
			obj := map[string]any{"message": message, "code": c, "details": []string{"x"}}
			var body []byte
			if nested {
				body, _ = json.Marshal(map[string]any{"error": obj})
			} else {
				body, _ = json.Marshal(obj)
			}
			gotMsg, gotCode, details, ok := decodeErrorBody(body)
			want := code
			if _, isInt := c.(int64); isInt {
				want = strconv.FormatInt(intCode, 10)
			}
			if !ok || gotMsg != message || gotCode != want || string(details) != `["x"]` {
				t.Errorf("%s: got (%q, %q, %s, %v), want (%q, %q)", body, gotMsg, gotCode, details, ok, message, want)
			}
		}
	})
}

func abs(n int) int {
	if n < 0 {
		if n == -n { // the most negative int
			return 0
		}
		return -n
	}
	return n
}
