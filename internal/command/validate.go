package command

import (
	"flag"
	"strings"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/backend"
	"github.com/genform/genform/internal/catalog"
	"github.com/genform/genform/internal/views"
)

func init() {
	register(&command{
		name:     "validate",
		synopsis: "Check whether the configuration is valid",
		usage: `Usage: genform [global options] validate [-json] [-var 'NAME=VALUE'] [-var-file=FILE]

  Reads every *.gen.hcl and *.gen.json file of the working directory and
  checks it: syntax, names, references, types and every value the service
  documents. It contacts no service and reads no state, so it runs anywhere,
  without a token. A variable given no value is checked as unknown, for
  whatever value plan and apply will be given; a value that is given is
  checked against the variable's type and validation blocks.

  Exits 0 when the configuration is valid and 1 otherwise, after printing
  every problem found.

Options:

  -json              Print the result as a JSON document on stdout:
                     {"format_version": "1", "valid": ..., "error_count": ...,
                     "warning_count": ..., "diagnostics": [...]}.

  -var 'NAME=VALUE'  Set a variable. May be repeated; later ones win.

  -var-file=FILE     Read variable values from FILE (*.genvars.hcl). May be
                     repeated; later files win, and -var wins over all.
`,
		run: runValidate,
	})
}

// varList collects the occurrences of -var or -var-file in order.
type varList []string

func (s *varList) String() string { return strings.Join(*s, ",") }

// Set appends one occurrence of the flag.
func (s *varList) Set(v string) error {
	*s = append(*s, v)
	return nil
}

// varFlags are the -var and -var-file flags that every command loading the
// configuration takes (validate, plan, apply, ...). Each is a flag.Value
// collecting its occurrences in command-line order, which is the order of
// precedence.
type varFlags struct {
	vars  varList
	files varList
}

// register adds -var and -var-file to fs.
func (v *varFlags) register(fs *flag.FlagSet) {
	fs.Var(&v.vars, "var", "set a variable: -var 'NAME=VALUE' (repeatable)")
	fs.Var(&v.files, "var-file", "read variable values from a *.genvars.hcl file (repeatable)")
}

// options turns the flags, with the process environment (for
// GENFORM_VAR_<name> and env()), into config.Options.
func (v *varFlags) options(env *Env) config.Options {
	var environ []string
	if env.Environ != nil {
		environ = env.Environ()
	}
	return config.Options{
		Vars:      append([]string(nil), v.vars...),
		VarFiles:  append([]string(nil), v.files...),
		Environ:   environ,
		Providers: catalog.Tables,
	}
}

func runValidate(env *Env, args []string) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	jsonOut := fs.Bool("json", false, "print the result as JSON")
	var vf varFlags
	vf.register(fs)
	if ok, code := parseArgs(env, "validate", fs, args, "no arguments (use -chdir=DIR to validate another directory)", 0); !ok {
		return code
	}
	// As Terraform's: a variable with no value is checked as unknown, for
	// any value it will be given; plan and apply are where one is needed.
	opts := vf.options(env)
	opts.UnknownUnset = true
	cfg, diags := config.Load(".", opts)
	diags = append(diags, backend.Diagnostics(cfg)...)
	// Only here: plan shows what each generation makes in its own way.
	diags = append(diags, cfg.ImageNumberWarnings()...)
	// validate reads no state, so a model shut down is refused whether
	// or not outputs were made with it; plan judges each instance.
	diags = append(diags, cfg.ModelDiagnostics()...)
	if err := views.NewValidate(&env.Streams, formatOf(*jsonOut, views.Human)).Result(cfg.Files, diags); err != nil {
		return env.Errorf("%v", err)
	}
	if diags.HasErrors() {
		return ExitError
	}
	return ExitOK
}
