package views

import (
	"fmt"

	"github.com/fatih/color"
	"github.com/hashicorp/hcl/v2"

	"github.com/genform/genform/internal/formats/jsondiag"
)

// Validate is the view of genform validate.
type Validate interface {
	// Result shows what checking the configuration found: diags, against
	// the configuration's files.
	Result(files map[string]*hcl.File, diags hcl.Diagnostics) error
}

// NewValidate is validate's view in format f: Human, or JSON (the
// diagnostics document).
func NewValidate(s *Streams, f Format) Validate {
	if f == JSON {
		return validateJSON{s}
	}
	return validateHuman{s}
}

type validateHuman struct{ *Streams }

func (v validateHuman) Result(files map[string]*hcl.File, diags hcl.Diagnostics) error {
	Diagnostics(v.Streams, files, diags)
	if diags.HasErrors() {
		return nil
	}
	msg := "Success! The configuration is valid."
	if v.Color {
		msg = color.New(color.FgGreen, color.Bold).Sprint("Success!") + " The configuration is valid."
	}
	fmt.Fprintln(v.Stdout, msg)
	return nil
}

type validateJSON struct{ *Streams }

func (v validateJSON) Result(files map[string]*hcl.File, diags hcl.Diagnostics) error {
	if err := jsondiag.Write(v.Stdout, files, diags); err != nil {
		return fmt.Errorf("writing the result: %w", err)
	}
	return nil
}
