package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
)

// MaxNesting is how deeply an expression may nest: brackets, parentheses
// and braces, strings and the ${...} and %{...} sequences inside them,
// heredocs, and operators (each unary or binary operator and each ? of a
// conditional within one expression counts as a level, since the parsed
// expression nests one level per operator). HCL's parser and evaluator
// recurse once per level, several stack frames each, with no limit of
// their own: 100,000 parentheses in a 200 KB file took more than a
// gigabyte of stack and crashed the process. Real configurations stay
// far below this.
const MaxNesting = 256

// scanMode is what a text holds.
type scanMode int

const (
	scanConfig   scanMode = iota // a native-syntax file, or one expression
	scanTemplate                 // a template: templatefile's file, a JSON string
	scanJSON                     // a file of HCL's JSON syntax
)

// CheckNesting refuses a native-syntax file (a *.gen.hcl or a variables
// file) that nests deeper than MaxNesting, before a parser reads it.
// genform fmt calls it too.
func CheckNesting(src []byte, filename string) hcl.Diagnostics {
	return checkNesting(src, filename, scanConfig)
}

// checkNesting reports, as a diagnostic on the spot where it happens, the
// first place src nests deeper than MaxNesting; nil if it never does.
//
// It is a scanner, not a parser: it follows the HCL lexer's modes (code,
// quoted string, heredoc, ${...} and %{...} sequences, comments), which
// only the bytes " { } $ % # / * < and newlines switch, and counts the
// levels the parser would recurse through. Its cost is one pass over the
// bytes with no allocation beyond a small stack, so it runs on every file
// every time (about a millisecond a megabyte). Where it is unsure it
// counts more, never fewer: a mismatched closing bracket closes nothing.
// TestNestingMatchesLexer checks its modes against hclsyntax's lexer.
func checkNesting(src []byte, filename string, mode scanMode) hcl.Diagnostics {
	if mode == scanJSON {
		return checkJSONNesting(src, filename)
	}
	s := nestScanner{src: src, limit: MaxNesting}
	at := s.scan(mode, 0)
	switch {
	case at < 0:
		return nil
	case s.badByte:
		return badEncodingDiag(src, filename, at)
	}
	return nestingDiag(src, filename, at)
}

// nestingDiag is the diagnostic for nesting too deep at byte offset at.
func nestingDiag(src []byte, filename string, at int) hcl.Diagnostics {
	pos := posAt(src, at)
	end := pos
	if at < len(src) {
		_, size := utf8.DecodeRune(src[at:])
		end = hcl.Pos{Line: pos.Line, Column: pos.Column + 1, Byte: at + size}
	}
	return hcl.Diagnostics{errorAt(&hcl.Range{Filename: filename, Start: pos, End: end}, "Expression nested too deeply",
		fmt.Sprintf("Here the expression is nested more than %d levels deep (brackets, parentheses, braces, strings and templates inside one another, and operators chained in one expression each count as a level). genform refuses it before parsing, since parsing so deep a nesting can exhaust memory. Split the expression into locals.", MaxNesting))}
}

// badEncodingSummary is the summary of badEncodingDiag's diagnostic,
// which is HCL's own.
const badEncodingSummary = "Invalid character encoding"

// badEncodingDiag reports the byte at offset at, which is not UTF-8.
func badEncodingDiag(src []byte, filename string, at int) hcl.Diagnostics {
	pos := posAt(src, at)
	return hcl.Diagnostics{errorAt(&hcl.Range{Filename: filename, Start: pos, End: hcl.Pos{Line: pos.Line, Column: pos.Column + 1, Byte: at + 1}}, badEncodingSummary,
		"All input files must be UTF-8 encoded, and this byte is not UTF-8. Ensure that UTF-8 encoding is selected in your editor.")}
}

// posAt is the line and column of byte offset at.
func posAt(src []byte, at int) hcl.Pos {
	if at > len(src) {
		at = len(src)
	}
	line := 1 + bytes.Count(src[:at], []byte{'\n'})
	lineStart := bytes.LastIndexByte(src[:at], '\n') + 1
	return hcl.Pos{Line: line, Column: 1 + utf8.RuneCount(src[lineStart:at]), Byte: at}
}

