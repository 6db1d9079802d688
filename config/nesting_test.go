package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/genform/genform/internal/dirtest"
)

// nested writes an expression nested n levels deep of the given kind.
func nested(kind string, n int) string {
	switch kind {
	case "parentheses":
		return strings.Repeat("(", n) + "1" + strings.Repeat(")", n)
	case "lists":
		return strings.Repeat("[", n) + "1" + strings.Repeat("]", n)
	case "objects":
		return strings.Repeat("{a=", n) + "1" + strings.Repeat("}", n)
	case "operators":
		return strings.Repeat("1+", n) + "1"
	case "negations":
		return strings.Repeat("!", n) + "true"
	case "conditionals":
		return strings.Repeat("true ? 1 : ", n) + "1"
	case "indexes":
		return "local.l" + strings.Repeat("[local.i]", n)
	case "templates":
		// Each level is a string and its ${...}: two levels.
		return strings.Repeat(`"${`, n/2) + `"x"` + strings.Repeat(`}"`, n/2)
	case "heredocs":
		return strings.Repeat("<<E\n${", n/2) + `"x"` + strings.Repeat("}\nE\n", n/2)
	}
	panic(kind)
}

var nestKinds = []string{"parentheses", "lists", "objects", "operators", "negations", "conditionals", "indexes", "templates", "heredocs"}

// TestNestingLimit: every way of nesting an expression is refused past
// MaxNesting, with a diagnostic at the line where the limit is crossed,
// and accepted well within it. The file nests inside a locals block (one
// level), so an expression of MaxNesting-2 levels is the deepest that
// passes whatever way it is written.
func TestNestingLimit(t *testing.T) {
	for _, kind := range nestKinds {
		t.Run(kind, func(t *testing.T) {
			ok := "locals {\n  i = 0\n  l = [1]\n  x = " + nested(kind, MaxNesting-4) + "\n}\n"
			// (An index of a one-element list fails when evaluated,
			// after parsing: only the nesting matters here.)
			if _, diags := loadTest(dirtest.New(t, map[string]string{"main.gen.hcl": ok}), Options{}); strings.Contains(diagList(diags), "nested too deeply") || kind != "indexes" && diags.HasErrors() {
				t.Fatalf("%d levels refused: %s", MaxNesting-4, diagList(diags))
			}
			deep := "locals {\n  i = 0\n  l = [1]\n  x = " + nested(kind, 100_000) + "\n}\n"
			_, diags := loadTest(dirtest.New(t, map[string]string{"main.gen.hcl": deep}), Options{})
			if len(diags) != 1 || diags[0].Summary != "Expression nested too deeply" {
				t.Fatalf("100,000 levels: got %s", diagList(diags))
			}
			if s := diags[0].Subject; s == nil || s.Filename != "main.gen.hcl" || s.Start.Line < 4 {
				t.Errorf("diagnostic at %v, want main.gen.hcl from line 4", s)
			}
		})
	}
}

// TestNestingElsewhere: the other texts a parser reads are checked too: a
// file of HCL's JSON syntax (its arrays, and the expressions and templates
// in its strings), a variables file, a -var value parsed as an
// expression, and templatefile's template.
func TestNestingElsewhere(t *testing.T) {
	deepParens := nested("parentheses", 50_000)
	deepTemplate := strings.Repeat("${(", 50_000) + "1" + strings.Repeat(")}", 50_000)
	tests := []struct {
		name  string
		files map[string]string
		opts  Options
		want  string // a substring of the error
	}{
		{
			name:  "JSON arrays",
			files: map[string]string{"main.gen.json": `{"locals": {"x": ` + strings.Repeat("[", 50_000) + strings.Repeat("]", 50_000) + `}}`},
			want:  "Expression nested too deeply",
		},
		{
			name:  "a JSON string read as a template",
			files: map[string]string{"main.gen.json": `{"locals": {"x": "` + deepTemplate + `"}}`},
			want:  "Expression nested too deeply",
		},
		{
			name:  "a JSON string read as an expression",
			files: map[string]string{"main.gen.json": `{"variable": {"v": {"type": "` + strings.Repeat("list(", 50_000) + "string" + strings.Repeat(")", 50_000) + `"}}}`},
			want:  "Expression nested too deeply",
		},
		{
			name: "a variables file",
			files: map[string]string{
				"main.gen.hcl":  "variable \"v\" {\n  type = any\n}\n",
				"x.genvars.hcl": "v = " + deepParens + "\n",
			},
			opts: Options{VarFiles: []string{"x.genvars.hcl"}},
			want: "Expression nested too deeply",
		},
		{
			name:  "a -var value",
			files: map[string]string{"main.gen.hcl": "variable \"v\" {\n  type = any\n}\n"},
			opts:  Options{Vars: []string{"v=" + deepParens}},
			want:  "Expression nested too deeply",
		},
		{
			name: "a template file",
			files: map[string]string{
				"main.gen.hcl": "locals {\n  x = templatefile(\"t.tmpl\", {})\n}\n",
				"t.tmpl":       deepTemplate,
			},
			want: "nested more than 256 levels",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := loadTest(dirtest.New(t, tt.files), tt.opts)
			if !diags.HasErrors() || !strings.Contains(diagList(diags), tt.want) {
				t.Fatalf("got %s, want an error saying %q", diagList(diags), tt.want)
			}
		})
	}
}

