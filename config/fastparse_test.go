package config

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// sameAST compares syntax trees field by field, unexported fields too, and
// values with cty's exact equality.
var sameAST = []cmp.Option{
	cmp.Exporter(func(reflect.Type) bool { return true }),
	cmp.Comparer(func(a, b cty.Value) bool { return a.RawEquals(b) }),
}

// checkFastParse parses src both ways when the fast path accepts it, and
// fails the test unless the two bodies are one. It reports whether the
// fast path accepted src.
func checkFastParse(t testing.TB, src []byte, start hcl.Pos) bool {
	t.Helper()
	got, ok := fastParse(src, "f.gen.hcl", start)
	if !ok {
		return false
	}
	want, diags := hclsyntax.ParseConfig(src, "f.gen.hcl", start)
	if diags.HasErrors() {
		t.Fatalf("the fast path accepted what hclsyntax refuses (%s):\n%s", diags.Error(), src)
	}
	if d := cmp.Diff(want.Body, got, sameAST...); d != "" {
		t.Fatalf("the fast path's tree differs from hclsyntax's (-hclsyntax +fast):\n%s\nsource:\n%s", d, src)
	}
	return true
}

// The shapes large configurations are generated in take the fast path and
// give hclsyntax's tree, at the start of a file and as a later piece.
func TestFastParseMatchesHCL(t *testing.T) {
	accepted := []string{
		"",
		"\n\n",
		"image \"i00001\" {\n  prompt       = \"picture number 1\"\n  image_number = 1\n}\n",
		"image \"a\" {\n  prompt = \"p\"\n}\n\nimage \"b\" {\n  prompt = \"q\"\n  depends_on = [image.a]\n}",
		"  \n\timage a {\n}\n",
		"image \"a\" {}\n",
		"locals {\n  keys = [\n    \"k00000\",\n    \"k00001\",\n  ]\n  n = 1.5\n  t = true\n  f = false\n  z = null\n  e = []\n  l = [1, 2,3]\n}\n",
		"image \"sku\" {\n  for_each = toset(local.keys)\n  prompt   = \"Product ${each.key}, ${ each.value.name } shot\"\n}\n",
		"image \"sku\" {\n  for_each = local.keys\n  prompt   = \"${each.key}\"\n  a = \"${each.key}${each.value}\"\n  b = \"\"\n  c = \"x${a}\"\n}\n",
		"genform {\n  state_file = \"s.db\"\n  backend \"pg\" {\n    conn_str = var.x\n  }\n}\nservice {\n  parallelism = 8\n}\n",
		"image \"a\" {\n  lifecycle {\n    ignore_changes = [seed, prompt]\n  }\n  prompt = \"50% off at $5\"\n}\n",
		"x \"a\" b \"c\" {\n  d-e = f_g.h-i\n}\n",
	}
	for _, src := range accepted {
		for _, start := range []hcl.Pos{hcl.InitialPos, {Line: 40, Column: 1, Byte: 1234}} {
			if !checkFastParse(t, []byte(src), start) {
				// Only the two that hold a call or an odd literal may
				// fall back; the rest are the point of the fast path.
				if !strings.Contains(src, "toset(") && !strings.Contains(src, "% off") {
					t.Errorf("fell back on:\n%s", src)
				}
			}
		}
	}
}