// frame kinds of nestScanner's stack.
const (
	frameParen   = iota // ( ... ): code, newlines do not end an expression
	frameBrack          // [ ... ]
	frameBrace          // { ... }: a block body or an object; newlines end items
	frameInterp         // ${ ... } or %{ ... }: code inside a template
	frameQuoted         // " ... ": a quoted template
	frameHeredoc        // <<EOT ... EOT
	frameBare           // a whole template (templatefile): never closed
	frameTop            // a whole file or expression: never closed
)

type nestFrame struct {
	kind int
	ops  int    // operators since the last separator (code frames)
	tag  []byte // a heredoc's closing marker
	// lineStart is true in a heredoc at the start of a line, where its
	// marker may end it; a ${...} sequence makes the rest of its line
	// text, as the lexer reads it.
	lineStart bool
}

type nestScanner struct {
	src   []byte
	stack []nestFrame
	depth int // len(stack) - 1 plus every frame's ops
	// operand is true after something an index may follow (a name, a
	// number, a closing bracket or quote): x[i][j] nests each index in
	// the expression before it, so such a [ counts as an operator too.
	operand bool
	limit   int // MaxNesting; tests lift it to measure
	max     int // the deepest it went
	// badByte is set when scan stopped at a byte that is not UTF-8, in
	// code: HCL's lexer reads some such lead bytes together with the byte
	// after them, a quote or a brace included, so past one nothing can
	// read the file as the parser will. In a heredoc such a byte makes
	// the lexer see a marker where there is none. (In quoted strings and
	// comments the lexer reads them one by one, and they are no matter.)
	badByte bool
}

// push opens a frame, and reports false when that nests too deep.
func (s *nestScanner) push(f nestFrame) bool {
	s.stack = append(s.stack, f)
	s.depth++
	s.max = max(s.max, s.depth)
	return s.depth <= s.limit
}

func (s *nestScanner) pop() {
	top := s.stack[len(s.stack)-1]
	s.depth -= 1 + top.ops
	s.stack = s.stack[:len(s.stack)-1]
}

func (s *nestScanner) top() *nestFrame { return &s.stack[len(s.stack)-1] }

// op counts an operator in the current expression.
func (s *nestScanner) op() bool {
	s.top().ops++
	s.depth++
	s.max = max(s.max, s.depth)
	return s.depth <= s.limit
}

// separate ends the current expression (a comma, or a newline where
// newlines end items): its operators no longer nest what follows.
func (s *nestScanner) separate() {
	t := s.top()
	s.depth -= t.ops
	t.ops = 0
}

