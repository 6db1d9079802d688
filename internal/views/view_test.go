package views

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/genform/genform/internal/operation/outcome"
)

// The plan header's service line is made here from the services a plan
// uses, as operations return them, and reads as it always has.
func TestServiceLine(t *testing.T) {
	builtin := &outcome.Reference{ID: "simulator"}
	remote := &outcome.Reference{ID: "http://127.0.0.1:8787", BaseURL: "http://127.0.0.1:8787", From: "GENFORM_BASE_URL"}
	for _, c := range []struct {
		services outcome.Services
		want     string
	}{
		{outcome.Services{Reference: builtin}, "built-in simulator (outputs are synthetic)"},
		{outcome.Services{Reference: remote}, "http://127.0.0.1:8787"},
		{outcome.Services{Providers: []outcome.Provider{{Name: "fal", Title: "fal"}}}, "fal"},
		{outcome.Services{Providers: []outcome.Provider{{Name: "luma", Title: "Luma", BaseURL: "http://127.0.0.1:9000"}}}, "Luma at http://127.0.0.1:9000"},
		{outcome.Services{Reference: remote, Providers: []outcome.Provider{
			{Name: "replicate", Title: "Replicate", BaseURL: "http://127.0.0.1:9001"},
			{Name: "fal", Title: "fal"},
		}}, "http://127.0.0.1:8787; Replicate at http://127.0.0.1:9001; fal"},
	} {
		if got := serviceLine(c.services); got != c.want {
			t.Errorf("serviceLine(%+v) = %q, want %q", c.services, got, c.want)
		}
	}
}

// Views render what operations return; they never import package
// operation, whose types they would then depend on (and which could
// never use a view): what they need of it is in package outcome.
func TestViewsDoNotImportOperation(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); path == "github.com/genform/genform/internal/operation" {
				t.Errorf("%s imports %s", name, path)
			}
		}
	}
}
