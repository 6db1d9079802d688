// Package e2e holds the end-to-end tests of genform that are Go tests
// rather than scripts: the reliability tests (an apply killed with SIGKILL
// round after round, a fault soak, hostile and lying services, damaged
// state files, secrets and sensitive values that must never be shown), the
// live progress display read back from a pseudo-terminal, and every
// example run as a user would run it. Each runs the real binary (this
// package's test binary under the name genform, which harness.Main puts in
// PATH) against a simulator or a fake service, and checks what the user
// would see: files, the state, what the service was sent, output text.
//
// It holds no code of genform's and nothing other tests import: what the
// scripts of testdata/script share with these tests is in package
// harness. The scripts themselves stay beside main.go, where
// `go test -run TestScript -u .` updates their golden files; unit tests
// stay beside the code they test.
package e2e
