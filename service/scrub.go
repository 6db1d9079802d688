package service

import (
	"bytes"
	"encoding/json"
	"html"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// redacted replaces every trace of the token in what the service answers.
// It holds no character that JSON or a URL would escape, so an answer
// stays valid JSON after the replacement.
const redacted = "[redacted]"

// secretForms lists the spellings of tok that a service echoing it might
// use: as sent, escaped in a JSON string (with and without HTML escaping,
// and with "\/"), escaped in HTML, and percent-encoded as a query or a
// path would carry it (upper- and lower-case hex). The longest come first,
// so that a form is never cut by a shorter one inside it.
func secretForms(tok string) [][]byte {
	if tok == "" {
		return nil
	}
	var forms []string
	add := func(f string) {
		if !slices.Contains(forms, f) {
			forms = append(forms, f)
		}
	}
	add(tok)
	quoted, _ := json.Marshal(tok) // a string always marshals
	add(string(quoted[1 : len(quoted)-1]))
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(tok)
	plain := strings.TrimSuffix(buf.String(), "\n")
	add(plain[1 : len(plain)-1])
	add(strings.ReplaceAll(plain[1:len(plain)-1], "/", `\/`))
	add(html.EscapeString(tok))
	for _, f := range []string{url.QueryEscape(tok), url.PathEscape(tok)} {
		add(f)
		add(percentHex.ReplaceAllStringFunc(f, strings.ToLower))
	}
	// Longest first: a longer form may contain a shorter one.
	slices.SortStableFunc(forms, func(a, b string) int { return len(b) - len(a) })
	out := make([][]byte, len(forms))
	for i, f := range forms {
		out[i] = []byte(f)
	}
	return out
}

var percentHex = regexp.MustCompile(`%[0-9A-F]{2}`)

// scrubBody removes the token from an answer's body before anything reads
// it: before an error page is cut to a snippet (cutting first could leave
// a prefix of the token that no longer matches), and before a success
// answer is decoded, so that no value of it, the creation detail kept in
// the state included, carries the token.
//
// JSON lets a string spell any character as \uXXXX, more ways than a list
// can hold; a body with an escape that still holds the token once decoded
// has every string of it cleaned and is encoded again.
func (c *Client) scrubBody(b []byte) []byte {
	if len(c.secrets) == 0 {
		return b
	}
	for _, f := range c.secrets {
		if bytes.Contains(b, f) {
			b = bytes.ReplaceAll(b, f, []byte(redacted))
		}
	}
	if bytes.IndexByte(b, '\\') < 0 {
		return b
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return b
	}
	v, changed := scrubValue(v, c.token)
	if !changed {
		return b
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return b
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// scrubText replaces every spelling of the token in s.
func (c *Client) scrubText(s string) string {
	for _, f := range c.secrets {
		if strings.Contains(s, string(f)) {
			s = strings.ReplaceAll(s, string(f), redacted)
		}
	}
	return s
}

// scrubValue replaces tok in every string, keys included, of a decoded
// JSON value.
func scrubValue(v any, tok string) (any, bool) {
	switch x := v.(type) {
	case string:
		if strings.Contains(x, tok) {
			return strings.ReplaceAll(x, tok, redacted), true
		}
	case []any:
		changed := false
		for i, e := range x {
			var c bool
			x[i], c = scrubValue(e, tok)
			changed = changed || c
		}
		return x, changed
	case map[string]any:
		changed := false
		out := make(map[string]any, len(x))
		for k, e := range x {
			e, c := scrubValue(e, tok)
			if strings.Contains(k, tok) {
				k, c = strings.ReplaceAll(k, tok, redacted), true
			}
			out[k] = e
			changed = changed || c
		}
		return out, changed
	}
	return v, false
}
