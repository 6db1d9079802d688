package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/genform/genform/internal/dirtest"
)

// bigConfig is a configuration well over two chunks, with constructs that
// a cut must not split: a heredoc and a comment holding lines that look
// like block starts, and a multi-line list.
func bigConfig(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		switch i % 50 {
		case 7:
			fmt.Fprintf(&b, "image \"img%d\" {\n  prompt = <<EOT\nline one\nimage \"fake%d\" {\n%s\nEOT\n}\n\n", i, i, strings.Repeat("x", 300))
		case 19:
			fmt.Fprintf(&b, "/*\n%s\nimage \"commented%d\" {\n  prompt = \"no\"\n}\n*/\n", strings.Repeat("y", 200), i)
		case 31:
			fmt.Fprintf(&b, "video \"vid%d\" {\n  source_images = [\n\"https://e/a.png\",\n\"https://e/b.png\",\n  ]\n  frame_indices = [0, 1]\n  input_width = 1\n  input_height = 1\n}\n\n", i)
		default:
			fmt.Fprintf(&b, "image \"img%d\" {\n  prompt = \"picture %d\"\n  seed   = %d\n}\n\n", i, i, i)
		}
	}
	return b.String()
}

func TestChunkedParseMatchesWholeParse(t *testing.T) {
	src := []byte(bigConfig(4000))
	if len(cutPoints(src)) < 3 {
		t.Fatalf("the test file is too small to be cut: %d bytes", len(src))
	}
	whole, diags := hclsyntax.ParseConfig(src, "big.gen.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	chunked, diags := parseHCL(hclparse.NewParser(), src, "big.gen.hcl")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if _, ok := chunked.Nav.(blockNav); !ok {
		t.Fatal("parsed whole, not in pieces")
	}
	wb, cb := whole.Body.(*hclsyntax.Body), chunked.Body.(*hclsyntax.Body)
	if len(wb.Blocks) != len(cb.Blocks) {
		t.Fatalf("%d blocks in pieces, %d whole", len(cb.Blocks), len(wb.Blocks))
	}
	for i := range wb.Blocks {
		w, c := wb.Blocks[i], cb.Blocks[i]
		if w.Type != c.Type || fmt.Sprint(w.Labels) != fmt.Sprint(c.Labels) || w.Range() != c.Range() {
			t.Fatalf("block %d: %s %v %v, want %s %v %v", i, c.Type, c.Labels, c.Range(), w.Type, w.Labels, w.Range())
		}
		for name, wa := range w.Body.Attributes {
			ca := c.Body.Attributes[name]
			if ca == nil || ca.SrcRange != wa.SrcRange {
				t.Fatalf("block %d attribute %s: %v, want %v", i, name, ca, wa.SrcRange)
			}
		}
	}
	if cb.SrcRange != wb.SrcRange {
		t.Errorf("body range %v, want %v", cb.SrcRange, wb.SrcRange)
	}
	nav := chunked.Nav.(interface{ ContextString(int) string })
	last := wb.Blocks[len(wb.Blocks)-1]
	if got := nav.ContextString(last.Range().Start.Byte + 3); got != fmt.Sprintf("%s %q", last.Type, last.Labels[0]) {
		t.Errorf("context of the last block = %q", got)
	}
}

// A cut inside an unterminated construct falls back to one parse, so the
// diagnostics are exactly those of an ordinary parse.
func TestChunkedParseFallsBackOnErrors(t *testing.T) {
	src := bigConfig(3000) + "image \"broken\" {\n  prompt = \n}\n"
	dir := dirtest.New(t, map[string]string{"main.gen.hcl": src})
	_, diags := loadTest(dir, Options{})
	if !diags.HasErrors() {
		t.Fatal("no error")
	}
	_, want := hclsyntax.ParseConfig([]byte(src), "main.gen.hcl", hcl.InitialPos)
	if diagList(diags) != diagList(want) {
		t.Errorf("got:\n%s\nwant:\n%s", diagList(diags), diagList(want))
	}
	// A heredoc cut in half is the same story.
	open := "image \"h\" {\n  prompt = <<EOT\n" + strings.Repeat("image \"inside\" {\n", 20000)
	_, diags = parseHCL(hclparse.NewParser(), []byte(open), "h.gen.hcl")
	_, want = hclsyntax.ParseConfig([]byte(open), "h.gen.hcl", hcl.InitialPos)
	if diagList(diags) != diagList(want) {
		t.Errorf("got:\n%s\nwant:\n%s", diagList(diags), diagList(want))
	}
}

