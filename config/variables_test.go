package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/genform/genform/internal/dirtest"
)

func TestVariablePrecedence(t *testing.T) {
	const src = `
variable "style" {
  type    = string
  default = "from-default"
}
variable "n" {
  type    = number
  default = 1
}
variable "tags" {
  type    = list(string)
  default = []
}
variable "opts" {
  type = object({ seed = number, mode = optional(string, "smooth") })
  default = { seed = 1 }
}
`
	tests := []struct {
		name    string
		environ []string
		varFile string
		vars    []string
		style   string
		n       int64
		tags    int
		mode    string
	}{
		{name: "default", style: "from-default", n: 1, mode: "smooth"},
		{name: "environment beats default", environ: []string{"GENFORM_VAR_style=from-env", "GENFORM_VAR_n=2"}, style: "from-env", n: 2, mode: "smooth"},
		{name: "var file beats environment", environ: []string{"GENFORM_VAR_style=from-env"}, varFile: `style = "from-file"` + "\nopts = { seed = 2, mode = \"enhanced\" }\n", style: "from-file", n: 1, mode: "enhanced"},
		{name: "-var beats var file", varFile: `style = "from-file"`, vars: []string{"style=from-flag", `tags=["a","b"]`, "n=3"}, style: "from-flag", n: 3, tags: 2, mode: "smooth"},
		{name: "later -var wins", vars: []string{"style=first", "style=second"}, style: "second", n: 1, mode: "smooth"},
		{name: "structured environment value", environ: []string{`GENFORM_VAR_tags=["x"]`}, style: "from-default", n: 1, tags: 1, mode: "smooth"},
		{name: "literal string keeps its equals sign", vars: []string{"style=a=b"}, style: "a=b", n: 1, mode: "smooth"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"main.gen.hcl": src}
			opts := Options{Environ: tt.environ, Vars: tt.vars}
			if tt.varFile != "" {
				files["prod.genvars.hcl"] = tt.varFile
				opts.VarFiles = []string{"prod.genvars.hcl"}
			}
			c, diags := loadTest(dirtest.New(t, files), opts)
			if diags.HasErrors() {
				t.Fatal(diagList(diags))
			}
			if got := c.Variables["style"].Value.AsString(); got != tt.style {
				t.Errorf("style = %q, want %q", got, tt.style)
			}
			if got, _ := c.Variables["n"].Value.AsBigFloat().Int64(); got != tt.n {
				t.Errorf("n = %d, want %d", got, tt.n)
			}
			if got := c.Variables["tags"].Value.LengthInt(); got != tt.tags {
				t.Errorf("len(tags) = %d, want %d", got, tt.tags)
			}
			if got := c.Variables["opts"].Value.GetAttr("mode").AsString(); got != tt.mode {
				t.Errorf("opts.mode = %q, want %q", got, tt.mode)
			}
		})
	}
}

