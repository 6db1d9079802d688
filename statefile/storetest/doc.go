// Package storetest is the conformance suite every statefile backend
// passes: the bbolt file (boltstate's tests run it) and PostgreSQL
// (pgstate's). It drives a Store only through what commands use (Open,
// the named operations, Snapshot, the history reads, the lock), so a
// backend that passes it behaves, for every command, as the file does.
package storetest
