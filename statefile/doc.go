// Package statefile is genform's state store: one bbolt file per working
// directory. It is the only package that imports bbolt, and no bbolt type
// leaves it. It owns the file's layout, its records and their
// encoding, schema migrations, and the exclusive lock with the information
// about who holds it. It does not decide anything: fingerprints, plans,
// output files and their hashes belong to reconcile, which records here what
// it learned.
//
// # Changing the state
//
// A state is changed only through the named operations of Tx, each keeping
// an address's record, intent and protection consistent: RecordIntent before
// a create request is sent and again with the job's id; ClearIntent when
// the service refused it; Record when a generation ends (or is adopted, or
// its files change), which clears the intent; Protect; Forget, which removes
// record, intent and protection and succeeds for an address with only an
// intent, or nothing; Move for a rename. Apply, destroy, import and the state
// commands call these and nothing else. Store.Update runs several in one
// transaction, Store.Batch coalesces those of parallel jobs.
//
// # Layout
//
// Schema 1, drawn as bbolt buckets (ending in /) and keys:
//
//	genform/                  bucketRoot: everything genform stores
//	├── meta/                 bucketMeta
//	│   ├── schema_version    decimal: the layout version (SchemaVersion)
//	│   ├── lineage           random UUID given at creation, never changed
//	│   └── serial            decimal: +1 per committed Update that changed something
//	├── resources/            bucketResources
//	│   └── <address>         resource record (Resource)
//	├── intents/              bucketIntents
//	│   └── <address>         intent record (Intent): a submission in flight
//	└── protections/          bucketProtections
//	    └── <address>         protection record (Protection)
//
// Addresses are written as config/addrs prints them: image.hero,
// image.hero[0], image.hero["red"]. A key written otherwise is reported as
// damaged, since no command could name it.
//
// Records are protocol-buffers-wire-format messages whose field 1 is the
// record format version (see wire.go for why not JSON, and record.go for
// the field numbers). Field numbers are never reused; a new field may be
// added without a schema change, since readers skip fields they do not know.
// A layout change raises SchemaVersion and comes with a migration
// (migrate.go); Open applies pending migrations in one transaction, after
// copying the file to <path>.schema-<old>.backup, and refuses a file of a
// newer schema without touching it.
//
// Beside the state file, <path>.lock.info holds JSON naming the process
// that holds the lock (see Holder). It exists only while a process holds the
// lock, or after one was killed, until the next one overwrites it.
package statefile

// SchemaVersion is the version of the bucket layout this package writes.
const SchemaVersion = 1
