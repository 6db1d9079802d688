package config

import (
	"strconv"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// fastParse parses src, a native-syntax file or a piece of one starting at
// start, when it is written in the plain subset that large generated
// configurations are made of, and returns the body hclsyntax.ParseConfig
// would: the same nodes with the same values and ranges. For anything
// else it returns false, and the caller parses src with hclsyntax.
//
// What it buys: hclsyntax lexes the whole source into tokens first (about
// 100 bytes each, in a slice it regrows) and counts every column in
// grapheme clusters; a configuration of 10,000 blocks then spends most of
// its load time, and makes most of its garbage, in the lexer. Here the
// source is ASCII, so a column is a byte, and the nodes are built straight
// from the bytes: 6 to 8 times less time and allocation. FuzzFastParse and
// TestFastParseMatchesHCL guard that every body it accepts is the one
// hclsyntax builds.
//
// The subset: ASCII without control characters other than tab and
// newline; no comments; blocks with identifier or plain quoted labels,
// their body on the lines after "{"; attributes whose value is a number, a
// boolean, null, a traversal of attribute names (a.b.c), a quoted string
// without escapes or template directives whose interpolations are such
// traversals, or a tuple of those values. No attribute appears twice in
// a body (hclsyntax reports that).
func fastParse(src []byte, name string, start hcl.Pos) (*hclsyntax.Body, bool) {
	for _, c := range src {
		if c >= 0x80 || c < ' ' && c != '\n' && c != '\t' || c == 0x7f {
			return nil, false
		}
	}
	p := &fastParser{src: src, name: name, pos: start, base: start.Byte}
	body := p.body(true, hcl.Range{})
	if p.failed {
		return nil, false
	}
	return body, true
}

// fastParser reads src from pos; a failed parse stops at the first thing
// outside the subset.
type fastParser struct {
	src    []byte
	name   string
	pos    hcl.Pos // of src[pos.Byte-base]
	base   int     // the Byte of src[0]
	failed bool
}

// at is the byte at the current position, or 0 at the end.
func (p *fastParser) at() byte {
	if i := p.pos.Byte - p.base; i < len(p.src) {
		return p.src[i]
	}
	return 0
}

// peek is the byte n after the current one, or 0 past the end.
func (p *fastParser) peek(n int) byte {
	if i := p.pos.Byte - p.base + n; i < len(p.src) {
		return p.src[i]
	}
	return 0
}

// next moves past the current byte.
func (p *fastParser) next() {
	if p.at() == '\n' {
		p.pos.Line++
		p.pos.Column = 1
	} else {
		p.pos.Column++
	}
	p.pos.Byte++
}

// token moves past the n bytes of a token on one line and returns its range.
func (p *fastParser) token(n int) hcl.Range {
	from := p.pos
	p.pos.Column += n
	p.pos.Byte += n
	return hcl.Range{Filename: p.name, Start: from, End: p.pos}
}

func (p *fastParser) fail() { p.failed = true }

// spaces skips spaces and tabs; inBrackets, newlines too.
func (p *fastParser) spaces(inBrackets bool) {
	for {
		switch p.at() {
		case ' ', '\t':
			p.next()
		case '\n':
			if !inBrackets {
				return
			}
			p.next()
		default:
			return
		}
	}
}

func isIdentByte(c byte) bool {
	return isIdentStart(c) || c == '-' || c >= '0' && c <= '9'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// ident reads an identifier and returns it with its range.
func (p *fastParser) ident() (string, hcl.Range) {
	i := p.pos.Byte - p.base
	n := 1
	for i+n < len(p.src) && isIdentByte(p.src[i+n]) {
		n++
	}
	return string(p.src[i : i+n]), p.token(n)
}

// body reads the items of a body up to its end: the end of src at the top
// level, else the "}" after the "{" at open.
func (p *fastParser) body(top bool, open hcl.Range) *hclsyntax.Body {
	b := &hclsyntax.Body{Attributes: hclsyntax.Attributes{}, Blocks: hclsyntax.Blocks{}}
	startRange := open
	first := true
	for !p.failed {
		p.spaces(false)
		c := p.at()
		if top && first {
			// hclsyntax starts the file's body at its first token.
			startRange = p.firstTokenRange()
		}
		first = false
		switch {
		case top && p.pos.Byte-p.base == len(p.src):
			end := p.token(0)
			b.SrcRange = hcl.RangeBetween(startRange, end)
			b.EndRange = hcl.Range{Filename: p.name, Start: end.End, End: end.End}
			return b
		case !top && c == '}':
			end := p.token(1)
			b.SrcRange = hcl.RangeBetween(startRange, end)
			b.EndRange = hcl.Range{Filename: p.name, Start: end.End, End: end.End}
			return b
		case c == '\n':
			p.next()
		case isIdentStart(c):
			p.item(b)
		default:
			p.fail()
		}
	}
	return nil
}

// firstTokenRange is the range of the token at the current position, which
// is the start of a line or of the file, after blanks.
func (p *fastParser) firstTokenRange() hcl.Range {
	c := p.at()
	switch {
	case c == '\n':
		from := p.pos
		to := hcl.Pos{Line: from.Line + 1, Column: 1, Byte: from.Byte + 1}
		return hcl.Range{Filename: p.name, Start: from, End: to}
	case c == 0:
		return hcl.Range{Filename: p.name, Start: p.pos, End: p.pos}
	case isIdentStart(c):
		i := p.pos.Byte - p.base
		n := 1
		for i+n < len(p.src) && isIdentByte(p.src[i+n]) {
			n++
		}
		to := p.pos
		to.Column += n
		to.Byte += n
		return hcl.Range{Filename: p.name, Start: p.pos, End: to}
	}
	p.fail()
	return hcl.Range{}
}

// item reads an attribute or a block into b.
func (p *fastParser) item(b *hclsyntax.Body) {
	name, nameRange := p.ident()
	p.spaces(false)
	switch c := p.at(); {
	case c == '=' && p.peek(1) != '=' && p.peek(1) != '>':
		if _, dup := b.Attributes[name]; dup {
			p.fail()
			return
		}
		eq := p.token(1)
		p.spaces(false)
		expr, last := p.expr(false)
		p.spaces(false)
		if p.failed || p.at() != '\n' && p.pos.Byte-p.base != len(p.src) {
			p.fail()
			return
		}
		if p.at() == '\n' {
			p.next()
		}
		b.Attributes[name] = &hclsyntax.Attribute{
			Name:        name,
			Expr:        expr,
			SrcRange:    hcl.RangeBetween(nameRange, last),
			NameRange:   nameRange,
			EqualsRange: eq,
		}
	case c == '"' || c == '{' || isIdentStart(c):
		p.block(b, name, nameRange)
	default:
		p.fail()
	}
}

// block reads the labels and body of a block whose type was just read.
func (p *fastParser) block(b *hclsyntax.Body, typ string, typeRange hcl.Range) {
	blk := &hclsyntax.Block{Type: typ, TypeRange: typeRange}
	for !p.failed {
		switch c := p.at(); {
		case c == '{':
			blk.OpenBraceRange = p.token(1)
			p.spaces(false)
			if c := p.at(); c != '\n' && c != '}' {
				p.fail() // a one-line block
				return
			}
			blk.Body = p.body(false, blk.OpenBraceRange)
			if p.failed {
				return
			}
			blk.CloseBraceRange = hcl.Range{Filename: p.name, Start: hcl.Pos{
				Line: p.pos.Line, Column: p.pos.Column - 1, Byte: p.pos.Byte - 1}, End: p.pos}
			p.spaces(false)
			switch {
			case p.at() == '\n':
				p.next()
			case p.pos.Byte-p.base != len(p.src):
				p.fail()
				return
			}
			b.Blocks = append(b.Blocks, blk)
			return
		case c == '"':
			s, rng, ok := p.plainString()
			if !ok {
				p.fail()
				return
			}
			blk.Labels = append(blk.Labels, s)
			blk.LabelRanges = append(blk.LabelRanges, rng)
		case isIdentStart(c):
			s, rng := p.ident()
			blk.Labels = append(blk.Labels, s)
			blk.LabelRanges = append(blk.LabelRanges, rng)
		default:
			p.fail()
			return
		}
		p.spaces(false)
	}
}

// plainString reads a quoted string without escapes, interpolations or
// directives, and returns its value and the range of it with its quotes.
func (p *fastParser) plainString() (string, hcl.Range, bool) {
	i := p.pos.Byte - p.base + 1
	n := 0
	for ; i+n < len(p.src); n++ {
		switch p.src[i+n] {
		case '"':
			return string(p.src[i : i+n]), p.token(n + 2), true
		case '\\', '$', '%', '\n':
			return "", hcl.Range{}, false
		}
	}
	return "", hcl.Range{}, false
}

// expr reads an expression of the subset and returns it with the range of
// its last token. inBrackets, it is an item of a tuple.
func (p *fastParser) expr(inBrackets bool) (hclsyntax.Expression, hcl.Range) {
	c := p.at()
	switch {
	case c == '"':
		return p.template()
	case isDigit(c):
		i := p.pos.Byte - p.base
		n := 1
		for i+n < len(p.src) && isDigit(p.src[i+n]) {
			n++
		}
		if i+n < len(p.src) && p.src[i+n] == '.' {
			n++
			if i+n >= len(p.src) || !isDigit(p.src[i+n]) {
				p.fail()
				return nil, hcl.Range{}
			}
			for i+n < len(p.src) && isDigit(p.src[i+n]) {
				n++
			}
		}
		if i+n < len(p.src) && (isIdentByte(p.src[i+n]) || p.src[i+n] == '.') {
			p.fail() // an exponent, or something stranger
			return nil, hcl.Range{}
		}
		v, err := numberVal(p.src[i : i+n])
		if err != nil {
			p.fail()
			return nil, hcl.Range{}
		}
		rng := p.token(n)
		return &hclsyntax.LiteralValueExpr{Val: v, SrcRange: rng}, rng
	case isIdentStart(c):
		e := p.traversal()
		if e == nil {
			return nil, hcl.Range{}
		}
		if inBrackets && e.Traversal.RootName() == "for" {
			p.fail() // a for expression
			return nil, hcl.Range{}
		}
		return keyword(e), e.SrcRange
	case c == '[' && !inBrackets:
		return p.tuple()
	}
	p.fail()
	return nil, hcl.Range{}
}

// traversal reads name(.name)*, refusing what would continue it in
// hclsyntax (a call, an index, a splat, a keyword's traversal).
func (p *fastParser) traversal() *hclsyntax.ScopeTraversalExpr {
	name, rng := p.ident()
	e := &hclsyntax.ScopeTraversalExpr{
		Traversal: hcl.Traversal{hcl.TraverseRoot{Name: name, SrcRange: rng}},
		SrcRange:  rng,
	}
	for p.at() == '.' && isIdentStart(p.peek(1)) {
		if len(e.Traversal) == 1 && (name == "true" || name == "false" || name == "null") {
			p.fail()
			return nil
		}
		dot := p.token(1)
		attr, attrRange := p.ident()
		step := hcl.RangeBetween(dot, attrRange)
		e.Traversal = append(e.Traversal, hcl.TraverseAttr{Name: attr, SrcRange: step})
		e.SrcRange = hcl.RangeBetween(e.SrcRange, step)
	}
	switch p.at() {
	case '.', '[', '(', ':':
		p.fail()
		return nil
	}
	return e
}

// keyword is the literal a lone true, false or null stands for, else e.
func keyword(e *hclsyntax.ScopeTraversalExpr) hclsyntax.Expression {
	if len(e.Traversal) > 1 {
		return e
	}
	var v cty.Value
	switch e.Traversal.RootName() {
	case "true":
		v = cty.True
	case "false":
		v = cty.False
	case "null":
		v = cty.NullVal(cty.DynamicPseudoType)
	default:
		return e
	}
	return &hclsyntax.LiteralValueExpr{Val: v, SrcRange: e.SrcRange}
}

// template reads a quoted string whose parts are literal text and
// ${traversal} interpolations.
func (p *fastParser) template() (hclsyntax.Expression, hcl.Range) {
	open := p.token(1)
	var parts []hclsyntax.Expression
	interps := 0
	for !p.failed {
		i := p.pos.Byte - p.base
		n := 0
	lit:
		for ; i+n < len(p.src); n++ {
			switch p.src[i+n] {
			case '"', '\\', '$', '%', '\n':
				break lit
			}
		}
		if n > 0 {
			s := string(p.src[i : i+n])
			parts = append(parts, &hclsyntax.LiteralValueExpr{Val: cty.StringVal(s), SrcRange: p.token(n)})
		}
		switch p.at() {
		case '"':
			closeRange := p.token(1)
			if len(parts) == 0 {
				// hclsyntax gives "" one empty part, just after it.
				parts = append(parts, &hclsyntax.LiteralValueExpr{Val: cty.StringVal(""),
					SrcRange: hcl.Range{Filename: p.name, Start: p.pos, End: p.pos}})
			}
			rng := hcl.RangeBetween(open, closeRange)
			if len(parts) == 1 && interps == 1 {
				return &hclsyntax.TemplateWrapExpr{Wrapped: parts[0], SrcRange: rng}, closeRange
			}
			return &hclsyntax.TemplateExpr{Parts: parts, SrcRange: rng}, closeRange
		case '$':
			if p.peek(1) != '{' || p.peek(2) == '~' {
				p.fail()
				break
			}
			p.token(2)
			p.spaces(false)
			if !isIdentStart(p.at()) {
				p.fail()
				break
			}
			e := p.traversal()
			if e == nil {
				break
			}
			p.spaces(false)
			if p.at() != '}' {
				p.fail()
				break
			}
			p.token(1)
			parts = append(parts, keyword(e))
			interps++
		default:
			p.fail()
		}
	}
	return nil, hcl.Range{}
}

// tuple reads [item, item, ...], newlines allowed between its tokens.
func (p *fastParser) tuple() (hclsyntax.Expression, hcl.Range) {
	open := p.token(1)
	var exprs []hclsyntax.Expression
	for !p.failed {
		p.spaces(true)
		if p.at() == ']' {
			closeRange := p.token(1)
			return &hclsyntax.TupleConsExpr{Exprs: exprs, SrcRange: hcl.RangeBetween(open, closeRange), OpenRange: open}, closeRange
		}
		e, _ := p.expr(true)
		if p.failed {
			break
		}
		exprs = append(exprs, e)
		p.spaces(true)
		switch p.at() {
		case ',':
			p.next()
		case ']':
		default:
			p.fail()
		}
	}
	return nil, hcl.Range{}
}

// smallInts are the values of the literals 0 to 99, as cty.ParseNumberVal
// reads them: made once, and shared by every literal that writes one.
var smallInts = sync.OnceValue(func() []cty.Value {
	vals := make([]cty.Value, 100)
	for n := range vals {
		vals[n], _ = cty.ParseNumberVal(strconv.Itoa(n))
	}
	return vals
})

// numberVal is cty.ParseNumberVal(string(lit)) for a number literal. A
// generated configuration writes the same small integers in every block
// (image_number = 1), and each parsed anew is a big.Float and its digits
// held for the life of the configuration: 10,000 blocks held half a MiB of
// them. cty never changes a number's big.Float (AsBigFloat copies it), so
// one value serves them all (TestSmallNumberLiteralsShared).
func numberVal(lit []byte) (cty.Value, error) {
	switch {
	case len(lit) == 1 && isDigit(lit[0]):
		return smallInts()[lit[0]-'0'], nil
	case len(lit) == 2 && lit[0] != '0' && isDigit(lit[0]) && isDigit(lit[1]):
		return smallInts()[int(lit[0]-'0')*10+int(lit[1]-'0')], nil
	}
	return cty.ParseNumberVal(string(lit))
}
