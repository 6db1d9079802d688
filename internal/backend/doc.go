// Package backend chooses, in one place, where a working copy's state is
// kept and opens it: the bbolt state file (package statefile/boltstate),
// or a PostgreSQL schema (package statefile/pgstate) when the
// configuration has a backend "pg" block. It remembers the choice in
// .genform/backend.json (File: the type and where, never a password), so
// that a configuration that names another storage stops every command
// until genform init says what to do with the state (Check): otherwise
// the state would seem empty there, and an apply would pay again for
// everything.
//
// It owns the remembered file's format, the errors that say which
// storage is which, and the diagnostics of the backend block's conn_str
// as the PostgreSQL driver reads it (Diagnostics: a password written into
// it draws a warning). It does not copy a state from one storage to another
// (statefile.Copy does, called by init) and reads nothing but where the
// state is.
package backend
