package views

import (
	"fmt"
	"io"

	"github.com/fatih/color"
)

// Streams is where a command's output goes, and how it is written.
type Streams struct {
	Stdout, Stderr io.Writer
	// Color is false with -no-color, NO_COLOR, or when stdout is not a
	// terminal.
	Color bool
	// Getenv reads the process environment (COLUMNS, to wrap
	// diagnostics; GENFORM_IN_AUTOMATION, for plain progress).
	Getenv func(string) string
}

// Errorf prints an error in the house format: "Error: " and the message,
// in red and bold with colour.
func (s *Streams) Errorf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if s.Color {
		fmt.Fprintf(s.Stderr, "%s %s\n", color.New(color.FgRed, color.Bold).Sprint("Error:"), msg)
	} else {
		fmt.Fprintf(s.Stderr, "Error: %s\n", msg)
	}
}

// Automation reports whether GENFORM_IN_AUTOMATION is set: no prompts, no
// progress bars, plain line output.
func (s *Streams) Automation() bool {
	return s.Getenv != nil && s.Getenv("GENFORM_IN_AUTOMATION") != ""
}

// Bold is s in bold, when colour is on.
func Bold(s string) string { return colBold.Sprint(s) }

// Success is s as a success is announced: green and bold, when colour is
// on.
func Success(s string) string { return colGreen.Sprint(colBold.Sprint(s)) }
