package config

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// chunkSize is the size above which a native-syntax file is parsed in
// pieces, and about the size of a piece. hclsyntax's lexer allocates about
// 150 bytes per source byte, a good part of it in regrowing its token
// slice: the smaller the piece, the fewer the regrowths. Loading and
// expanding BenchmarkLoadExpand10kBlocks's 1.5 MB file allocates 305 MB in
// 2 KiB pieces, 371 MB in 16 KiB ones, hardly less in 1 KiB ones; in
// pieces the garbage is also freed as it goes, and the pieces parse on
// every core.
const chunkSize = 2 << 10

// lazyTreeSize is the size from which Load keeps a file's bytes rather than
// its syntax tree (see releaseSyntax).
const lazyTreeSize = 32 << 10

// parseHCL parses a native-syntax configuration file. Large files are cut
// at lines that start a top-level block, the pieces are parsed in parallel
// with their true starting positions (so every range and snippet is that
// of the whole file), and their blocks are joined in order. A cut that
// falls inside a construct (a block, a heredoc, a comment, a bracketed
// expression) leaves the piece before it unterminated, which is a syntax
// error; any error, or a top-level attribute, makes it parse the whole
// file in one piece instead, so the result and the diagnostics are always
// those of an ordinary parse.
func parseHCL(parser *hclparse.Parser, src []byte, name string) (*hcl.File, hcl.Diagnostics) {
	return parseHCLDecoding(parser, src, name, nil)
}

// parseHCLDecoding is parseHCL that, in a file Load will keep only as
// bytes (see releaseSyntax), also hands each top-level block of a piece
// to decode as soon as the piece is parsed. A block decode takes (it
// returns a body to put in place of the block's) keeps only its header
// in the tree: a large configuration's syntax trees then never all live
// at once, only what the decoded declarations keep of them.
func parseHCLDecoding(parser *hclparse.Parser, src []byte, name string, decode func(*hclsyntax.Block) *hclsyntax.Body) (*hcl.File, hcl.Diagnostics) {
	if len(src) < lazyTreeSize {
		decode = nil
	}
	cuts := cutPoints(src)
	if len(cuts) < 2 {
		if body, ok := fastParse(src, name, hcl.InitialPos); ok {
			return &hcl.File{Body: body, Bytes: src, Nav: blockNav{body}}, nil
		}
		return parser.ParseHCL(src, name)
	}
	type piece struct {
		start hcl.Pos
		end   int
		file  *hcl.File
		diags hcl.Diagnostics
	}
	pieces := make([]piece, len(cuts))
	for i, c := range cuts {
		pieces[i].start = c
		pieces[i].end = len(src)
		if i+1 < len(cuts) {
			pieces[i].end = cuts[i+1].Byte
		}
	}
	var wg sync.WaitGroup
	next := make(chan int)
	workers := min(runtime.GOMAXPROCS(0), len(pieces))
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				p := &pieces[i]
				if body, ok := fastParse(src[p.start.Byte:p.end], name, p.start); ok {
					if decode != nil {
						for _, b := range body.Blocks {
							if stub := decode(b); stub != nil {
								b.Body = stub
							}
						}
					}
					p.file = &hcl.File{Body: body}
					continue
				}
				p.file, p.diags = hclsyntax.ParseConfig(src[p.start.Byte:p.end], name, p.start)
			}
		}()
	}
	for i := range pieces {
		next <- i
	}
	close(next)
	wg.Wait()

	body := &hclsyntax.Body{Attributes: hclsyntax.Attributes{}}
	for _, p := range pieces {
		b, ok := p.file.Body.(*hclsyntax.Body)
		if len(p.diags) > 0 || !ok || len(b.Attributes) > 0 {
			return parser.ParseHCL(src, name)
		}
		body.Blocks = append(body.Blocks, b.Blocks...)
		body.EndRange = b.EndRange
	}
	first := pieces[0].file.Body.(*hclsyntax.Body)
	last := pieces[len(pieces)-1].file.Body.(*hclsyntax.Body)
	body.SrcRange = hcl.RangeBetween(first.SrcRange, last.SrcRange)
	return &hcl.File{Body: body, Bytes: src, Nav: blockNav{body}}, nil
}

