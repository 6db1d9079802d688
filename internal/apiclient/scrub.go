package apiclient

import (
	"bytes"
	"encoding/json"
	"html"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
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
	if t := c.scrubText(string(b)); t != string(b) {
		return []byte(t)
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

// scrubText replaces every spelling of the token in s that stands as a
// whole token (wholeAt): a short key ("sim") is redacted where it was
// sent or echoed, never inside a word that holds it ("simulator").
func (c *Client) scrubText(s string) string {
	return redactWhole(s, c.secrets)
}

// redactWhole replaces with redacted every occurrence in s of one of
// forms (the longest first) that stands as a whole token, in one pass
// from the left: a replacement is never matched again.
func redactWhole(s string, forms [][]byte) string {
	found := false
	for _, f := range forms {
		if strings.Contains(s, string(f)) {
			found = true
			break
		}
	}
	if !found {
		return s
	}
	var out strings.Builder
	done := 0 // s[:done] is written to out
	for i := 0; i < len(s); {
		n := 0
		for _, f := range forms {
			if strings.HasPrefix(s[i:], string(f)) && wholeAt(s, i, i+len(f)) {
				n = len(f)
				break
			}
		}
		if n == 0 {
			i++
			continue
		}
		out.WriteString(s[done:i])
		out.WriteString(redacted)
		i += n
		done = i
	}
	if done == 0 {
		return s
	}
	out.WriteString(s[done:])
	return out.String()
}

// wholeAt reports whether s[i:j], a spelling of the token, stands as a
// whole token rather than inside a longer one: on each side whose edge
// is a word character (a letter, a digit, '-' or '_'), the character
// beside it is not one, in any script, nor a '.' joining it to one
// ("sim.example" continues the token; "sim." ending a sentence does
// not). What stands before may end an escape (%3D of "key%3Dsim", \n,
// \u0022, \x22): the escape is a separator, not part of the token. So a
// key sent as "Bearer sim", in "?key=sim&", in JSON's "sim", in quotes of
// any kind or ending a sentence is whole, and "simulator", "_sim" or
// "sim-key" is not the key.
func wholeAt(s string, i, j int) bool {
	if isWordRune(rune(s[i])) {
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		switch {
		case i == 0:
		case isWordRune(before) && !endsEscape(s[:i]):
			return false
		case before == '.':
			if r, _ := utf8.DecodeLastRuneInString(s[:i-1]); i > 1 && isWordRune(r) {
				return false
			}
		}
	}
	if isWordRune(rune(s[j-1])) && j < len(s) {
		after, size := utf8.DecodeRuneInString(s[j:])
		switch {
		case isWordRune(after):
			return false
		case after == '.':
			if r, _ := utf8.DecodeRuneInString(s[j+size:]); j+size < len(s) && isWordRune(r) {
				return false
			}
		}
	}
	return true
}

// isWordRune reports whether r is a character of a word or an
// identifier: a letter or a digit of any script, '-' or '_'.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_'
}

// endsEscape reports whether s ends with an escape whose last character
// is a word character: a percent-encoded byte (%3D, or %253D encoded
// twice), or a backslash escape of JSON, Go or C (\n, \t, \u0022,
// \x22).
func endsEscape(s string) bool {
	n := len(s)
	hexTail := func(k int) bool {
		if n < k {
			return false
		}
		for _, b := range []byte(s[n-k:]) {
			if !isHexByte(b) {
				return false
			}
		}
		return true
	}
	switch {
	case n >= 3 && s[n-3] == '%' && hexTail(2),
		n >= 5 && s[n-5:n-2] == "%25" && hexTail(2): // encoded twice
		return true
	case n >= 2 && s[n-2] == '\\' && strings.IndexByte("abfnrtv", s[n-1]) >= 0:
		return true
	case n >= 4 && s[n-4] == '\\' && s[n-3] == 'x' && hexTail(2):
		return true
	case n >= 6 && s[n-6] == '\\' && s[n-5] == 'u' && hexTail(4):
		return true
	}
	return false
}

func isHexByte(b byte) bool {
	return '0' <= b && b <= '9' || 'a' <= b && b <= 'f' || 'A' <= b && b <= 'F'
}
