package command

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/genform/genform/internal/dirtest"
	"github.com/genform/genform/internal/formats/jsondiag"
	"github.com/genform/genform/internal/views"
)

// cmdEnv is an Env for running one command in-process, with the given
// environment.
func cmdEnv(environ ...string) (*Env, *bytes.Buffer, *bytes.Buffer) {
	var stdout, stderr bytes.Buffer
	lookup := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		lookup[k] = v
	}
	return &Env{
		Streams: views.Streams{Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return lookup[k] }},
		Stdin:   strings.NewReader(""),
		Environ: func() []string { return environ },
	}, &stdout, &stderr
}

// inDir writes files into a new directory and makes it the working
// directory for the rest of the test.
func inDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := dirtest.New(t, files)
	t.Chdir(dir)
	return dir
}

func TestValidate(t *testing.T) {
	const valid = "variable \"style\" {}\nimage \"a\" {\n  prompt = \"a ${var.style}\"\n  image_number = 1\n}\n"
	const bad = "image \"a\" {\n  prompt = \"a\"\n  seed = \"x\"\n}\n"
	tests := []struct {
		name    string
		files   map[string]string
		args    []string
		environ []string
		code    int
		stdout  string
		stderr  string
		absent  string // in neither stdout nor stderr
	}{
		{name: "valid", files: map[string]string{"main.gen.hcl": valid}, args: []string{"-var", "style=noir"}, code: ExitOK, stdout: "Success! The configuration is valid.\n"},
		{name: "variable from the environment", files: map[string]string{"main.gen.hcl": valid}, environ: []string{"GENFORM_VAR_style=noir"}, code: ExitOK, stdout: "Success!"},
		{name: "variable from a file", files: map[string]string{"main.gen.hcl": valid, "v.genvars.hcl": `style = "noir"`}, args: []string{"-var-file=v.genvars.hcl"}, code: ExitOK, stdout: "Success!"},
		// As Terraform's: a variable with no value is checked as unknown.
		{name: "missing variable", files: map[string]string{"main.gen.hcl": valid}, code: ExitOK, stdout: "Success!", absent: "variable"},
		{name: "given variable still checked", files: map[string]string{"main.gen.hcl": "variable \"n\" {\n  type = number\n}\nimage \"a\" {\n  prompt = \"a\"\n  image_number = var.n\n}\n"}, args: []string{"-var", "n=x"}, code: ExitError, stderr: "Error: Invalid value for variable"},
		{name: "default image_number", files: map[string]string{"main.gen.hcl": "image \"a\" {\n  prompt = \"a\"\n}\n"}, code: ExitOK, stdout: "Success!", stderr: "Warning: image_number not set"},
		{name: "snippet", files: map[string]string{"main.gen.hcl": bad}, code: ExitError, stderr: "   3:   seed = \"x\""},
		{name: "no files", files: map[string]string{}, code: ExitError, stderr: "Error: No configuration files"},
		{name: "argument", files: map[string]string{"main.gen.hcl": valid}, args: []string{"somewhere"}, code: ExitError, stderr: "validate takes no arguments"},
		{name: "json valid", files: map[string]string{"main.gen.hcl": valid}, args: []string{"-json", "-var=style=x"}, code: ExitOK, stdout: `"valid": true`},
		{name: "json invalid", files: map[string]string{"main.gen.hcl": bad}, args: []string{"-json"}, code: ExitError, stdout: `"error_count": 1`},
		{name: "json warning", files: map[string]string{"main.gen.hcl": "image \"a\" {\n  prompt = \"a\"\n}\n"}, args: []string{"-json"}, code: ExitOK, stdout: `"warning_count": 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inDir(t, tt.files)
			env, stdout, stderr := cmdEnv(tt.environ...)
			code := runValidate(env, tt.args)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			if !strings.Contains(stdout.String(), tt.stdout) {
				t.Errorf("stdout %q does not contain %q", stdout, tt.stdout)
			}
			if !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stderr %q does not contain %q", stderr, tt.stderr)
			}
			if tt.absent != "" && strings.Contains(stdout.String()+stderr.String(), tt.absent) {
				t.Errorf("output %q%q contains %q", stdout, stderr, tt.absent)
			}
			if _, err := os.Stat(".genform"); err == nil {
				t.Errorf("validate created .genform")
			}
		})
	}
}

func TestVarFlagsKeepOrder(t *testing.T) {
	var vf varFlags
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	vf.register(fs)
	if err := fs.Parse([]string{"-var", "a=1", "-var-file=one.genvars.hcl", "-var=a=2", "-var-file", "two.genvars.hcl"}); err != nil {
		t.Fatal(err)
	}
	env, _, _ := cmdEnv("GENFORM_VAR_a=0")
	o := vf.options(env)
	if strings.Join(o.Vars, " ") != "a=1 a=2" || strings.Join(o.VarFiles, " ") != "one.genvars.hcl two.genvars.hcl" {
		t.Errorf("options = %+v", o)
	}
	if len(o.Environ) != 1 || o.Environ[0] != "GENFORM_VAR_a=0" {
		t.Errorf("environment = %v", o.Environ)
	}
}

func TestValidateJSONDocument(t *testing.T) {
	inDir(t, map[string]string{"main.gen.hcl": "image \"a\" {\n  prompt     = \"a\"\n  resolution = 900\n}\n"})
	env, stdout, _ := cmdEnv()
	if code := runValidate(env, []string{"-json"}); code != ExitError {
		t.Fatalf("exit %d", code)
	}
	var doc jsondiag.Document
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.FormatVersion != "1" || doc.Valid || doc.ErrorCount != 1 || len(doc.Diagnostics) != 1 {
		t.Fatalf("document = %+v", doc)
	}
	d := doc.Diagnostics[0]
	if d.Severity != "error" || d.Summary != "Invalid resolution" || d.Range == nil || d.Range.Filename != "main.gen.hcl" || d.Range.Start.Line != 3 {
		t.Errorf("diagnostic = %+v", d)
	}
	s := d.Snippet
	if s == nil || s.Code != "  resolution = 900" || s.StartLine != 3 || s.Code[s.HighlightStartOffset:s.HighlightEndOffset] != "900" || s.Context == nil || *s.Context != `image "a"` {
		t.Errorf("snippet = %+v", s)
	}
}
