package views

import (
	"fmt"
	"io"
	"strings"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
)

// Graph writes the DOT graph of cfg's resource instances, expanded
// with every resource unknown (graph reads no state). Nodes come in the
// configuration's dependency order, each followed by its edges, so the
// output is the same from run to run.
func Graph(w io.Writer, cfg *config.Config) {
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
