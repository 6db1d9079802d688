package schema

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/url"
	"strings"
	"unicode/utf8"
)

// CheckSourceImage checks a source image: an http or https URL, or a
// data:image/<type>;base64,<data> URI whose data decodes. [published]
// The service fetches a URL itself; neither genform nor the simulator
// does, so a URL is checked for its form only.
//
// Two limits are the simulator's, chosen so that every request fits its
// body limit (see MaxSourceImageBytes). [simulator] No source image is
// longer than MaxSourceImageBytes. A URL is written as a request body
// carries it unchanged: printable ASCII, with spaces, quotes, backslashes
// and other characters percent-encoded, so its JSON is no longer than
// itself.
func CheckSourceImage(s string) string {
	if len(s) > MaxSourceImageBytes {
		return fmt.Sprintf("must be at most %d bytes (%d MiB) long, not %d", MaxSourceImageBytes, MaxSourceImageBytes>>20, len(s))
	}
	if rest, ok := strings.CutPrefix(s, "data:"); ok {
		return dataURI(rest)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "must be an http(s) URL or a data:image/<type>;base64,<data> URI"
	}
	if i := strings.IndexFunc(s, unescaped); i >= 0 {
		r, _ := utf8.DecodeRuneInString(s[i:])
		return fmt.Sprintf("must be an http(s) URL with spaces, quotes, backslashes and non-ASCII characters percent-encoded (%q at byte %d is not)", r, i)
	}
	return ""
}

// dataURI checks what follows "data:" in a source image.
func dataURI(rest string) string {
	meta, payload, ok := strings.Cut(rest, ",")
	sub, isImage := strings.CutPrefix(meta, "image/")
	sub, isBase64 := strings.CutSuffix(sub, ";base64")
	if !ok || !isImage || !isBase64 || !mediaSubtype(sub) {
		return "must be a data:image/<type>;base64,<data> URI"
	}
	// Decoding as a stream checks a large image without a copy of it.
	n, err := io.Copy(io.Discard, base64.NewDecoder(base64.StdEncoding, strings.NewReader(payload)))
	switch {
	case err != nil:
		return "must hold valid base64 after the comma of its data URI"
	case n == 0:
		return "must hold an image, but its data URI is empty"
	}
	return ""
}

// unescaped reports whether a URL must percent-encode r.
func unescaped(r rune) bool { return r <= ' ' || r >= 0x7f || r == '"' || r == '\\' }

// mediaSubtype reports whether s can be the subtype of an image media
// type: "png", "svg+xml", "vnd.microsoft.icon".
func mediaSubtype(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '+' || c == '-') {
			return false
		}
	}
	return true
}
