package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/genform/genform/internal/dirtest"
)

// evalLocal loads a configuration whose local "x" is expr, with the given
// files beside it, and returns the value of local.x.
func evalLocal(t *testing.T, expr string, files map[string]string, environ ...string) (cty.Value, string) {
	t.Helper()
	all := map[string]string{"main.gen.hcl": "locals {\n  x = " + expr + "\n}\n"}
	for k, v := range files {
		all[k] = v
	}
	c, diags := loadTest(dirtest.New(t, all), Options{Environ: environ})
	if diags.HasErrors() {
		return cty.NilVal, diagList(diags)
	}
	return c.Locals["x"].value, ""
}

func TestFunctions(t *testing.T) {
	png := "\x89PNG\r\n\x1a\n\x00\x00"
	files := map[string]string{
		"notes.txt":         "hello\n",
		"frames/end.png":    png,
		"frames/noext":      png,
		"prompt.tmpl":       `a ${subject} in ${join(", ", styles)}`,
		"shots.csv":         "name,seed\nhero,1\nalt,2\n",
		"sub/dir/deep.txt":  "deep",
		"frames/binary.bin": "\xff\xfe",
	}
	tests := []struct {
		expr    string
		want    cty.Value
		environ []string
	}{
		{expr: `file("notes.txt")`, want: cty.StringVal("hello\n")},
		{expr: `file("sub/../notes.txt")`, want: cty.StringVal("hello\n")},
		{expr: `file("sub/dir/deep.txt")`, want: cty.StringVal("deep")},
		{expr: `filebase64("frames/end.png")`, want: cty.StringVal("iVBORw0KGgoAAA==")},
		{expr: `file_data_uri("frames/end.png")`, want: cty.StringVal("data:image/png;base64,iVBORw0KGgoAAA==")},
		{expr: `file_data_uri("frames/noext")`, want: cty.StringVal("data:image/png;base64,iVBORw0KGgoAAA==")},
		{expr: `templatefile("prompt.tmpl", { subject = "lighthouse", styles = ["noir", "wide"] })`, want: cty.StringVal("a lighthouse in noir, wide")},
		{expr: `csvdecode(file("shots.csv"))[1].seed`, want: cty.StringVal("2")},
		{expr: `env("GF_STYLE")`, want: cty.StringVal("noir"), environ: []string{"GF_STYLE=noir"}},
		{expr: `env("GF_UNSET", "fallback")`, want: cty.StringVal("fallback")},
		{expr: `env("GF_EMPTY", "fallback")`, want: cty.StringVal(""), environ: []string{"GF_EMPTY="}},
		{expr: `upper(format("%s-%03d", "hero", 7))`, want: cty.StringVal("HERO-007")},
		{expr: `length("héllo")`, want: cty.NumberIntVal(5)},
		{expr: `length(["a", "b"])`, want: cty.NumberIntVal(2)},
		{expr: `jsonencode({ b = 1, a = [true] })`, want: cty.StringVal(`{"a":[true],"b":1}`)},
		{expr: `base64decode(base64encode("x y"))`, want: cty.StringVal("x y")},
		{expr: `sha256("abc")`, want: cty.StringVal("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")},
		{expr: `startswith("hero-1", "hero") && endswith("hero-1", "-1") && strcontains("hero", "er")`, want: cty.True},
		{expr: `sum([1, 2, 3.5])`, want: cty.NumberFloatVal(6.5)},
		{expr: `alltrue([true, true]) && !anytrue([false])`, want: cty.True},
		{expr: `toset(["b", "a", "b"])`, want: cty.SetVal([]cty.Value{cty.StringVal("a"), cty.StringVal("b")})},
		{expr: `toset(["a", 1])`, want: cty.SetVal([]cty.Value{cty.StringVal("a"), cty.StringVal("1")})},
		{expr: `tolist(["a", "b"])`, want: cty.ListVal([]cty.Value{cty.StringVal("a"), cty.StringVal("b")})},
		{expr: `try(tonumber("x"), 3)`, want: cty.NumberIntVal(3)},
		{expr: `can(regex("^h", "hero"))`, want: cty.True},
		{expr: `merge({ a = 1 }, { b = 2 })["b"]`, want: cty.NumberIntVal(2)},
		{expr: `coalesce("", "x")`, want: cty.StringVal("x")},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			got, errs := evalLocal(t, tt.expr, files, tt.environ...)
			if errs != "" {
				t.Fatal(errs)
			}
			if !got.RawEquals(tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestFileFunctionsStayInside(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		expr  string
		link  bool
		wants string
	}{
		{name: "absolute", expr: `file("` + secret + `")`, wants: "absolute path"},
		{name: "dot dot", expr: `file("../secret.txt")`, wants: "leads outside the working directory"},
		{name: "dot dot inside a path", expr: `filebase64("a/../../secret.txt")`, wants: "leads outside"},
		{name: "symlink", expr: `file_data_uri("link.txt")`, link: true, wants: "link to a file outside"},
		{name: "missing", expr: `file("nope.txt")`, wants: `no file "nope.txt"`},
		{name: "directory", expr: `file("sub")`, wants: "is a directory"},
		{name: "binary", expr: `file("bin.dat")`, wants: "not valid UTF-8"},
		{name: "template recursion", expr: `templatefile("t.tmpl", {})`, wants: "templatefile"},
		{name: "template missing var", expr: `templatefile("v.tmpl", {})`, wants: `vars has no key "who"`},
		{name: "env unset", expr: `env("GF_SURELY_UNSET")`, wants: "is not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := dirtest.New(t, map[string]string{
				"main.gen.hcl": "locals {\n  x = " + tt.expr + "\n}\n",
				"sub/f.txt":    "x",
				"bin.dat":      "\xff\x00",
				"t.tmpl":       `${templatefile("t.tmpl", {})}`,
				"v.tmpl":       `hello ${who}`,
			})
			if tt.link {
				if err := os.Symlink(secret, filepath.Join(dir, "link.txt")); err != nil {
					t.Skip("no symlinks here:", err)
				}
			}
			_, diags := loadTest(dir, Options{})
			if !diags.HasErrors() || !strings.Contains(diagList(diags), tt.wants) {
				t.Errorf("want an error mentioning %q; got:\n%s", tt.wants, diagList(diags))
			}
			if strings.Contains(diagList(diags), "s3cret") {
				t.Errorf("the outside file's content reached a diagnostic")
			}
		})
	}
}