// lexerDepth measures src as the scanner does, from hclsyntax's own
// tokens: the reference the scanner must never count below.
func lexerDepth(src []byte, mode scanMode) int {
	var toks hclsyntax.Tokens
	if mode == scanTemplate {
		toks, _ = hclsyntax.LexTemplate(src, "", hcl.InitialPos)
	} else {
		toks, _ = hclsyntax.LexConfig(src, "", hcl.InitialPos)
	}
	type frame struct {
		kind hclsyntax.TokenType
		ops  int
	}
	stack := []frame{{kind: hclsyntax.TokenNil}}
	depth, deepest := 0, 0
	operand := false
	up := func(n int) {
		depth += n
		deepest = max(deepest, depth)
	}
	pop := func() {
		depth -= 1 + stack[len(stack)-1].ops
		stack = stack[:len(stack)-1]
	}
	separate := func() {
		top := &stack[len(stack)-1]
		depth -= top.ops
		top.ops = 0
	}
	op := func() {
		stack[len(stack)-1].ops++
		up(1)
	}
	for _, tok := range toks {
		wasOperand := operand
		operand = false
		switch tok.Type {
		case hclsyntax.TokenOParen, hclsyntax.TokenOBrack, hclsyntax.TokenOBrace, hclsyntax.TokenOQuote, hclsyntax.TokenOHeredoc:
			if tok.Type == hclsyntax.TokenOBrack && wasOperand {
				op()
			}
			stack = append(stack, frame{kind: tok.Type})
			up(1)
		case hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl:
			stack = append(stack, frame{kind: hclsyntax.TokenTemplateInterp})
			up(1)
		case hclsyntax.TokenCParen, hclsyntax.TokenCBrack:
			want := hclsyntax.TokenOParen
			if tok.Type == hclsyntax.TokenCBrack {
				want = hclsyntax.TokenOBrack
			}
			if len(stack) > 1 && stack[len(stack)-1].kind == want {
				pop()
			}
			operand = true
		case hclsyntax.TokenCQuote, hclsyntax.TokenCHeredoc:
			if len(stack) > 1 {
				pop()
			}
			operand = true
		case hclsyntax.TokenCBrace, hclsyntax.TokenTemplateSeqEnd:
			for k := len(stack) - 1; k > 0; k-- {
				if kind := stack[k].kind; kind == hclsyntax.TokenOBrace || kind == hclsyntax.TokenTemplateInterp {
					for len(stack) > k {
						pop()
					}
					break
				}
			}
			operand = true
		case hclsyntax.TokenIdent, hclsyntax.TokenNumberLit:
			operand = true
		case hclsyntax.TokenNewline, hclsyntax.TokenComment:
			if k := stack[len(stack)-1].kind; k == hclsyntax.TokenOBrace || k == hclsyntax.TokenNil {
				if tok.Type == hclsyntax.TokenNewline || strings.HasSuffix(string(tok.Bytes), "\n") {
					separate()
				}
			}
			operand = wasOperand
		case hclsyntax.TokenComma:
			separate()
		case hclsyntax.TokenPlus, hclsyntax.TokenMinus, hclsyntax.TokenStar, hclsyntax.TokenSlash, hclsyntax.TokenPercent,
			hclsyntax.TokenEqualOp, hclsyntax.TokenNotEqual, hclsyntax.TokenLessThan, hclsyntax.TokenLessThanEq,
			hclsyntax.TokenGreaterThan, hclsyntax.TokenGreaterThanEq, hclsyntax.TokenAnd, hclsyntax.TokenOr,
			hclsyntax.TokenBang, hclsyntax.TokenQuestion, hclsyntax.TokenBitwiseAnd, hclsyntax.TokenBitwiseOr:
			op()
		}
	}
	return deepest
}

// scannerDepth is how deep the scanner finds src, without a limit.
func scannerDepth(src []byte, mode scanMode) int {
	s := nestScanner{src: src, limit: 1 << 30}
	s.scan(mode, 0)
	return s.max
}

