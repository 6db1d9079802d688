package command

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
)

func init() {
	register(&command{
		name:     "graph",
		synopsis: "Print the dependency graph of the resources in DOT",
		usage: `Usage: genform graph [flags]

  Prints the resource instances of the configuration and what each is made
  from, as a Graphviz DOT graph: an edge A -> B means A refers to B (a
  video made from an image points at the image), so B is generated first.
  It reads neither the state nor the network. A resource whose count or
  for_each depends on another resource's outputs is one node, since its
  instances are known only after apply.

    genform graph | dot -Tsvg > graph.svg

Flags:
  -var 'NAME=VALUE'    set a variable (repeatable)
  -var-file=FILE       read variables from a *.genvars.hcl file (repeatable)
`,
		run: runGraph,
	})
}

func runGraph(env *Env, args []string) int {
	fs := flag.NewFlagSet("graph", flag.ContinueOnError)
	var vf varFlags
	vf.register(fs)
	if ok, code := parseFlags(env, commands["graph"], fs, args); !ok {
		return code
	}
	if msg := extraArgs("graph", "no arguments", fs, args, 0); msg != "" {
		return env.Errorf("%s", msg)
	}
	cfg := loadConfig(env, vf.options(env))
	if cfg == nil {
		return ExitError
	}
	writeGraph(env.Stdout, cfg)
	return ExitOK
}

// writeGraph writes the DOT graph of cfg's resource instances, expanded
// with every resource unknown (graph reads no state). Nodes come in the
// configuration's dependency order, each followed by its edges, so the
// output is the same from run to run.
func writeGraph(w io.Writer, cfg *config.Config) {
	nodes := map[addrs.Resource][]string{} // a resource's node names
	fmt.Fprintln(w, "digraph genform {")
	fmt.Fprintln(w, `  rankdir = "RL";`)
	scope := config.Scope{}
	for _, r := range cfg.Resources {
		insts, diags := cfg.Expand(r, scope)
		var names []string
		if diags.HasErrors() {
			names = []string{r.Addr().String()}
		} else {
			for _, inst := range insts {
				names = append(names, inst.Addr.String())
			}
		}
		nodes[r.Addr()] = names
		shape := "box"
		if r.Kind == addrs.Video {
			shape = "ellipse"
		}
		for _, n := range names {
			fmt.Fprintf(w, "  %s [shape = %q];\n", dotQuote(n), shape)
			for _, ref := range r.Refs {
				for _, to := range nodes[ref] {
					fmt.Fprintf(w, "  %s -> %s;\n", dotQuote(n), dotQuote(to))
				}
			}
		}
	}
	fmt.Fprintln(w, "}")
}

// dotQuote quotes an identifier for DOT, whose strings escape only the
// double quote (and the backslash before it).
func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
