// Package pgstate keeps genform's state in PostgreSQL, for a team whose
// working copies share one state. It is a statefile.Backend: the records,
// their encoding, the history, the named operations and the schema
// migrations are statefile's, the same as for the bbolt file (package
// boltstate); this package owns the connection, the tables, the lock and
// who holds it, and the copy kept before a migration. It is the only
// package that imports the PostgreSQL driver (pgx), and no pgx type
// leaves it.
//
// # Tables
//
// In the schema named by the backend block's schema_name (default
// "genform"), created with its tables by the first command that writes:
//
//	buckets(name)                the layout's buckets (statefile's meta,
//	                             resources, intents, protections, history)
//	records(bucket, key, value)  each bucket's keys and values, as bytes,
//	                             primary key (bucket, key)
//	lock_holder(id = 1, pid, host, command, started, backend_pid)
//	                             who holds the lock (see Locking)
//
// The layout's version is statefile's schema_version, in the meta bucket,
// and the same migrations upgrade it; before one runs, the records table
// is copied to records_schema_<old>_backup in the same transaction.
//
// # Connection and transactions
//
// A Store holds one connection for the whole command. Every transaction
// runs on it, one at a time (reads of a snapshot are repeatable-read and
// read-only; writes commit durably before Update returns), so a write can
// never happen without the lock the connection holds. Reading a snapshot
// is one query per bucket. A reader runs all its reads in one such
// transaction, from its first read to Close, so that it reads one
// committed state throughout (see Locking).
//
// # Bounds
//
// No wait for the database is unbounded (bounds.go): connecting
// (connect_timeout, 5 seconds by default), a table lock another session
// holds (lock_timeout, set to 5 seconds), a statement (statement_timeout,
// set to 30 seconds), and each answer, on the client (statement_timeout
// and up to 5 seconds more, for a server that stopped answering). A
// lock_timeout or statement_timeout the connection string sets, in
// options or as a parameter, or PGOPTIONS does, is left as it is. Past a
// bound the error names the state, its host and port, and what waited,
// and matches statefile.ErrUnavailable; a connection whose server did not
// answer, or that was lost, is given up, and every later call fails with
// the same error.
//
// # The connection string
//
// Only pgx's parser reads the connection string (connstr.go), and nothing
// prints it: an error about it names no piece of it. What genform init
// remembers of it (Locate) is a string rebuilt from what pgx made of it:
// hosts, ports, database, user, sslmode and the TLS files, the connect
// timeout; no password, sslpassword or other parameter. Secrets says
// which secrets a connection string holds, for a warning.
//
// # Locking
//
// The lock is a session-level advisory lock keyed by the schema name,
// taken on the Store's connection: exclusive for a command that writes,
// shared for a reader that keeps writers out (Options.KeepWritersOut:
// genform init copying the state elsewhere). Any other reader takes none:
// its repeatable-read transaction reads the state as last committed,
// beside a writer and without waiting for it, and no writer waits for it
// either (a write takes row locks, which reads do not conflict with; a
// migration's only table change creates its backup table). The server
// releases the lock when the connection ends, with the process or not, so
// it cannot go stale. The writer holding it files its pid, host, command
// and start time in lock_holder; a command refused or kept waiting names
// that holder, as for the bbolt file, and a row left by a writer whose
// connection is gone is shown as gone (a reader keeping writers out, or a
// writer not recorded yet, holds the lock then). Options.LockTimeout
// waits, polling pg_try_advisory_lock.
package pgstate
