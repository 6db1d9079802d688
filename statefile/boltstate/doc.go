// Package boltstate keeps genform's state in one bbolt file per working
// directory, the default storage. It is a statefile.Backend: the records,
// their encoding, the history, the named operations and the schema
// migrations are statefile's, the same as for PostgreSQL; this package
// owns the file, its lock and who holds it, the copies a writer makes for
// readers, the guard against a damaged file, and the copy kept before a
// migration. It is the only package that
// imports bbolt, and no bbolt type leaves it.
//
// # File
//
// The buckets of statefile's layout are nested in one bucket, genform
// (bucketRoot), as statefile's drawing shows them: its presence is what
// makes a bbolt file a genform state file. Open creates the file with mode 0600, and
// its missing parent directories with 0700, when Options.Create says so.
// Before a migration runs, the file is copied, in the transaction that
// migrates it and synced, to <path>.schema-<old>.backup, which a
// CorruptError names when there is one. IsStateFile tells such a file
// from a state document by its first bytes.
//
// # Transactions
//
// Reads run beside each other and beside the one writer (bbolt's
// copy-on-write pages); writes run one at a time and commit with an fsync
// before Update returns. Batch is bbolt's DB.Batch: the steps of parallel
// jobs arriving within 2 ms share one transaction and one fsync. A
// read-only scan of the file gives the pages it has read back to the
// kernel as it goes (release_linux.go), so reading every record of a large
// state does not keep the file resident.
//
// # Locking
//
// A Store holds bbolt's lock on the file until Close: exclusive for a
// command that writes; shared for one opened ReadOnly while no writer
// holds the lock, which reads beside other readers, writes nothing (it
// works on a read-only file system) and keeps a writer waiting while it
// reads. Beside the state file, <path>.lock.info holds JSON naming the
// writer that holds the lock (see statefile.Holder), and saying that it
// makes copies for readers. It exists only while a writer holds the lock,
// or after one was killed, until the next one overwrites it.
//
// # Reading beside a writer
//
// A reader does not wait for a writer (readcopy.go): it cannot read the
// file without the lock, so it asks the writer, by creating
// <path>.read-request, for a copy of the state as last committed, which
// the writer writes from a read transaction to <path>.read; the reader
// opens that copy read-only instead of the file, and reads it to its
// Close. It takes only a copy holding every commit made before it asked.
// A writer removes its copy and any request when it lets go of the lock,
// and what one killed before it left when it takes it. A reader that gets
// no answer (a writer from before copies, a read-only checkout) waits for
// the lock as before, up to Options.LockTimeout.
//
// # A file that is not what it should be
//
// The state file, the holder info, the backup, and the copy for readers
// and the request for it beside it are opened only as regular files,
// never through a symbolic link (links.go, readcopy.go). A file
// bbolt cannot read is refused with a statefile.CorruptError that says
// how to restore it, and left as it is: Open checks the header before
// bbolt maps the file (precheck.go), every use of bbolt turns the panics
// and memory faults a damaged page causes into that error (guard.go), and
// the first write of a Store runs bbolt's consistency check first, so that
// nothing is written into a file whose free pages are in use (verify.go).
package boltstate
