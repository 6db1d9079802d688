package command

import (
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/formats/jsonstate"
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
		v := values[name]
		switch {
		case *asJSON:
			b, err := json.Marshal(config.JSONValue(v))
			if err != nil {
				return env.Errorf("encoding output %s: %v", name, err)
			}
			fmt.Fprintln(env.Stdout, string(b))
		case *raw:
			s, err := views.RawValue(v)
			if err != nil {
				return env.Errorf("output %s: %v", name, err)
			}
			fmt.Fprintln(env.Stdout, s)
		default:
			fmt.Fprintln(env.Stdout, views.Value(v, ""))
		}
		return ExitOK
	}

	sorted := append([]*config.Output(nil), cfg.Outputs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	if *asJSON {
		if err := jsonstate.WriteOutputs(env.Stdout, sorted, values); err != nil {
			return env.Errorf("writing the outputs: %v", err)
		}
		return ExitOK
	}
	if len(sorted) == 0 {
		fmt.Fprintln(env.Stdout, "No outputs. Declare output blocks in the configuration to see values here.")
		return ExitOK
	}
	for _, o := range sorted {
		val := "<sensitive>"
		if !o.Sensitive {
			val = views.Value(values[o.Name], "")
		}
		fmt.Fprintf(env.Stdout, "%s = %s\n", o.Name, val)
	}
	return ExitOK
}