// scan reads s.src in mode starting at depth levels already used, and
// returns the offset where it first nests past MaxNesting, or -1.
func (s *nestScanner) scan(mode scanMode, depth int) int {
	kind := frameTop
	if mode == scanTemplate {
		kind = frameBare
	}
	s.stack = append(s.stack[:0], nestFrame{kind: kind})
	s.depth = depth
	src := s.src
	lastClose := bytes.LastIndex(src, []byte("*/")) // a /* before it is a comment
	for i := 0; i < len(src); {
		f := s.top()
		switch f.kind {
		case frameQuoted, frameHeredoc, frameBare:
			c := src[i]
			if f.kind == frameHeredoc {
				if f.lineStart {
					// A line that is the marker alone (spaces aside) ends it.
					end := bytes.IndexByte(src[i:], '\n')
					if end >= 0 && bytes.Equal(bytes.TrimSpace(src[i:i+end]), f.tag) {
						s.pop()
						s.operand = true
						i += end // the newline ends the attribute, in code
						continue
					}
				}
				f.lineStart = c == '\n'
				if c >= utf8.RuneSelf {
					// The lexer skips such a byte without ending the
					// line's start, so that "\xffEOT" ends the heredoc.
					if r, size := utf8.DecodeRune(src[i:]); r == utf8.RuneError && size <= 1 {
						s.badByte = true
						return i
					}
				}
			}
			switch {
			case c == '\\' && f.kind == frameQuoted:
				i += 2 // an escape: the next byte is literal
			case c == '"' && f.kind == frameQuoted:
				s.pop()
				s.operand = true
				i++
			case (c == '$' || c == '%') && i+1 < len(src) && src[i+1] == c && i+2 < len(src) && src[i+2] == '{':
				i += 3 // $${ and %%{ are literal
			case (c == '$' || c == '%') && i+1 < len(src) && src[i+1] == '{':
				if !s.push(nestFrame{kind: frameInterp}) {
					return i
				}
				i += 2
			default:
				i++
			}
		default: // code
			c := src[i]
			operand := s.operand
			s.operand = false
			switch {
			case c == ' ' || c == '\t' || c == '\r':
				s.operand = operand
				i++
			case c == '\n':
				if f.kind == frameBrace || f.kind == frameTop {
					s.separate()
				}
				s.operand = operand
				i++
			case c == ',':
				s.separate()
				i++
			case c == '#' || c == '/' && i+1 < len(src) && src[i+1] == '/':
				end := bytes.IndexByte(src[i:], '\n')
				if end < 0 {
					return -1
				}
				s.operand = operand // a comment is not there for the parser
				i += end            // the newline is read as one
			case c == '/' && i+1 < len(src) && src[i+1] == '*' && lastClose >= i+2:
				// (Unterminated, it is two operators to the lexer.)
				s.operand = operand
				i += 2 + bytes.Index(src[i+2:], []byte("*/")) + 2
			case c == '"':
				if !s.push(nestFrame{kind: frameQuoted}) {
					return i
				}
				i++
			case c == '<' && i+1 < len(src) && src[i+1] == '<':
				if tag, n := heredocStart(src[i:]); n > 0 {
					if !s.push(nestFrame{kind: frameHeredoc, tag: tag, lineStart: true}) {
						return i
					}
					i += n
					continue
				}
				if !s.op() {
					return i
				}
				i++
			case c == '(' || c == '[' || c == '{':
				k := frameParen
				if c == '[' {
					k = frameBrack
					if operand && !s.op() {
						return i
					}
				} else if c == '{' {
					k = frameBrace
				}
				if !s.push(nestFrame{kind: k}) {
					return i
				}
				i++
			case c == ')' || c == ']':
				want := frameParen
				if c == ']' {
					want = frameBrack
				}
				if f.kind == want {
					s.pop()
				}
				s.operand = true
				i++
			case c == '}':
				// As the lexer does: a } closes the innermost brace or
				// ${ sequence, whatever parentheses were left open in it.
				for k := len(s.stack) - 1; k > 0; k-- {
					if kind := s.stack[k].kind; kind == frameBrace || kind == frameInterp {
						for len(s.stack) > k {
							s.pop()
						}
						break
					}
				}
				s.operand = true
				i++
			case isIdentStart(c) || c >= utf8.RuneSelf:
				if r, size := utf8.DecodeRune(src[i:]); r == utf8.RuneError && size <= 1 {
					s.badByte = true
					return i
				}
				if n := identLen(src[i:]); n > 0 {
					s.operand = true
					i += n
				} else {
					_, size := utf8.DecodeRune(src[i:])
					i += size // a character the lexer reads alone
				}
			case c >= '0' && c <= '9':
				s.operand = true
				i += numberLen(src[i:])
			case c == '=' || c == '!' || c == '<' || c == '>':
				// ==, !=, <=, >= and => are one token; = and => nest nothing.
				two := i+1 < len(src) && (src[i+1] == '=' || c == '=' && src[i+1] == '>')
				if c != '=' || two && src[i+1] == '=' {
					if !s.op() {
						return i
					}
				}
				i++
				if two {
					i++
				}
			case c == '&' || c == '|':
				if !s.op() {
					return i
				}
				i++
				if i < len(src) && src[i] == c {
					i++
				}
			case c == '+' || c == '-' || c == '*' || c == '%' || c == '/' || c == '?':
				if !s.op() {
					return i
				}
				i++
			default:
				i++
			}
		}
	}
	return -1
}

