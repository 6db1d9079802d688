package jsondiag

import (
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

func TestDocument(t *testing.T) {
	src := []byte("image \"a\" {\n  prompt = \"a\"\n  seed   = \"x\"\n}\n")
	f, _ := hclsyntax.ParseConfig(src, "main.gen.hcl", hcl.InitialPos)
	rng := hcl.Range{Filename: "main.gen.hcl", Start: hcl.Pos{Line: 3, Column: 12, Byte: 38}, End: hcl.Pos{Line: 3, Column: 15, Byte: 41}}
	diags := hcl.Diagnostics{
		{Severity: hcl.DiagError, Summary: "Incorrect attribute value type", Detail: "A number is required.", Subject: &rng},
		{Severity: hcl.DiagWarning, Summary: "Value for undeclared variable", Detail: "From the command line."},
	}
	files := map[string]*hcl.File{"main.gen.hcl": f}

	doc := diagnosticsDocument(files, diags)
	if doc.Valid || doc.ErrorCount != 1 || doc.WarningCount != 1 {
		t.Errorf("counts: %+v", doc)
	}
	if s := doc.Diagnostics[0].Snippet; s == nil || s.Code[s.HighlightStartOffset:s.HighlightEndOffset] != `"x"` {
		t.Errorf("snippet = %+v", s)
	}
	if d := doc.Diagnostics[1]; d.Range != nil || d.Snippet != nil || d.Severity != "warning" {
		t.Errorf("a diagnostic without a subject: %+v", d)
	}
}

func TestSnippetEdges(t *testing.T) {
	src := []byte("a = [\n  1,\n  2\n]")
	f := &hcl.File{Bytes: src}
	multi := hcl.Range{Filename: "x", Start: hcl.Pos{Line: 1, Column: 5, Byte: 4}, End: hcl.Pos{Line: 4, Column: 2, Byte: len(src)}}
	s := snippet(f, multi)
	if s == nil || s.Code != string(src) || s.HighlightStartOffset != 4 || s.HighlightEndOffset != len(src) {
		t.Errorf("multi-line snippet = %+v", s)
	}
	bad := hcl.Range{Filename: "x", Start: hcl.Pos{Byte: 5}, End: hcl.Pos{Byte: 500}}
	if snippet(f, bad) != nil {
		t.Errorf("a range past the end gave a snippet")
	}
	if snippet(nil, multi) != nil {
		t.Errorf("no file gave a snippet")
	}
}
