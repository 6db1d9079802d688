// Package statefile is genform's state store: one bbolt file per working
// directory. It is the only package that imports bbolt, and no bbolt type
// leaves it. It owns the file's layout, its records and their
// encoding, schema migrations, and the exclusive lock with the information
// about who holds it. It does not decide anything: fingerprints, plans,
// output files and their hashes belong to reconcile, which records here what
// it learned.
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
// Addresses are written as in configuration: image.hero, image.hero[0],
// image.hero["red"].
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