// heredocStart reads <<EOT or <<-EOT and its newline at the start of b,
// returning the marker and the length read; 0 when b does not start one.
func heredocStart(b []byte) ([]byte, int) {
	i := 2
	if i < len(b) && b[i] == '-' {
		i++
	}
	n := identLen(b[i:])
	if n == 0 {
		return nil, 0
	}
	tag := b[i : i+n]
	i += n
	if i < len(b) && b[i] == '\r' {
		i++
	}
	if i >= len(b) || b[i] != '\n' {
		return nil, 0
	}
	return tag, i + 1
}

func isIdentStart(c byte) bool {
	return c == '_' || c|0x20 >= 'a' && c|0x20 <= 'z'
}

// identLen is the length of the identifier at the start of b: a letter or
// _, then letters, digits, _, - and combining marks, as the lexer's
// ID_Start and ID_Continue (Unicode letters standing for ID_Start); 0 when
// b does not start one. A character that starts none is a token of its
// own for the lexer, so a - after it is an operator.
func identLen(b []byte) int {
	i := 0
	for i < len(b) {
		c := b[i]
		if c < utf8.RuneSelf {
			if isIdentStart(c) || i > 0 && (c >= '0' && c <= '9' || c == '-') {
				i++
				continue
			}
			break
		}
		r, size := utf8.DecodeRune(b[i:])
		if unicode.IsLetter(r) || unicode.Is(unicode.Nl, r) ||
			i > 0 && (unicode.In(r, unicode.Mn, unicode.Mc, unicode.Nd, unicode.Pc)) {
			i += size
			continue
		}
		break
	}
	return i
}

// numberLen is the length of the number at the start of b, as the lexer
// reads one: a digit, then digits, dots and exponents (e, an optional
// sign and a digit: 1e-5 is one token, 1e+x is not), not ending in a dot.
func numberLen(b []byte) int {
	digit := func(i int) bool { return i < len(b) && b[i] >= '0' && b[i] <= '9' }
	end, i := 1, 1 // the first byte is a digit
	for i < len(b) {
		switch c := b[i]; {
		case digit(i):
			i++
			end = i
		case c == '.':
			i++
		case c == 'e' || c == 'E':
			j := i + 1
			if j < len(b) && (b[j] == '+' || b[j] == '-') {
				j++
			}
			if !digit(j) {
				return end
			}
			i = j + 1
			end = i
		default:
			return end
		}
	}
	return end
}

// checkJSONNesting checks a file of HCL's JSON syntax: its arrays and
// objects, and every string in it as the expression or template HCL may
// read it as (a variable's type, a traversal, a template), counted from
// the depth the string sits at.
func checkJSONNesting(src []byte, filename string) hcl.Diagnostics {
	depth := 0
	s := nestScanner{limit: MaxNesting}
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '[', '{':
			depth++
			if depth > MaxNesting {
				return nestingDiag(src, filename, i)
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		case '"':
			end := i + 1
			escaped := false
			for ; end < len(src); end++ {
				if src[end] == '\\' {
					escaped = true
					end++
					continue
				}
				if src[end] == '"' {
					break
				}
			}
			if end >= len(src) {
				return nil // unterminated: the parser says so
			}
			raw := src[i : end+1]
			// Every level takes a byte at least: a shorter string
			// cannot reach the limit.
			if len(raw) > MaxNesting-depth {
				str := raw[1 : len(raw)-1]
				// HCL decodes every string with encoding/json, which
				// reads a byte that is not UTF-8 as U+FFFD: decode
				// those too, so the scan reads what HCL will.
				if escaped || !utf8.Valid(str) {
					var dec string
					if json.Unmarshal(raw, &dec) != nil {
						return nil // the parser says what is wrong
					}
					str = []byte(dec)
				}
				for _, mode := range []scanMode{scanConfig, scanTemplate} {
					s.src = str
					if s.scan(mode, depth) >= 0 {
						return nestingDiag(src, filename, i)
					}
				}
			}
			i = end
		}
	}
	return nil
}
