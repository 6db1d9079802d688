package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/provider/all"
)

// The house's seams, checked on the code as it is (non-test files):
// which packages may import which, and where a provider's name may be
// written. A change that crosses a seam fails here, naming the file.

const module = "github.com/genform/genform/"

// imports are the module's packages, each with what it imports of the
// module (its non-test files).
func imports(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		for _, imp := range fields[1:] {
			if rel, ok := strings.CutPrefix(imp, module); ok {
				m[pkg] = append(m[pkg], rel)
			}
		}
	}
	return m
}

// providerPackage reports whether pkg is a single provider's package (its
// adapter, simulator or rules, in a folder named after it) or one of its
// simulators.
func providerPackage(pkg string) bool {
	if pkg == "internal/simulator" {
		return true // the reference service's simulator
	}
	for _, r := range all.Providers {
		for _, dir := range []string{"internal/provider/", "internal/simulator/"} {
			if pkg == dir+r.Name() || strings.HasPrefix(pkg, dir+r.Name()+"/") {
				return true
			}
		}
	}
	return false
}

func TestHouseImports(t *testing.T) {
	for pkg, deps := range imports(t) {
		for _, dep := range deps {
			switch {
			case (pkg == "internal/operation" || pkg == "internal/command" || pkg == "reconcile" || strings.HasPrefix(pkg, "reconcile/")) &&
				(providerPackage(dep) || dep == "internal/apiclient"):
				t.Errorf("%s imports %s: operations, commands and the engine reach providers through the seam (internal/provider) and the one list (internal/provider/all)", pkg, dep)
			case pkg == "internal/views" && (dep == "internal/operation" || strings.HasPrefix(dep, "internal/operation/") && dep != "internal/operation/outcome"):
				t.Errorf("%s imports %s: views render data, and take what operations hand back from internal/operation/outcome", pkg, dep)
			case pkg == "config" && dep != "internal/addrs" && dep != "internal/schema":
				t.Errorf("config imports %s: the configuration knows the language, and what a provider takes reaches it through config.Providers (schema types only)", dep)
			}
		}
	}
}

// TestProviderNamesStayInTheirFolders: outside its own folders (and files
// named after it), a provider's name is written as a string in at most
// one non-test file. The list of providers (internal/provider/all) names
// none: everything reads the names from the registrations.
func TestProviderNamesStayInTheirFolders(t *testing.T) {
	files := map[string][]string{} // provider name -> files that write it
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, r := range all.Providers {
				if s == r.Name() && !ownedByAny(path) && !slices.Contains(files[s], path) {
					files[s] = append(files[s], path)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, fs := range files {
		if len(fs) > 1 {
			t.Errorf("provider %s is named in %d files outside its folders: %s", name, len(fs), strings.Join(fs, ", "))
		}
	}
}

// ownedBy reports whether path is in a folder named after provider name,
// or in a file named after it.
// ownedByAny reports whether path is in a provider's folders: there a
// word that is another provider's name is that provider's own (Runway's
// mode "reference"), not wiring.
func ownedByAny(path string) bool {
	return slices.ContainsFunc(all.Providers, func(r *provider.Registration) bool { return ownedBy(path, r.Name()) })
}

func ownedBy(path, name string) bool {
	for _, part := range strings.Split(filepath.ToSlash(path), "/") {
		if part == name || strings.TrimSuffix(part, ".go") == name {
			return true
		}
	}
	return false
}
