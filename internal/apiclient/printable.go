package apiclient

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable returns s with every character a terminal could act on
// escaped the way Go escapes it in a quoted string: an escape sequence
// shows as \x1b, a bell as \a, a line break as \n, a right-to-left
// override as \u202e, and a byte that is not UTF-8 as \xff. Printable
// characters, the backslash among them, are kept as they are, so the
// result of Printable is its own Printable.
//
// Every string the service chooses (messages, codes, statuses, ids, the
// start of an error page) goes through Printable before it is printed, so
// that a service cannot set the terminal's title, clear the screen or
// start a line of its own, such as a fake "Apply complete!".
func Printable(s string) string {
	if isPrintable(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unicode.IsPrint(r):
			b.WriteString(s[i : i+size])
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	return b.String()
}

func isPrintable(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			// Outside printable ASCII: decide rune by rune.
			for _, r := range s[i:] {
				if r == utf8.RuneError || !unicode.IsPrint(r) {
					return false
				}
			}
			return true
		}
	}
	return true
}

// maxIDBytes bounds the ids the service hands out: its own are UUIDs of
// 36 bytes, and an id is repeated in paths, messages and the state.
const maxIDBytes = 256

// CheckID refuses an id (what names it: "generation_id") that is longer
// than maxIDBytes, empty, or holds a space, a control character or
// anything else that is not printable: an id is an opaque word, and one
// that is not is a broken or hostile service.
func CheckID(what, id string) error {
	if id == "" {
		return fmt.Errorf("%s is empty", what)
	}
	if len(id) > maxIDBytes {
		return fmt.Errorf("%s is %d bytes long; an id longer than %d bytes is refused", what, len(id), maxIDBytes)
	}
	for _, r := range id {
		if r == utf8.RuneError || !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return fmt.Errorf("%s %q holds a space, a control character or a character that cannot be printed; such an id is refused", what, id)
		}
	}
	return nil
}
