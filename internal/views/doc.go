// Package views writes what people read: the human plan after Terraform's
// (symbols, attribute diffs, prompts as word diffs, the summary and cost
// lines), the plan as a pull-request comment in markdown, the progress of
// an apply (live bars on a terminal, one plain line per change
// otherwise), its closing summary and what to do about what failed, the
// state, one resource and the history, output values, diagnostics with
// their source snippets, and the dependency graph in DOT.
//
// Its words come from package words and what is made from a secret is
// hidden through package secrets, as in the JSON documents (package
// formats/...), which are not written here. Colour is fatih/color's,
// switched off by the command layer. It decides nothing and chooses no
// exit code: a command calls a view with what an operation returned.
package views