// Errors found after decoding point at the right line of a big file.
func TestChunkedParseRanges(t *testing.T) {
	src := bigConfig(3000) + "image \"late\" {\n  prompt       = \"p\"\n  image_number = 11\n}\n"
	line := strings.Count(src, "\n") - 1
	diags := loadErrors(t, src, Options{})
	if d := findDiag(diags, "Invalid image_number", "main.gen.hcl", line); d == nil {
		t.Errorf("want Invalid image_number on line %d; got:\n%s", line, diagList(diags))
	}
}

// Load keeps a big file's bytes, not its syntax tree; Body and Nav still
// answer as those of an ordinary parse, so diagnostics print with their
// snippets and block context, and callers can read the body.
func TestBigFileReadableAfterLoad(t *testing.T) {
	var plain strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&plain, "image \"img%d\" {\n  prompt = \"picture %d\"\n}\n\n", i, i)
	}
	// A heredoc holding what looks like the end of a block and the start
	// of the next, longer than a piece: some cut falls in it, and the file
	// is parsed whole.
	// (A variable's default: a prompt that long would be refused.)
	trap := "variable \"trap\" {\n  default = <<EOT\n" + strings.Repeat("}\nimage \"inside\" {\n", 2*chunkSize/16) + "EOT\n}\n\n"
	tests := []struct {
		name, src string
		pieces    bool
	}{
		{"parsed in pieces", plain.String(), true},
		{"parsed whole", trap + plain.String(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := tt.src
			f, _ := parseHCL(hclparse.NewParser(), []byte(src), "main.gen.hcl")
			if _, pieces := f.Nav.(blockNav); pieces != tt.pieces {
				t.Fatalf("parsed in pieces: %v, want %v", pieces, tt.pieces)
			}
			c := mustLoad(t, src, Options{})
			f = c.Files["main.gen.hcl"]
			if f == nil || string(f.Bytes) != src {
				t.Fatal("Files lacks the file's bytes")
			}
			if _, ok := f.Body.(lazyBody); !ok {
				t.Errorf("Files keeps the syntax tree of a big file: %T", f.Body)
			}
			whole, diags := hclsyntax.ParseConfig([]byte(src), "main.gen.hcl", hcl.InitialPos)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			want, _ := whole.Body.Content(fileSchema)
			got, diags := f.Body.Content(fileSchema)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if len(got.Blocks) != len(want.Blocks) {
				t.Fatalf("Body has %d blocks, want %d", len(got.Blocks), len(want.Blocks))
			}
			for i, b := range got.Blocks {
				if w := want.Blocks[i]; b.Type != w.Type || b.Labels[0] != w.Labels[0] || b.DefRange != w.DefRange {
					t.Fatalf("block %d: %s %q %v, want %s %q %v", i, b.Type, b.Labels, b.DefRange, w.Type, w.Labels, w.DefRange)
				}
			}

			// The resources' own bodies, which Load decoded as it parsed
			// the pieces and did not keep, are whole again.
			last := got.Blocks[len(got.Blocks)-1]
			if attrs, _ := last.Body.JustAttributes(); attrs["prompt"] == nil {
				t.Errorf("the body of %s %q lacks its prompt after Load", last.Type, last.Labels)
			}

			r := c.Resource(res("image.img2999"))
			var out strings.Builder
			w := hcl.NewDiagnosticTextWriter(&out, c.Files, 0, false)
			err := w.WriteDiagnostic(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Late", Detail: "A diagnostic after Load.", Subject: r.DeclRange.Ptr()})
			if err != nil {
				t.Fatal(err)
			}
			line := strings.Count(src[:r.DeclRange.Start.Byte], "\n") + 1
			for _, s := range []string{fmt.Sprintf(`on main.gen.hcl line %d, in image "img2999":`, line), `image "img2999" {`} {
				if !strings.Contains(out.String(), s) {
					t.Errorf("diagnostic lacks %q:\n%s", s, out.String())
				}
			}
		})
	}
}

