package command

import (
	"bytes"
	"flag"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/atomicfile"
	"github.com/genform/genform/internal/views"
)

func init() {
	register(&command{
		name:     "fmt",
		synopsis: "Rewrite configuration files to the canonical format",
		usage: `Usage: genform [global options] fmt [-check] [-diff] [-recursive] [-list=false] [PATH...]

  Rewrites *.gen.hcl and *.genvars.hcl files to the canonical format and
  style. PATH is a directory (the working directory by default) or a file;
  "-" formats standard input to standard output.

  Exits 0 when done, 1 when a file cannot be read, parsed or written, and
  3 with -check when some file is not formatted.

Options:

  -check       Write nothing; list the files that are not formatted and
               exit 3 if there are any.

  -diff        Show what would change (or changed) as a unified diff.

  -recursive   Also format the files of subdirectories.

  -list=false  Do not list the files whose formatting changed.
`,
		run: runFmt,
	})
}

type fmtOptions struct {
	check, diff, recursive, list bool
}

func runFmt(env *Env, args []string) int {
	c := commands["fmt"]
	fset := flag.NewFlagSet("fmt", flag.ContinueOnError)
	var o fmtOptions
	fset.BoolVar(&o.check, "check", false, "exit 3 if any file is not formatted, writing nothing")
	fset.BoolVar(&o.diff, "diff", false, "show the changes as a unified diff")
	fset.BoolVar(&o.recursive, "recursive", false, "also format subdirectories")
	fset.BoolVar(&o.list, "list", true, "list the files that changed")
	if ok, code := parseFlags(env, c, fset, args); !ok {
		return code
	}
	paths := fset.Args()
	if len(paths) == 0 {
		paths = []string{"."}
	}

	var files []string
	for _, p := range paths {
		if p == "-" {
			if len(paths) > 1 {
				return env.Errorf(`"-" (standard input) cannot be combined with other paths`)
			}
			return fmtStdin(env, o)
		}
		fi, err := os.Stat(p)
		if err != nil {
			return env.Errorf("fmt: %v", err)
		}
		if !fi.IsDir() {
			if !formattable(p) {
				return env.Errorf("fmt: %s is not a configuration file; only *%s and *%s files are formatted", p, config.SuffixHCL, config.SuffixVarFile)
			}
			files = append(files, p)
			continue
		}
		found, err := formattableFiles(p, o.recursive)
		if err != nil {
			return env.Errorf("fmt: %v", err)
		}
		files = append(files, found...)
	}

	view := views.NewFmt(&env.Streams, o.list, o.diff, o.check)
	parsed := map[string]*hcl.File{}
	var diags hcl.Diagnostics
	changed := false
	failed := false
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			env.Errorf("fmt: %v", err)
			failed = true
			continue
		}
		out, d := formatSource(src, name, parsed)
		if d.HasErrors() {
			diags = append(diags, d...)
			continue
		}
		if bytes.Equal(src, out) {
			continue
		}
		changed = true
		view.Changed(name, src, out)
		if o.check {
			continue
		}
		if err := atomicfile.WriteFile(name, out, 0o644, atomicfile.KeepPermissions()); err != nil {
			env.Errorf("fmt: %v", err)
			failed = true
		}
	}
	views.Diagnostics(&env.Streams, parsed, diags)
	switch {
	case failed || diags.HasErrors():
		return ExitError
	case o.check && changed:
		return ExitUnformatted
	}
	return ExitOK
}

// formatSource checks src's syntax (hclwrite.Format would reformat broken
// input into something else broken) and returns its canonical form. The
// parsed file is kept in files so diagnostics can show snippets.
func formatSource(src []byte, name string, files map[string]*hcl.File) ([]byte, hcl.Diagnostics) {
	// The parsers recurse once per level of nesting, without a limit.
	if diags := config.CheckNesting(src, name); diags.HasErrors() {
		return nil, diags
	}
	f, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	files[name] = f
	if diags.HasErrors() {
		return nil, diags
	}
	return hclwrite.Format(src), nil
}

func fmtStdin(env *Env, o fmtOptions) int {
	src, err := io.ReadAll(env.Stdin)
	if err != nil {
		return env.Errorf("fmt: reading standard input: %v", err)
	}
	files := map[string]*hcl.File{}
	out, diags := formatSource(src, "<stdin>", files)
	if diags.HasErrors() {
		views.Diagnostics(&env.Streams, files, diags)
		return ExitError
	}
	views.NewFmt(&env.Streams, o.list, o.diff, o.check).Stdin(src, out)
	if o.check && !bytes.Equal(src, out) {
		return ExitUnformatted
	}
	return ExitOK
}

func formattable(name string) bool {
	return strings.HasSuffix(name, config.SuffixHCL) || strings.HasSuffix(name, config.SuffixVarFile)
}

// formattableFiles lists the configuration and variables files of dir in
// lexical order, descending into subdirectories when recursive (but not
// into hidden ones such as .git and .genform).
func formattableFiles(dir string, recursive bool) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == dir {
				return nil
			}
			if !recursive || strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && formattable(d.Name()) {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}
