package command

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A command hands what it shows to its view (package views), which is
// chosen once from the flags and writes the JSON documents itself: no
// command imports one of the documents' packages to pick a format. Only
// the saved plan file (planfile), which is not output, is the command's.
func TestCommandsLeaveTheirOutputToViews(t *testing.T) {
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
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "github.com/genform/genform/internal/formats/json") {
				t.Errorf("%s imports %s: its output belongs in its view", name, path)
			}
		}
	}
}
