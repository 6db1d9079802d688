package statefile

import (
	"errors"
	"fmt"
)

// migration upgrades a state by one schema version. Like containerd's
// metadata migrations, each one is a function of the raw transaction (of
// the storage seam, so every backend runs the same migrations), since it
// must read the layout of the version before it.
type migration struct {
	// schemaVersion is the version the file has once migrate has run.
	schemaVersion int
	// name says what the migration does, for errors and the commit log.
	name    string
	migrate func(tx RawTx) error
	// readable says that a reader of this build reads the layout before
	// the migration as is, so a read-only command need not wait for a
	// writer to upgrade the file.
	readable bool
}

// readableAsIs reports whether every migration past schema from is
// readable, so a file of that schema is read without upgrading it.
func readableAsIs(from int) bool {
	for _, m := range migrations {
		if m.schemaVersion > from && m.schemaVersion <= currentSchema && !m.readable {
			return false
		}
	}
	return true
}

// migrations lists every schema change in order. To change the layout:
// raise SchemaVersion, append a migration whose schemaVersion is the new
// value, and add a test that builds a file in the old layout and opens it.
var migrations = []migration{
	// A reader takes a file without the history as one with an empty
	// history (Store.noHistory).
	{2, "keep every recorded generation in a history", migrateHistory, true},
}

// currentSchema is the schema this build writes. It is SchemaVersion; the
// tests raise it together with an injected migration, to exercise the
// upgrade path before a real second schema exists.
var currentSchema = SchemaVersion

// migrate brings the state from schema from up to currentSchema in one
// transaction, so a failing migration leaves it as it was. The backend
// keeps a copy of the old state first (a bbolt file is copied to
// path.schema-N.backup, a PostgreSQL state's records to a table beside
// them), so a user who must go back to the older genform still can.
func (s *Store) migrate(from int) error {
	return s.be.Migrate(from, func(tx RawTx) error {
		for _, m := range migrations {
			if m.schemaVersion <= from || m.schemaVersion > currentSchema {
				continue
			}
			if err := m.migrate(tx); err != nil {
				return fmt.Errorf("migrating %s %s to schema %d (%s): %w", s.what(), s.path, m.schemaVersion, m.name, err)
			}
		}
		meta, err := tx.Bucket(bucketMeta)
		if err != nil {
			return err
		}
		if meta == nil {
			return errors.New("meta bucket disappeared during migration")
		}
		return meta.Put(keySchemaVersion, formatUint(uint64(currentSchema)))
	})
}