// Long prompts are often heredocs whose lines start with a letter, like a
// block does: cuts stay out of them, so such a file is still parsed in
// pieces, with the result of a whole parse.
func TestChunkedParseAvoidsHeredocs(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&b, "image \"img%d\" {\n  prompt = <<EOT\nA cinematic shot, number %d.\nimage \"not a block\" {\nSoft light\nEOT\n}\n\n# next\n\nimage \"b%d\" {\n  prompt = \"b\"\n}\n", i, i, i)
	}
	src := []byte(b.String())
	f, diags := parseHCL(hclparse.NewParser(), src, "main.gen.hcl")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if _, ok := f.Nav.(blockNav); !ok || len(cutPoints(src)) < 10 {
		t.Fatalf("not parsed in pieces (%d cuts)", len(cutPoints(src)))
	}
	whole, _ := hclsyntax.ParseConfig(src, "main.gen.hcl", hcl.InitialPos)
	wb, cb := whole.Body.(*hclsyntax.Body), f.Body.(*hclsyntax.Body)
	if len(cb.Blocks) != len(wb.Blocks) {
		t.Fatalf("%d blocks, want %d", len(cb.Blocks), len(wb.Blocks))
	}
	for i := range wb.Blocks {
		w, c := wb.Blocks[i], cb.Blocks[i]
		if w.Labels[0] != c.Labels[0] || w.Range() != c.Range() {
			t.Fatalf("block %d: %v %v, want %v %v", i, c.Labels, c.Range(), w.Labels, w.Range())
		}
		if wa, ca := w.Body.Attributes["prompt"], c.Body.Attributes["prompt"]; ca == nil || ca.SrcRange != wa.SrcRange {
			t.Fatalf("block %d prompt: %v, want %v", i, ca, wa.SrcRange)
		}
	}
}

// Resource blocks decoded as their pieces are parsed report what they
// would have otherwise, where they would have.
func TestEarlyDecodedResourceDiagnostics(t *testing.T) {
	var b strings.Builder
	line := 0
	for i := 0; i < 3000; i++ {
		if i == 1500 {
			line = strings.Count(b.String(), "\n") + 2
			fmt.Fprintf(&b, "image \"img%d\" {\n  promt = \"picture %d\"\n}\n\n", i, i)
			continue
		}
		fmt.Fprintf(&b, "image \"img%d\" {\n  prompt = \"picture %d\"\n}\n\n", i, i)
	}
	diags := loadErrors(t, b.String(), Options{})
	d := findDiag(diags, "Unsupported argument", "main.gen.hcl", line)
	if d == nil || !strings.Contains(d.Detail, `Did you mean "prompt"?`) {
		t.Errorf("want Unsupported argument with a suggestion on line %d; got:\n%s", line, diagList(diags))
	}
}

// A large file's resource blocks are handed to decode as their piece is
// parsed, and keep only their header in the tree; a small file's are
// not (Load keeps its tree). After Load, a resource whose instances are
// cached no longer holds its attribute expressions, and still expands.
func TestResourcesDecodedAsParsed(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&b, "image \"img%d\" {\n  prompt = \"picture %d\"\n}\n\n", i, i)
	}
	src := []byte(b.String())
	var early earlyDecoder
	f, diags := parseHCLDecoding(hclparse.NewParser(), src, "main.gen.hcl", early.decode)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	blocks := f.Body.(*hclsyntax.Body).Blocks
	if len(blocks) != 3000 || len(early.decoded) != 3000 {
		t.Fatalf("%d blocks, %d decoded as parsed; want 3000 of each", len(blocks), len(early.decoded))
	}
	for _, blk := range blocks {
		r, ok := early.take(blk.Body)
		if !ok || len(blk.Body.Attributes) != 0 || r.r.Name != blk.Labels[0] || r.r.attribute("prompt") == nil {
			t.Fatalf("block %q: decoded %v, %d attributes left in the tree", blk.Labels[0], ok, len(blk.Body.Attributes))
		}
	}
	var small earlyDecoder
	if _, diags := parseHCLDecoding(hclparse.NewParser(), []byte("image \"a\" {\n  prompt = \"p\"\n}\n"), "s.gen.hcl", small.decode); diags.HasErrors() || len(small.decoded) != 0 {
		t.Fatalf("a small file's blocks were decoded early (%d), %v", len(small.decoded), diags)
	}

	c := mustLoad(t, string(src), Options{})
	r := c.Resource(res("image.img42"))
	if r.attrs != nil {
		t.Errorf("image.img42 keeps %d attributes after Load", len(r.attrs))
	}
	insts, d := c.Expand(r, Scope{})
	if d.HasErrors() || len(insts) != 1 || insts[0].Attrs()["prompt"].AsString() != "picture 42" {
		t.Errorf("image.img42 expands to %d instances, %v", len(insts), d)
	}
}
