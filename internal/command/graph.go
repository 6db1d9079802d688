package command

import (
	"flag"

	"github.com/genform/genform/internal/views"
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
	if ok, code := parseArgs(env, "graph", fs, args, "no arguments", 0); !ok {
		return code
	}
	ws := load(env, vf.options(env))
	if ws == nil {
		return ExitError
	}
	cfg := ws.Config
	views.Graph(env.Stdout, cfg)
	return ExitOK
}
