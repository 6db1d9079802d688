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
// A JSON answer is cleaned decoded (scrubJSON): JSON lets a string spell
// any character as \uXXXX, more ways than a list can hold, and replacing
// bytes could cut into the answer's structure. Anything else (an error
// page) has every spelling of the token replaced where it stands.
func (c *Client) scrubBody(b []byte) []byte {
	if len(c.secrets) == 0 {
		return b
	}
	if json.Valid(b) {
		return c.scrubJSON(b)
	}
	for _, f := range c.secrets {
		if bytes.Contains(b, f) {
			b = bytes.ReplaceAll(b, f, []byte(redacted))
		}
	}
	return b
}

// minScrubbedToken is the shortest token looked for in a JSON answer. A
// shorter one is likely part of what the service always sends ("t" is in
// "status", in "generation_id", in every "http://" media URL), and
// replacing it there would lose the answer, and with a create's answer
// the job's id. No real service token is that short.
const minScrubbedToken = 8

// scrubJSON removes the token from a JSON answer's strings, decoded, so
// that no escape hides it and the answer's structure stays whole: every
// string value and every member's name. b is returned as it is when
// nothing in it holds the token, or the token is too short to tell from
// the service's own words (minScrubbedToken).
func (c *Client) scrubJSON(b []byte) []byte {
	if len(c.token) < minScrubbedToken {
		return b
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return b
	}
	changed := false
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			if s := c.scrubText(x); s != x {
				changed = true
				return s
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, e := range x {
				if s := c.scrubText(k); s != k {
					changed, k = true, s
				}
				out[k] = walk(e)
			}
			return out
		}
		return v
	}
	v = walk(v)
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
