// Package jsonplan is the public JSON document of a plan, as plan -json
// and show -json PLANFILE print it: format_version "1", whose fields are
// only ever added, so scripts can rely on it. It encodes the engine's
// plan model, which has no JSON tags and may change without the document
// changing. The saved plan file (package planfile) reuses its encoding of
// a change's values and of the prices.
//
// Reasons are written with package words and sensitive values replaced
// through package secrets, as in every other view. It does not read a
// plan back (the document is for scripts, not for apply).
package jsonplan
