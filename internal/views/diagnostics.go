package views

import (
	"strconv"

	"github.com/hashicorp/hcl/v2"
)

// diagnosticsWidth is the width diagnostics wrap to when stderr is not a
// terminal (and the most they use on a wide one, to stay readable).
const diagnosticsWidth = 78

// Diagnostics prints every diagnostic of a run to env.Stderr, each with
// the source snippet it points at (files is usually config.Config.Files),
// in colour when env.Color is set. Every command that loads configuration
// uses it, so that all problems are shown together, the same way.
func Diagnostics(env *Streams, files map[string]*hcl.File, diags hcl.Diagnostics) {
	if len(diags) == 0 {
		return
	}
	width := diagnosticsWidth
	// On a terminal narrower than that, wrap to its width (as the shell
	// reports it in COLUMNS) so lines do not wrap twice.
	if IsTerminal(env.Stderr) && env.Getenv != nil {
		if w, err := strconv.Atoi(env.Getenv("COLUMNS")); err == nil && w > 20 && w < width {
			width = w
		}
	}
	w := hcl.NewDiagnosticTextWriter(env.Stderr, files, uint(width), env.Color)
	// The writer only fails when env.Stderr does, and then there is nowhere
	// left to report it.
	_ = w.WriteDiagnostics(diags)
}