func TestVariableValuesAreChecked(t *testing.T) {
	const src = `
variable "n" {
  type = number
  validation {
    condition     = var.n >= 1 && var.n <= 4
    error_message = "n must be 1 to 4."
  }
}
variable "s" {
  default = "x"
}
`
	tests := []struct {
		name    string
		opts    Options
		files   map[string]string
		summary string
		detail  string
		file    string
	}{
		{name: "missing", summary: "No value for required variable", detail: `"n" is not set`, file: "main.gen.hcl"},
		{name: "wrong type", opts: Options{Vars: []string{"n=many"}}, summary: "Invalid value for variable", detail: "a number is required", file: "<value for var.n>"},
		{name: "validation", opts: Options{Vars: []string{"n=9"}}, summary: "Invalid value for variable", detail: "n must be 1 to 4.", file: "<value for var.n>"},
		// A value that is given is checked when the unset may be unknown.
		{name: "wrong type, unset unknown", opts: Options{Vars: []string{"n=many"}, UnknownUnset: true}, summary: "Invalid value for variable", detail: "a number is required", file: "<value for var.n>"},
		{name: "validation, unset unknown", opts: Options{Environ: []string{"GENFORM_VAR_n=9"}, UnknownUnset: true}, summary: "Invalid value for variable", detail: "n must be 1 to 4.", file: "<environment GENFORM_VAR_n>"},
		{name: "validation from var file", opts: Options{VarFiles: []string{"v.genvars.hcl"}}, files: map[string]string{"v.genvars.hcl": "n = 0\n"}, summary: "Invalid value for variable", detail: "n must be 1 to 4.", file: "v.genvars.hcl"},
		{name: "undeclared -var", opts: Options{Vars: []string{"n=1", "ss=1"}}, summary: "Value for undeclared variable", detail: `Did you mean "s"?`, file: "<command line>"},
		{name: "malformed -var", opts: Options{Vars: []string{"n=1", "novalue"}}, summary: "Invalid -var option", file: "<command line>"},
		{name: "missing var file", opts: Options{Vars: []string{"n=1"}, VarFiles: []string{"nope.genvars.hcl"}}, summary: "Failed to read variables file", file: "nope.genvars.hcl"},
		{name: "var file syntax", opts: Options{Vars: []string{"n=1"}, VarFiles: []string{"v.genvars.hcl"}}, files: map[string]string{"v.genvars.hcl": "n = \n"}, summary: "Invalid expression", file: "v.genvars.hcl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"main.gen.hcl": src}
			for k, v := range tt.files {
				files[k] = v
			}
			_, diags := loadTest(dirtest.New(t, files), tt.opts)
			for _, d := range diags {
				if d.Summary == tt.summary && strings.Contains(d.Detail, tt.detail) && d.Subject != nil && d.Subject.Filename == tt.file {
					return
				}
			}
			t.Errorf("want %q (%q) in %s; got:\n%s", tt.summary, tt.detail, tt.file, diagList(diags))
		})
	}
}

func TestUndeclaredInVarFileWarns(t *testing.T) {
	dir := dirtest.New(t, map[string]string{
		"main.gen.hcl":  `variable "style" { default = "a" }`,
		"v.genvars.hcl": "styel = \"b\"\n",
	})
	_, diags := loadTest(dir, Options{VarFiles: []string{"v.genvars.hcl"}})
	if diags.HasErrors() || len(diags) != 1 || !strings.Contains(diags[0].Detail, `Did you mean "style"?`) {
		t.Errorf("want one warning with a suggestion; got:\n%s", diagList(diags))
	}
}

func TestSensitiveValuesStayOutOfSnippetsAndHash(t *testing.T) {
	const src = `
variable "token" {
  type      = list(string)
  sensitive = true
}
service { token = var.token[0] }
`
	dir := dirtest.New(t, map[string]string{"main.gen.hcl": src})
	a, diags := loadTest(dir, Options{Vars: []string{`token=["secret-one"]`}})
	if diags.HasErrors() {
		t.Fatal(diagList(diags))
	}
	b, _ := loadTest(dir, Options{Vars: []string{`token=["secret-two"]`}})
	if a.Service.Token != "secret-one" {
		t.Errorf("token = %q", a.Service.Token)
	}
	if a.Hash != b.Hash {
		t.Errorf("the hash changed with a sensitive variable's value")
	}
	for name, f := range a.Files {
		if strings.Contains(string(f.Bytes), "secret") {
			t.Errorf("Files[%q] holds the sensitive value", name)
		}
	}
	// A non-sensitive variable does enter the hash: a saved plan made with
	// another value is stale.
	dir2 := dirtest.New(t, map[string]string{"main.gen.hcl": `variable "s" { default = "x" }`})
	c1, _ := loadTest(dir2, Options{})
	c2, _ := loadTest(dir2, Options{Vars: []string{"s=y"}})
	if c1.Hash == c2.Hash {
		t.Errorf("the hash ignores variable values")
	}
}

func TestVariableTypesConvert(t *testing.T) {
	c := mustLoad(t, `
variable "sizes" {
  type    = map(number)
  default = { a = "1", b = 2 }
}
variable "any" {
  type    = any
  default = null
}
`, Options{Environ: []string{`GENFORM_VAR_any={x = 1}`}})
	sizes := c.Variables["sizes"].Value
	if !sizes.Type().Equals(cty.Map(cty.Number)) {
		t.Errorf("sizes has type %s", sizes.Type().FriendlyName())
	}
	if !c.Variables["any"].Value.Type().IsObjectType() {
		t.Errorf("an `any` variable from the environment is not parsed as HCL: %#v", c.Variables["any"].Value)
	}
}