// Everything outside the subset falls back to hclsyntax, valid or not.
func TestFastParseRefusesTheRest(t *testing.T) {
	refused := []string{
		"# comment\nimage \"a\" {\n}\n",
		"image \"a\" {\n  prompt = \"a\" // why\n}\n",
		"image \"a\" {\n  prompt = \"line\\n\"\n}\n",
		"image \"a\" {\n  prompt = <<EOT\nx\nEOT\n}\n",
		"image \"a\" {\n  prompt = upper(\"x\")\n}\n",
		"image \"a\" {\n  seed = 1 + 2\n}\n",
		"image \"a\" {\n  seed = -1\n}\n",
		"image \"a\" {\n  seed = 1e3\n}\n",
		"image \"a\" {\n  x = a[0]\n}\n",
		"image \"a\" {\n  x = a.*.b\n}\n",
		"image \"a\" {\n  x = a.0\n}\n",
		"image \"a\" {\n  x = true.y\n}\n",
		"image \"a\" {\n  x = { a = 1 }\n}\n",
		"image \"a\" {\n  x = [for k in a: k]\n}\n",
		"image \"a\" {\n  x = c ? 1 : 2\n}\n",
		"image \"a\" {\n  x = \"%{if a}b%{endif}\"\n}\n",
		"image \"a\" {\n  x = \"$${a}\"\n}\n",
		"image \"a\" {\n  x = \"${~a}\"\n}\n",
		"image \"a\" {\n  x = \"${a + 1}\"\n}\n",
		"image \"a\" { prompt = \"x\" }\n",
		"image \"a\" {\n  prompt = \"x\"\n  prompt = \"y\"\n}\n",
		"image \"a\" {\r\n}\r\n",
		"image \"é\" {\n}\n",
		"image \"a\" {\n  prompt = \"x\"\n",
		"image \"a\" {\n  prompt = \"x\n}\n",
		"image \"a\" {\n  prompt == \"x\"\n}\n",
		"image \"a\" {\n  prompt = \"x\" \"y\"\n}\n",
		"image \"a\" {\n  prompt = \n}\n",
		"image \"a\" {\n}\nimage \"b\" {\n} image \"c\" {\n}\n",
		"image \"a\" = {\n}\n",
		"\"a\" {\n}\n",
		"image \"a\" {\n  l = [1 2]\n}\n",
		"image \"a\" {\n  l = [[1]]\n}\n",
		"image \"a\" {\n  n = 1.\n}\n",
		"image \"a\" {\n  n = 01x\n}\n",
		"image \"a\" {\n  f = provider::x::y()\n}\n",
	}
	for _, src := range refused {
		if _, ok := fastParse([]byte(src), "f.gen.hcl", hcl.InitialPos); ok {
			t.Errorf("took the fast path:\n%s", src)
		}
	}
}

// Random configurations, most of them in the subset and some just outside
// it, parse to hclsyntax's tree whenever the fast path takes them.
func TestFastParseRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	accepted := 0
	const runs = 3000
	for i := 0; i < runs; i++ {
		src := randomConfig(rng)
		start := hcl.InitialPos
		if i%2 == 1 {
			start = hcl.Pos{Line: 1 + rng.IntN(1000), Column: 1, Byte: rng.IntN(100000)}
		}
		if checkFastParse(t, []byte(src), start) {
			accepted++
		}
	}
	// The generator stays in the subset most of the time; if the fast path
	// refused most of it, it would be guarding nothing.
	if accepted < runs/2 {
		t.Errorf("the fast path took %d of %d random configurations", accepted, runs)
	}
}

// FuzzFastParse: whatever the input, a body the fast path returns is
// hclsyntax's.
func FuzzFastParse(f *testing.F) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 20; i++ {
		f.Add(randomConfig(rng))
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkFastParse(t, []byte(src), hcl.InitialPos)
	})
}

