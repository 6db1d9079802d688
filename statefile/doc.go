// Package statefile is genform's state store: the layout, the records and
// their encoding, the history, the named operations every command changes
// the state with, the schema migrations, and the storage seam they all run
// over. It does not decide anything: fingerprints, plans, output files and
// their hashes belong to reconcile, which records here what it learned. Nor
// does it know any storage: a backend's package opens one, takes its lock,
// and hands it over.
//
// # Backends
//
// A Store runs over a Backend (backend.go): buckets of byte keys in order,
// read and written in transactions. Everything above it — the layout
// below, the records, validation, the history, the named operations and the
// migrations — is shared, so every backend holds the same bytes under the
// same keys and is versioned by the same migrations. Each backend's
// package opens its storage, takes its lock, and hands the backend to
// OpenBackend: package boltstate keeps the state in one bbolt file per
// working directory (the default), with the file's lock, damage guard,
// page check and pre-migration backup; package pgstate keeps it in
// PostgreSQL for a team. Package storetest is the conformance suite both
// pass. What is shared about the lock is here: who holds it (Holder) and
// the error naming them (LockedError); so are the errors every backend
// and caller meets (CorruptError, NoStateError, LoseError).
//
// Snapshot reads the whole state in one transaction; PlanSnapshot leaves
// out the creation details planning never reads, most of an applied
// record.
//
// # Moving a state
//
// Copy replaces one store's state with another's, byte for byte and
// whatever their backends (genform init -migrate-state). Document and
// Push do the same through the state document (document.go), a
// versioned JSON form of the whole state that genform state pull prints
// and state push reads back. Both refuse, unless forced, to overwrite
// another lineage's records or a newer serial (LoseError).
//
// # Changing the state
//
// A state is changed only through the named operations of Tx, each keeping
// an address's record, intent and protection consistent: RecordIntent before
// a create request is sent and again with the job's id; ClearIntent when
// the service refused it; Record when a generation ends (or is adopted, or
// its files change), which clears the intent; Protect; Forget, which removes
// record, intent and protection and succeeds for an address with only an
// intent, or nothing; Move for a rename; SetService to name the service the
// generations are made with. Record and Move also keep the generation in
// the history (see Layout); RecordHistory files there a generation no
// record holds. Apply, destroy, import and the state
// commands call these and nothing else. Store.Update runs several in one
// transaction, Store.Batch coalesces those of parallel jobs.
//
// # Layout
//
// Schema 2, drawn as the bbolt file nests it (package boltstate: buckets
// ending in /, and keys); another backend keeps the same buckets under
// names of its own:
//
//	genform/                  bucketRoot: everything genform stores
//	├── meta/                 bucketMeta
//	│   ├── schema_version    decimal: the layout version (SchemaVersion)
//	│   ├── lineage           random UUID given at creation, never changed
//	│   ├── serial            decimal: +1 per committed Update that changed something
//	│   ├── service           optional: the service the generations are made with
//	│   └── run_start         optional: the serial before the last writing command's first change
//	├── resources/            bucketResources
//	│   └── <address>         resource record (Resource)
//	├── intents/              bucketIntents
//	│   └── <address>         intent record (Intent): a submission in flight
//	├── protections/          bucketProtections
//	│   └── <address>         protection record (Protection)
//	└── history/              bucketHistory (schema 2 on)
//	    └── <fp>\x00<id>      resource record of a generation (history.go)
//
// The history keeps every generation ever recorded, keyed by its request's
// fingerprint and its generation id: Record and Move file the generation
// a record holds, and the failed one beside it, in the same transaction;
// Forget leaves the history alone. Schema 1 had no history; the migration
// to schema 2 files the generations its records held.
//
// The service key holds the service's identity as it enters fingerprints:
// its base URL, or "simulator" for the built-in one. It was added to schema
// 1 without raising the schema version, because both directions read
// safely. This genform takes a file without it (one written before the key
// existed) as "no service recorded yet", and the next apply or import
// records one. A genform from before the key reads meta keys by name and
// never lists the meta bucket, so it ignores the key. It does not update
// it either: a state that genform applied to another service still names
// the first one, and this genform then asks, as for any switch, for the
// switch to be confirmed (-migrate-service). Raising the schema would have
// made older genforms refuse the file outright, for a key they can do
// without.
//
// Addresses are written as internal/addrs prints them: image.hero,
// image.hero[0], image.hero["red"]. A key written otherwise is reported as
// damaged, since no command could name it.
//
// Records are protocol-buffers-wire-format messages whose field 1 is the
// record format version (see wire.go for why not JSON, and record.go for
// the field numbers). Field numbers are never reused; a new field may be
// added without a schema change, since readers skip fields they do not know.
// A layout change raises SchemaVersion and comes with a migration
// (migrate.go); opening a state applies pending migrations in one
// transaction, after the backend has kept a copy of the old state (the
// bbolt file is copied to <path>.schema-<old>.backup), and refuses a state
// of a newer schema without touching it.
package statefile

// SchemaVersion is the version of the bucket layout this package writes.
const SchemaVersion = 2
