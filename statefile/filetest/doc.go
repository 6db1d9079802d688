// Package filetest reads and changes a state's files past genform, for
// tests: the bytes of a file, and a bbolt file changed directly, as
// another tool, a hand edit or a damaged disk would leave it. It holds no
// test of its own, and is imported by tests only.
//
// It imports nothing of genform's, so that statefile's own tests (which
// cannot import a package that imports statefile) use it as well as the
// backends' tests and the end-to-end tests.
package filetest