// randomConfig writes top-level blocks with nested blocks and attributes,
// with random layout, occasionally stepping outside the subset.
func randomConfig(rng *rand.Rand) string {
	var b strings.Builder
	pick := func(s ...string) string { return s[rng.IntN(len(s))] }
	// odd picks from the forms outside the subset, now and then.
	odd := func(usual []string, outside ...string) string {
		if rng.IntN(100) == 0 {
			return pick(outside...)
		}
		return pick(usual...)
	}
	sp := func() string { return pick("", " ", "  ", "\t", " \t ") }
	ident := func() string {
		return pick("a", "image", "prompt", "x_1", "d-e", "_u", "for", "true", "null", "each", "key", "Value9")
	}
	traversal := func() string {
		s := ident()
		for n := rng.IntN(3); n > 0; n-- {
			s += "." + ident()
		}
		return s
	}
	text := func() string {
		return odd([]string{"", "a", "picture number 7", "  spaced  ", "it's", "{x}", "#not", "//no"}, "50% off", "$5", "a%b", "q$r", "\\n", "é")
	}
	var expr func(depth int) string
	expr = func(depth int) string {
		switch rng.IntN(8) {
		case 0:
			return odd([]string{"0", "1", "42", "3.25", "007"}, "1e3", "1.", "-1")
		case 1:
			return pick("true", "false", "null")
		case 2:
			return traversal()
		case 3, 4:
			s := `"`
			for n := rng.IntN(4); n > 0; n-- {
				if rng.IntN(3) == 0 {
					s += "${" + sp() + traversal() + sp() + "}"
				} else {
					s += text()
				}
			}
			return s + `"`
		case 5:
			if depth > 1 {
				return "1"
			}
			s := "[" + pick("", "\n", " ")
			for n := rng.IntN(4); n > 0; n-- {
				s += sp() + expr(depth+1) + sp() + pick(",", ",\n", "\n,", ",") + pick("", "\n", " ")
			}
			if rng.IntN(2) == 0 && strings.HasSuffix(strings.TrimSpace(s), ",") {
				s = strings.TrimRight(strings.TrimSpace(s), ",")
			}
			return s + pick("]", "\n]")
		case 6:
			return odd([]string{"true"}, "upper(\"x\")", "a[0]", "1 + 2", "{ a = 1 }", "<<EOT\nx\nEOT", "c ? 1 : 2", "a.0", "a.*")
		default:
			return `"` + text() + `"`
		}
	}
	var block func(depth int)
	block = func(depth int) {
		indent := strings.Repeat("  ", depth)
		b.WriteString(indent + ident())
		for n := rng.IntN(3); n > 0; n-- {
			if rng.IntN(3) == 0 {
				b.WriteString(" " + ident())
			} else {
				fmt.Fprintf(&b, " %q", pick("i00001", "hero", "a b", "", "x-y"))
			}
		}
		b.WriteString(sp() + "{" + sp())
		if rng.IntN(10) == 0 {
			b.WriteString("}\n")
			return
		}
		b.WriteString("\n")
		for n := rng.IntN(5); n > 0; n-- {
			if depth < 2 && rng.IntN(4) == 0 {
				block(depth + 1)
				continue
			}
			b.WriteString(pick("", "\n") + indent + "  " + ident() + sp() + odd([]string{"="}, "==", "=>") + sp() + expr(0) + sp() + "\n")
		}
		b.WriteString(indent + "}" + sp() + pick("\n", "\n\n", "\n", ""))
		if depth == 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteString("\n")
		}
	}
	b.WriteString(pick("", "\n", "  "))
	for n := 1 + rng.IntN(3); n > 0; n-- {
		block(0)
	}
	if rng.IntN(4) == 0 {
		s := strings.TrimRight(b.String(), "\n")
		b.Reset()
		b.WriteString(s)
	}
	return b.String()
}

// Every name plainIdentifier accepts, hclsyntax accepts too.
func TestPlainIdentifierIsValid(t *testing.T) {
	for _, name := range []string{"a", "_", "a-b", "x_1", "Z9-", "hero", "for", "true", "a--b"} {
		if !plainIdentifier(name) || !hclsyntax.ValidIdentifier(name) {
			t.Errorf("%q: plain %v, valid %v", name, plainIdentifier(name), hclsyntax.ValidIdentifier(name))
		}
	}
	for _, name := range []string{"", "1a", "-a", "a b", "a.b", "é", "a\n"} {
		if plainIdentifier(name) {
			t.Errorf("%q taken as a plain identifier", name)
		}
	}
}

func FuzzPlainIdentifier(f *testing.F) {
	f.Add("a-b_9")
	f.Fuzz(func(t *testing.T, name string) {
		if plainIdentifier(name) && !hclsyntax.ValidIdentifier(name) {
			t.Errorf("%q is plain but not valid", name)
		}
	})
}

// Every integer literal from 0 to 99 the fast path reads is one shared
// value, made once (no allocation per literal), equal to the one
// cty.ParseNumberVal makes, as hclsyntax does; any other is parsed.
func TestSmallNumberLiteralsShared(t *testing.T) {
	for _, lit := range []string{"0", "1", "9", "10", "42", "99", "100", "07", "5.5", "12345678901234567890"} {
		want, _ := cty.ParseNumberVal(lit)
		got, err := numberVal([]byte(lit))
		if err != nil || !got.RawEquals(want) {
			t.Errorf("numberVal(%s) = %#v, %v; want %#v", lit, got, err, want)
		}
	}
	for n := 0; n < 100; n++ {
		lit := []byte(strconv.Itoa(n))
		if a := testing.AllocsPerRun(10, func() { numberVal(lit) }); a != 0 {
			t.Errorf("numberVal(%s) allocates %v times: it is not the shared value", lit, a)
		}
	}
}