// nestingCorpus is every configuration, variables file and template of
// the repository: what real files look like.
func nestingCorpus(t testing.TB) map[string][]byte {
	t.Helper()
	corpus := map[string][]byte{}
	for _, root := range []string{"testdata", filepath.Join("..", "examples"), filepath.Join("..", "testdata")} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if strings.HasSuffix(path, SuffixHCL) || strings.HasSuffix(path, SuffixVarFile) || strings.HasSuffix(path, ".txtar") || strings.HasSuffix(path, ".tmpl") {
				src, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				corpus[path] = src
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return corpus
}

// TestNestingMatchesLexer: on every file of the repository the scanner
// measures the same depth as the same rules applied to hclsyntax's tokens,
// so its reading of strings, heredocs, templates and comments is the
// lexer's; and no file comes near the limit.
func TestNestingMatchesLexer(t *testing.T) {
	corpus := nestingCorpus(t)
	if len(corpus) < 50 {
		t.Fatalf("only %d files found", len(corpus))
	}
	for path, src := range corpus {
		mode := scanConfig
		if strings.HasSuffix(path, ".tmpl") {
			mode = scanTemplate
		}
		got, want := scannerDepth(src, mode), lexerDepth(src, mode)
		if strings.HasSuffix(path, ".txtar") {
			// A script holds shell lines and files together: only never
			// fewer is promised for what is not one configuration.
			if got < want {
				t.Errorf("%s: scanner depth %d, lexer depth %d", path, got, want)
			}
			continue
		}
		if got != want {
			t.Errorf("%s: scanner depth %d, lexer depth %d", path, got, want)
		}
		if got > MaxNesting/4 {
			t.Errorf("%s: depth %d, near the limit of %d", path, got, MaxNesting)
		}
	}
}

// FuzzNesting: whatever the input, the scanner never measures less than
// the lexer's tokens show, so no input nests past the limit unseen.
func FuzzNesting(f *testing.F) {
	for _, src := range nestingCorpus(f) {
		f.Add(src, false)
	}
	for _, kind := range nestKinds {
		f.Add([]byte(nested(kind, 20)), false)
		f.Add([]byte(nested(kind, 20)), true)
	}
	f.Add([]byte("x = <<-EOT\n  ${a(\n  EOT\n  b}\nEOT\ny = [\"${\"\\\"}\"}\"]"), false)
	f.Add([]byte("x = \xd5\"(((\""), false)
	f.Fuzz(func(t *testing.T, src []byte, template bool) {
		mode := scanConfig
		if template {
			mode = scanTemplate
		}
		s := nestScanner{src: src, limit: 1 << 30}
		if s.scan(mode, 0) >= 0 && s.badByte {
			return // refused (TestNestingRefusesBadEncoding)
		}
		if got, want := s.max, lexerDepth(src, mode); got < want {
			t.Fatalf("scanner depth %d, lexer depth %d", got, want)
		}
	})
}

// BenchmarkCheckNesting10kBlocks measures the scan every load makes, on
// BenchmarkLoadExpand10kBlocks's file.
func BenchmarkCheckNesting10kBlocks(b *testing.B) {
	src, err := os.ReadFile(filepath.Join(benchDir(b, 10_000, false), "main.gen.hcl"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if d := CheckNesting(src, "main.gen.hcl"); d != nil {
			b.Fatal(d)
		}
	}
}

// TestNestingRefusesBadEncoding: HCL's lexer reads some bytes that are not
// UTF-8 together with the byte after them, a quote included, so past one
// the scanner would not read what the parser reads; a file with one in
// code or a heredoc is refused, at the byte, before either does. Where
// HCL takes such a byte (a comment, a JSON string), genform does too.
func TestNestingRefusesBadEncoding(t *testing.T) {
	src := "locals {\n  x = \xd5\"" + strings.Repeat("(", 100_000) + "\n}\n"
	_, diags := loadTest(dirtest.New(t, map[string]string{"main.gen.hcl": src}), Options{})
	if len(diags) != 1 || diags[0].Summary != "Invalid character encoding" || diags[0].Subject.Start.Line != 2 || diags[0].Subject.Start.Column != 7 {
		t.Fatalf("got %s, want one encoding error at 2:7", diagList(diags))
	}
	// In a comment or a string, where the lexer reads bytes one by one,
	// such a byte is left to the parser: a Latin-1 comment still loads.
	mustLoad(t, "# caf\xe9\nlocals {\n  x = 1 # \xd5\"\n}\n", Options{})

	// In a heredoc the lexer would see its marker in "\xffEOT".
	src = "locals {\n  x = <<EOT\n\xffEOT\n" + strings.Repeat("(", 100_000) + "\nEOT\n}\n"
	c, diags := loadTest(dirtest.New(t, map[string]string{"main.gen.hcl": src}), Options{})
	if len(diags) != 1 || diags[0].Summary != "Invalid character encoding" || diags[0].Subject.Start.Line != 3 {
		t.Fatalf("got %s, want one encoding error on line 3", diagList(diags))
	}
	if c.Files["main.gen.hcl"] == nil {
		t.Fatal("the refused file is not kept for the diagnostic's snippet")
	}

	// HCL's JSON parser decodes strings with encoding/json, which reads
	// such a byte as U+FFFD; a string long enough to be scanned loads.
	long := strings.Repeat("a", 2*MaxNesting)
	dir := dirtest.New(t, map[string]string{"main.gen.json": `{"locals": {"x": "caf` + "\xe9 " + long + `"}}`})
	if _, diags := loadTest(dir, Options{}); diags.HasErrors() {
		t.Fatalf("Load: %s", diagList(diags))
	}
}
