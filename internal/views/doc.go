// Package views writes what people and scripts read of every command:
// one view a command (Plan, Apply, Show, History, Output, State,
// Transfer, Providers, Validate, Import, Init, Gallery, Version, Fmt), an
// interface with an implementation a format (Human, JSON, and Markdown
// for plan's pull-request comment, Raw for output -raw), chosen once by
// its constructor (NewPlan, NewApply, ...) from the format the flags
// chose. A command hands each value its operation returns to its view
// and never asks which format that is. It is OpenTofu's command/views
// for genform.
//
// The human text is rendered here, after Terraform's: the plan (symbols,
// attribute diffs, prompts as word diffs, the summary and cost lines)
// under the header naming the services it uses, the plan as a
// pull-request comment, the progress of an apply (live bars on a
// terminal, one plain line per change otherwise), its closing summary
// and what to do about what failed, the state, one resource and the
// history, output values, diagnostics with their source snippets, the
// warnings operations emit as data (package outcome), and the dependency
// graph in DOT. The JSON implementations call the documents' encoders
// (packages formats/...), which stay the public documents.
//
// Its words come from package words and what is made from a secret is
// hidden through package secrets. Colour is fatih/color's, switched off
// by the command layer. It decides nothing and chooses no exit code, and
// it never imports package operation: what it renders of an operation
// beyond the engine's own types is in package operation/outcome.
package views
