package command

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/views"
	"github.com/genform/genform/reconcile"
)

func init() {
	register(&command{
		name:     "output",
		synopsis: "Print the values of the configuration's outputs",
		usage: `Usage: genform output [flags] [NAME]

  Evaluates the output blocks against the state: values that depend on a
  resource not generated yet show as (known after apply). Without NAME it
  prints every output, sensitive ones hidden; with NAME only that value.

Flags:
  -json                print JSON: {"NAME": {"value": ..., "type": ...,
                       "sensitive": BOOL, "known": BOOL}, ...}, or with
                       NAME the value alone
  -raw                 with NAME, print a string, number or bool as it is,
                       without quotes, for use in shell scripts
` + readFlagsUsage,
		run: runOutput,
	})
}

func runOutput(env *Env, args []string) int {
	fs := flag.NewFlagSet("output", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "")
	raw := fs.Bool("raw", false, "")
	var rf readFlags
	rf.register(fs)
	if ok, code := parseArgs(env, "output", fs, args, "at most one argument, the name of an output", 1); !ok {
		return code
	}
	name := fs.Arg(0)
	if *raw && (name == "" || *asJSON) {
		return env.Errorf("-raw prints one value: pass the output's NAME, and not -json")
	}
	format := views.Human
	if *raw {
		format = views.Raw
	}
	view := views.NewOutput(&env.Streams, formatOf(*asJSON, format))
	ws, unset := loadForReading(env, rf.vars.options(env))
	if ws == nil {
		return ExitError
	}
	cfg := ws.Config
	var decl *config.Output
	names := make([]string, 0, len(cfg.Outputs))
	for _, o := range cfg.Outputs {
		names = append(names, o.Name)
		if o.Name == name {
			decl = o
		}
	}
	if name != "" && decl == nil {
		msg := fmt.Sprintf("there is no output named %q", name)
		if s := config.Suggest(name, names); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		if len(names) == 0 {
			return env.Errorf("%s: the configuration declares no output blocks", msg)
		}
		return env.Errorf("%s (declared: %s)", msg, strings.Join(names, ", "))
	}
	snap, err := ws.Snapshot("output", rf.lockTimeout)
	if err != nil {
		return env.Errorf("%v", err)
	}
	scope, _, _ := reconcile.StateScope(cfg, snap)
	values, diags := cfg.EvalOutputs(scope)
	if len(unset) > 0 {
		// A value shown as not known may be made from a variable left
		// unset: then the user must set it, not wait for an apply.
		for _, o := range cfg.Outputs {
			if (name == "" || o.Name == name) && !values[o.Name].IsWhollyKnown() {
				diags = append(slices.Clip(unset), diags...)
				break
			}
		}
	}
	if len(diags) > 0 {
		views.Diagnostics(&env.Streams, cfg.Files, diags)
	}
	if diags.HasErrors() {
		return ExitError
	}

	if decl != nil {
		err = view.Value(name, values[name])
	} else {
		err = view.Values(cfg.Outputs, values)
	}
	if err != nil {
		return env.Errorf("%v", err)
	}
	return ExitOK
}
