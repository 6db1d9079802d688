// Package providertest is what the live providers' adapter tests share:
// a harness that keeps every error an adapter returns (to prove none
// holds the key), follows a job to its end, and a clock that makes a
// simulator's rate limit refuse every other request for one second;
// Start, which serves a provider's simulator on the loopback and builds
// the adapter against it; requests built from literal bodies, submitted
// and followed to their result (submit.go); the checks every adapter
// passes alike against its simulator (checks.go); and Live, the one paid generation a key's
// holder runs on purpose. It holds no test of its own.
package providertest
