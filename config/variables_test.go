package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
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
			c, diags := Load(writeFiles(t, files), opts)
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
			_, diags := Load(writeFiles(t, files), tt.opts)
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
	dir := writeFiles(t, map[string]string{
		"main.gen.hcl":  `variable "style" { default = "a" }`,
		"v.genvars.hcl": "styel = \"b\"\n",
	})
	_, diags := Load(dir, Options{VarFiles: []string{"v.genvars.hcl"}})
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
	dir := writeFiles(t, map[string]string{"main.gen.hcl": src})
	a, diags := Load(dir, Options{Vars: []string{`token=["secret-one"]`}})
	if diags.HasErrors() {
		t.Fatal(diagList(diags))
	}
	b, _ := Load(dir, Options{Vars: []string{`token=["secret-two"]`}})
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
	dir2 := writeFiles(t, map[string]string{"main.gen.hcl": `variable "s" { default = "x" }`})
	c1, _ := Load(dir2, Options{})
	c2, _ := Load(dir2, Options{Vars: []string{"s=y"}})
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
output "o" { value = local.word }
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
