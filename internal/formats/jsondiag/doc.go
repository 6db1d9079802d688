// Package jsondiag is the JSON document of validate -json: every
// diagnostic of a run with its severity, range and source snippet, in the
// shape Terraform's validate -json uses, so tools that read one read the
// other. The human rendering of diagnostics is HCL's own text writer,
// used by the views.
package jsondiag
