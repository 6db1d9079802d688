package jsondiag

import (
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// TestDocument: the counts, an error's snippet with its highlight, and a
// diagnostic without a subject, which has neither range nor snippet.
func TestDocument(t *testing.T) {
	src := []byte("variable \"v\" {\n  type = numbr\n}\n")
	f, _ := hclsyntax.ParseConfig(src, "vars.gen.hcl", hcl.InitialPos)
	rng := hcl.Range{Filename: "vars.gen.hcl", Start: hcl.Pos{Line: 2, Column: 10, Byte: 24}, End: hcl.Pos{Line: 2, Column: 15, Byte: 29}}
	diags := hcl.Diagnostics{
		{Severity: hcl.DiagError, Summary: "Invalid type specification", Detail: "The keyword \"numbr\" is not a valid type specification.", Subject: &rng},
		{Severity: hcl.DiagWarning, Summary: "Deprecated setting"},
	}
	files := map[string]*hcl.File{"vars.gen.hcl": f}

	doc := diagnosticsDocument(files, diags)
	if doc.Valid || doc.ErrorCount != 1 || doc.WarningCount != 1 {
		t.Errorf("counts: %+v", doc)
	}
	if s := doc.Diagnostics[0].Snippet; s == nil || s.StartLine != 2 || s.Code[s.HighlightStartOffset:s.HighlightEndOffset] != "numbr" || s.Context == nil || *s.Context != `variable "v"` {
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
