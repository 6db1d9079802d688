package views

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// TestWriteDiagnostics: every diagnostic is printed with the source line
// it points at, warnings too, and without colour codes when colour is off.
func TestWriteDiagnostics(t *testing.T) {
	src := []byte("image \"a\" {\n  prompt = \"a\"\n  seed   = \"x\"\n}\n")
	f, _ := hclsyntax.ParseConfig(src, "main.gen.hcl", hcl.InitialPos)
	seed := f.Body.(*hclsyntax.Body).Blocks[0].Body.Attributes["seed"]
	diags := hcl.Diagnostics{
		{Severity: hcl.DiagError, Summary: "Incorrect attribute value type", Detail: "A number is required.", Subject: seed.Expr.Range().Ptr()},
		{Severity: hcl.DiagWarning, Summary: "Value for undeclared variable", Detail: "From the command line."},
	}
	files := map[string]*hcl.File{"main.gen.hcl": f}

	var stderr bytes.Buffer
	Diagnostics(&Streams{Stdout: io.Discard, Stderr: &stderr, Getenv: func(string) string { return "" }}, files, diags)
	out := stderr.String()
	for _, want := range []string{
		"Error: Incorrect attribute value type",
		`on main.gen.hcl line 3, in image "a":`,
		`   3:   seed   = "x"`,
		"Warning: Value for undeclared variable",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("colour codes without colour")
	}

}
