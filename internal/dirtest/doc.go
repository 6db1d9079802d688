// Package dirtest lays out the files of a test in a directory: a
// working directory with its configuration, the files a configuration
// reads, a tree a command runs in. It holds no test of its own, and is
// imported by tests only.
//
// It imports nothing of genform's, so that every package's tests,
// package config's own included, can use it.
package dirtest
