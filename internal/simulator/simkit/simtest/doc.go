// Package simtest is what the simulators' tests share: a clock a test
// moves by hand from a fixed instant, making a simulator and serving it
// on the loopback, and a request sent
// to it whose JSON answer is decoded, or whose answer is to be lost,
// a running simulator's /_sim/jobs report, and a loopback port held for
// a whole test (Port), so that a simulator restarted at its address
// never finds the port taken by another process. It is imported by tests
// only; its one test is of Port.
package simtest
