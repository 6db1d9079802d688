package views

import (
	"fmt"
	"strings"

	"github.com/genform/genform/internal/operation/outcome"
	"github.com/genform/genform/internal/words"
)

// Every command that shows more than a line has a view of its own here,
// after OpenTofu's command/views: an interface (Plan, Apply, Show, ...)
// with one implementation a format, which its constructor (NewPlan,
// NewApply, ...) picks once from the format the flags chose. The command
// then hands each value an operation returns to a method of its view
// and never asks which format it writes. The JSON implementations write
// the documents of packages formats/...; the human ones write the text
// this package renders. Every view writes errors, diagnostics and
// warnings through its Streams, in the same words whatever the format.

// Format is how a command's output is written, as its flags choose.
type Format int

// The formats. A command takes those its usage documents; a view given
// another writes as Human does.
const (
	// Human is text for a person, in colour on a terminal.
	Human Format = iota
	// JSON is the command's versioned document (docs/formats.md).
	JSON
	// Markdown is the plan as a pull-request comment (plan -format=markdown).
	Markdown
	// Raw is one output value as it is, for a shell (output -raw).
	Raw
)

// Warn writes what an operation went on despite, on stderr.
func (s *Streams) Warn(w outcome.Warning) {
	fmt.Fprintf(s.Stderr, "Warning: %s\n", words.OperationWarning(w))
}

// serviceLine is the plan header's service line: each service the plan
// uses, the reference service first.
func serviceLine(s outcome.Services) string {
	var parts []string
	if r := s.Reference; r != nil {
		if r.Builtin() {
			parts = append(parts, "built-in simulator (outputs are synthetic)")
		} else {
			parts = append(parts, r.BaseURL)
		}
	}
	for _, p := range s.Providers {
		if p.BaseURL != "" {
			parts = append(parts, p.Title+" at "+p.BaseURL)
		} else {
			parts = append(parts, p.Title)
		}
	}
	return strings.Join(parts, "; ")
}