// A value made from a sensitive variable, however it was computed, is
// known to be sensitive: the instance names its attributes, while the
// request holds the real value to send.
func TestSensitiveValuesAreTracked(t *testing.T) {
	c := mustLoad(t, `
variable "secret" {
  type      = string
  sensitive = true
  default   = "abracadabra"
}
variable "plain" {
  default = "noir"
}
variable "n" {
  type      = number
  sensitive = true
  default   = 2
}
locals {
  word = upper(var.secret)
}
image "a" {
  count        = var.n
  prompt       = "a ${var.plain} poster saying ${local.word}"
  negative_prompt = format("no %s", var.plain)
  seed         = length(var.secret)
  image_number = 1
}
output "o" {
  value     = local.word
  sensitive = true
}
`, Options{})
	insts := expandAll(t, c, nil)
	if len(insts) != 2 {
		t.Fatalf("count from a sensitive variable: %d instances", len(insts))
	}
	in := insts["image.a[0]"]
	if got := fmt.Sprint(in.Sensitive); got != "[prompt seed]" {
		t.Errorf("Sensitive = %s, want [prompt seed]", got)
	}
	if !strings.Contains(string(in.Request), "ABRACADABRA") || !strings.Contains(string(in.Request), `"seed":11`) {
		t.Errorf("the request must hold the real values: %s", in.Request)
	}
	if got := fmt.Sprint(c.Resources[0].Sensitive()); got != "[prompt seed]" {
		t.Errorf("Resource.Sensitive = %s, want [prompt seed]", got)
	}
	outs, diags := c.EvalOutputs(Scope{})
	if diags.HasErrors() || outs["o"].AsString() != "ABRACADABRA" {
		t.Errorf("output o = %#v, %v", outs["o"], diags)
	}

	diags = loadErrors(t, `
variable "keys" {
  type      = set(string)
  sensitive = true
  default   = ["a"]
}
image "b" {
  for_each = var.keys
  prompt   = each.key
}
`, Options{})
	if !strings.Contains(diagList(diags), "derives from a sensitive variable") {
		t.Errorf("for_each from a sensitive variable: %s", diagList(diags))
	}
	// for_each is checked for a mark on the whole value only, which is
	// enough because cty hoists an element's mark to a set, and HCL a
	// key's mark to the object: these guard that shortcut.
	for _, expr := range []string{`toset([var.k, "plain"])`, `{(var.k) = 1, x = 2}`} {
		diags := loadErrors(t, `
variable "k" {
  type      = string
  sensitive = true
  default   = "a"
}
image "b" {
  for_each = `+expr+`
  prompt   = each.key
}
`, Options{})
		if !strings.Contains(diagList(diags), "derives from a sensitive variable") {
			t.Errorf("for_each = %s: %s", expr, diagList(diags))
		}
	}
}

