// Package jsonproviders is what genform providers -json prints: every
// live provider genform speaks, with what its models make and take (and,
// for a model whose retirement is announced, its dates), how a
// lost create is found again, whether a job can be cancelled, how long
// its output URLs live, its default limits and the environment variable
// of its key. Its FormatVersion is "1", and fields are only ever added.
//
// It encodes package catalog's tables and decides nothing.
package jsonproviders
