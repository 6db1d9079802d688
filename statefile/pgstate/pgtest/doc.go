// Package pgtest gives tests a real PostgreSQL server: Debian's, started
// from its binaries (initdb, postgres) in a temporary directory on a free
// loopback port, once per test binary, and stopped by Run when the tests
// end. Each caller gets a database of its own on it. It does not install
// PostgreSQL: `make test` does (the postgres target), and a machine without
// it fails the tests that need it with a message saying so.
//
// PostgreSQL refuses to run as root, and the tests run as root on the
// project's machines: the server then runs as the postgres system user
// (Debian's package creates it; failing that, Start creates it), owning
// the temporary directory.
package pgtest