// TestSensitiveGaps: what a value made from a sensitive variable must not
// reach. An output of one must be declared sensitive; a validation's
// error message made from one is not shown; a dir made from one is
// refused (a directory is shown wherever its files are); the variables
// the service token is made from, through locals too, are secret and
// marked like sensitive ones; and a refused value of a sensitive
// attribute is not quoted.
func TestSensitiveGaps(t *testing.T) {
	const secret = "variable \"s\" {\n  sensitive = true\n  default   = \"hush-77\"\n}\n"
	tests := []struct {
		name, src string
		opts      Options
		want      string // a substring of the one error
	}{
		{"an output", secret + "output \"o\" {\n  value = \"x ${var.s}\"\n}\n", Options{}, "Output refers to sensitive values"},
		{"an output through a local and a function", secret + "locals {\n  l = [upper(var.s)]\n}\noutput \"o\" {\n  value = length(local.l[0])\n}\n", Options{}, "Output refers to sensitive values"},
		{"an output made with a resource", secret + "image \"a\" {\n  prompt = \"a\"\n}\noutput \"o\" {\n  value = \"${image.a.id}-${var.s}\"\n}\n", Options{}, "Output refers to sensitive values"},
		{"a validation message", "variable \"s\" {\n  sensitive = true\n  default   = \"hush-77\"\n  validation {\n    condition     = length(var.s) > 10\n    error_message = \"too short: ${var.s}\"\n  }\n}\n", Options{}, "The error message is made from a sensitive value, so it is not shown"},
		{"a dir", secret + "image \"a\" {\n  prompt = \"a\"\n  dir    = \"out/${var.s}\"\n}\n", Options{}, "The dir value derives from a sensitive variable"},
		{"a refused aspect ratio", secret + "image \"a\" {\n  prompt       = \"a\"\n  aspect_ratio = var.s\n}\n", Options{}, "so it is not shown"},
		{"a refused gen_mode", secret + "video \"v\" {\n  prompt   = \"a\"\n  gen_mode = var.s\n}\n", Options{}, "so it is not shown"},
		{"a refused seed", "variable \"n\" {\n  sensitive = true\n  default   = 987654321987\n}\nimage \"a\" {\n  prompt = \"a\"\n  seed   = var.n\n}\n", Options{}, "seed must be -1 (random) or from 0 to 4294967295. (The value is made from a sensitive variable"},
		{"a token variable in an output", "variable \"t\" {\n  default = \"hush-77\"\n}\nlocals {\n  bearer = \"x-${var.t}\"\n}\nservice {\n  token = local.bearer\n}\noutput \"o\" {\n  value = var.t\n}\n", Options{}, "Output refers to sensitive values"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diags := loadErrors(t, tt.src, tt.opts)
			got := diagList(diags)
			if len(diags) != 1 || !strings.Contains(got, tt.want) {
				t.Fatalf("got %s, want one error saying %q", got, tt.want)
			}
			if strings.Contains(got, "hush-77") || strings.Contains(got, "987654321987") {
				t.Errorf("the diagnostic shows the sensitive value: %s", got)
			}
		})
	}

	c := mustLoad(t, `
variable "t" {
  default = "hush-77"
}
locals {
  bearer = "x-${var.t}"
}
service {
  token = local.bearer
}
image "a" {
  prompt = "a ${var.t}"
}
output "o" {
  value     = var.t
  sensitive = true
}
`, Options{})
	if !c.Secret("t") {
		t.Error("a variable the token is made from through a local is not secret")
	}
	if got := fmt.Sprint(expandAll(t, c, nil)["image.a"].Sensitive); got != "[prompt]" {
		t.Errorf("a prompt made from the token's variable: Sensitive = %s, want [prompt]", got)
	}
}

// TestSensitiveErrorsQuoteNothing: functions and operators quote the
// values they refuse; when the expression uses a sensitive value, the
// diagnostic says so instead, at the same place. A plain value's error is
// shown as it is.
func TestSensitiveErrorsQuoteNothing(t *testing.T) {
	for _, expr := range []string{"tonumber(var.s)", "parseint(var.s, 10)", `file(var.s)`, `templatefile(var.s, {})`, "env(var.s)",
		"file_data_uri(var.s)", "tobool(var.s)", "tonumber(upper(var.s))", "tonumber(local.l)", "tonumber(var.o.k)", "var.o.k + 1"} {
		t.Run(expr, func(t *testing.T) {
			diags := loadErrors(t, `
variable "s" {
  sensitive = true
  default   = "hush-77"
}
variable "o" {
  sensitive = true
  default   = { k = "hush-77" }
}
locals {
  l = "l-${var.s}"
}
image "a" {
  prompt = `+expr+`
}
`, Options{})
			got := diagList(diags)
			if len(diags) != 1 || !strings.Contains(got, "main.gen.hcl:14") || !strings.Contains(got, "why it failed is not shown") {
				t.Fatalf("got %s, want one diagnostic on line 14 hiding why", got)
			}
			if strings.Contains(got, "hush") || diags[0].Expression != nil {
				t.Errorf("the diagnostic can show the value: %s", got)
			}
		})
	}
	diags := loadErrors(t, "variable \"p\" {\n  default = \"plain-77\"\n}\nimage \"a\" {\n  prompt = tonumber(var.p)\n}\n", Options{})
	if !strings.Contains(diagList(diags), `cannot convert "plain-77" to number`) {
		t.Errorf("a plain value's error: %s", diagList(diags))
	}
}