// cutPoints returns where to cut src: the start of the file, then the
// starts of lines that begin with a letter or underscore and follow a line
// that is just "}" (blank lines between allowed) — where one top-level
// block ends and the next begins in formatted files — at least chunkSize
// apart. Requiring the "}" keeps cuts out of heredoc prompts and comments,
// whose lines often start with a letter. A file smaller than two chunks is
// not cut.
func cutPoints(src []byte) []hcl.Pos {
	if len(src) < 2*chunkSize {
		return nil
	}
	cuts := []hcl.Pos{hcl.InitialPos}
	line, last := 1, 0
	afterClose := false // the last non-blank line is "}"
	for start := 0; start < len(src); line++ {
		end := len(src)
		if nl := bytes.IndexByte(src[start:], '\n'); nl >= 0 {
			end = start + nl
		}
		text := bytes.TrimRight(src[start:end], " \t\r")
		if c := src[start]; afterClose && start-last >= chunkSize && (c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z')) {
			cuts = append(cuts, hcl.Pos{Line: line, Column: 1, Byte: start})
			last = start
		}
		if len(text) > 0 {
			afterClose = len(text) == 1 && text[0] == '}'
		}
		start = end + 1
	}
	return cuts
}

// blockNav gives diagnostics the "in image "hero"" context of an offset,
// as hclsyntax's own navigation does for a file parsed in one piece.
type blockNav struct{ body *hclsyntax.Body }

// ContextString names the top-level block containing offset.
func (n blockNav) ContextString(offset int) string {
	b := n.block(offset)
	if b == nil {
		return ""
	}
	s := b.Type
	for _, l := range b.Labels {
		s += fmt.Sprintf(" %q", l)
	}
	return s
}

// ContextDefRange is the header range of the top-level block containing
// offset.
func (n blockNav) ContextDefRange(offset int) hcl.Range {
	if b := n.block(offset); b != nil {
		return b.DefRange()
	}
	return hcl.Range{}
}

func (n blockNav) block(offset int) *hclsyntax.Block {
	for _, b := range n.body.Blocks {
		if b.Range().ContainsOffset(offset) {
			return b
		}
	}
	return nil
}

// releaseSyntax replaces each large native-syntax configuration file by
// its bytes and a syntax tree parsed again on first use. The tree costs
// about twenty times the source (10,000 blocks: 17 MB) and, once the blocks
// are decoded, only printing a diagnostic (Nav) or a caller reading Body
// needs it; the expressions the declarations hold stay.
func (c *Config) releaseSyntax() {
	for name, f := range c.Files {
		if !strings.HasSuffix(name, SuffixHCL) || len(f.Bytes) < lazyTreeSize {
			continue // small, or HCL JSON
		}
		r := &reparse{name: name, src: f.Bytes}
		c.Files[name] = &hcl.File{Body: lazyBody{r}, Bytes: f.Bytes, Nav: lazyNav{r}}
	}
}

// reparse parses a file again, once, when its tree is asked for.
type reparse struct {
	name string
	src  []byte
	once sync.Once
	file *hcl.File
}

func (r *reparse) parsed() *hcl.File {
	r.once.Do(func() {
		// It parsed without errors before, so it does again.
		r.file, _ = parseHCL(hclparse.NewParser(), r.src, r.name)
	})
	return r.file
}

// lazyBody is the hcl.Body of a reparse.
type lazyBody struct{ r *reparse }

// Content implements hcl.Body.
func (b lazyBody) Content(schema *hcl.BodySchema) (*hcl.BodyContent, hcl.Diagnostics) {
	return b.r.parsed().Body.Content(schema)
}

// PartialContent implements hcl.Body.
func (b lazyBody) PartialContent(schema *hcl.BodySchema) (*hcl.BodyContent, hcl.Body, hcl.Diagnostics) {
	return b.r.parsed().Body.PartialContent(schema)
}

// JustAttributes implements hcl.Body.
func (b lazyBody) JustAttributes() (hcl.Attributes, hcl.Diagnostics) {
	return b.r.parsed().Body.JustAttributes()
}

// MissingItemRange implements hcl.Body.
func (b lazyBody) MissingItemRange() hcl.Range {
	return b.r.parsed().Body.MissingItemRange()
}

// navigator is what hcl.File.Nav offers diagnostics writers.
type navigator interface {
	ContextString(offset int) string
	ContextDefRange(offset int) hcl.Range
}

// lazyNav is the Nav of a reparse.
type lazyNav struct{ r *reparse }

// ContextString names the top-level block containing offset.
func (n lazyNav) ContextString(offset int) string {
	if nav, ok := n.r.parsed().Nav.(navigator); ok {
		return nav.ContextString(offset)
	}
	return ""
}

// ContextDefRange is the header range of the top-level block containing
// offset.
func (n lazyNav) ContextDefRange(offset int) hcl.Range {
	if nav, ok := n.r.parsed().Nav.(navigator); ok {
		return nav.ContextDefRange(offset)
	}
	return hcl.Range{}
}