// TestSensitiveCountQuotesNothing: a count may be made from a sensitive
// number (the number of instances is all it shows, as in Terraform), but
// a refused one is not quoted.
func TestSensitiveCountQuotesNothing(t *testing.T) {
	for _, n := range []string{"-3771", "37.71", "377100"} {
		t.Run(n, func(t *testing.T) {
			diags := loadErrors(t, `
variable "n" {
  type      = number
  sensitive = true
  default   = `+n+`
}
image "a" {
  count  = var.n
  prompt = "p ${count.index}"
}
`, Options{})
			got := diagList(diags)
			if len(diags) != 1 || !strings.Contains(got, "Invalid count argument") || !strings.Contains(got, "not shown") {
				t.Fatalf("got %s, want one count error that does not show the value", got)
			}
			if strings.Contains(got, strings.TrimPrefix(n, "-")) {
				t.Errorf("the diagnostic shows the value: %s", got)
			}
		})
	}
	c := mustLoad(t, "variable \"n\" {\n  sensitive = true\n  default   = 2\n}\nimage \"a\" {\n  count  = var.n\n  prompt = \"p ${count.index}\"\n}\n", Options{})
	if got := len(expandAll(t, c, nil)); got != 2 {
		t.Errorf("%d instances, want 2", got)
	}
}

// With UnknownUnset, a variable with no value is unknown, wherever it is
// used, and not an error; one with a default keeps it.
func TestUnknownUnset(t *testing.T) {
	c := mustLoad(t, `
variable "n" {
  type = number
  validation {
    condition     = var.n >= 1
    error_message = "n must be 1 or more."
  }
}
variable "names" {
  type = set(string)
}
variable "style" {
  type    = string
  default = "noir"
}
variable "token" {
  sensitive = true
}
variable "out" {}
genform {
  output_dir = var.out
}
service {
  token = var.token
}
image "counted" {
  count        = var.n
  prompt       = "a ${var.style}"
  image_number = var.n
}
image "each" {
  for_each = var.names
  prompt   = each.key
  dir      = "media/${each.key}"
}
`, Options{UnknownUnset: true})
	for name, known := range map[string]bool{"n": false, "names": false, "style": true, "token": false, "out": false} {
		if v := c.Variables[name].Value; v.IsWhollyKnown() != known {
			t.Errorf("var.%s = %#v; known %v, want %v", name, v, v.IsWhollyKnown(), known)
		}
	}
	if d := c.UnlocatedState(); len(d) != 0 {
		t.Errorf("UnlocatedState: %s", diagList(d))
	}
}

// UnlocatedState names the variable, given no value, that state_file or
// a backend's settings are made from, directly or through locals; the
// connection string's at the block's header, whose line cannot hold a
// password.
func TestUnlocatedState(t *testing.T) {
	tests := []struct {
		name, src string
		opts      Options
		want      []string // "line: detail substring"
	}{
		{name: "state_file through a local", src: `
variable "env" {}
locals {
  dir = "${var.env}/state"
}
genform {
  state_file = "${local.dir}/state.db"
}
`, want: []string{"7: state_file is made from var.env, which has no value, so there is no telling where the state is kept. Set it with -var 'env=VALUE', a -var-file or GENFORM_VAR_env."}},
		{name: "state_file given", src: `
variable "env" {}
genform {
  state_file = "${var.env}.db"
}
`, opts: Options{Vars: []string{"env=prod"}}},
		{name: "state_file from a default", src: `
variable "env" {
  default = "dev"
}
genform {
  state_file = "${var.env}.db"
}
`},
		{name: "output_dir is not where the state is", src: `
variable "out" {}
genform {
  output_dir = var.out
}
`},
		{name: "backend", src: `
variable "host" {}
variable "user" {}
variable "schema" {}
genform {
  backend "pg" {
    conn_str    = "host=${var.host} user=${var.user}"
    schema_name = var.schema
  }
}
`, want: []string{
			"6: conn_str is made from var.host and var.user, which have no value, so there is no telling where the state is kept. Set them with -var 'host=VALUE'",
			"8: schema_name is made from var.schema, which has no value",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			opts.UnknownUnset = true
			c := mustLoad(t, tt.src, opts)
			got := c.UnlocatedState()
			if len(got) != len(tt.want) {
				t.Fatalf("%d errors, want %d:\n%s", len(got), len(tt.want), diagList(got))
			}
			for i, d := range got {
				line, detail, _ := strings.Cut(tt.want[i], ": ")
				if d.Severity != hcl.DiagError || d.Summary != "Cannot locate the state" || fmt.Sprint(d.Subject.Start.Line) != line || !strings.Contains(d.Detail, detail) {
					t.Errorf("got %s line %d: %s: %s; want line %s: %s", d.Subject.Filename, d.Subject.Start.Line, d.Summary, d.Detail, line, detail)
				}
			}
		})
	}
}
