package boltstate

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/genform/genform/statefile"
)

// backupInfix and backupSuffix frame the schema version in the name of the
// copy migrate makes before it upgrades a file: <path>.schema-<N>.backup.
const (
	backupInfix  = ".schema-"
	backupSuffix = ".backup"
)

// backupPath is where migrate copies the file at path, of schema from,
// before it upgrades it.
func backupPath(path string, from int) string {
	return path + backupInfix + strconv.Itoa(from) + backupSuffix
}

// findBackup returns the newest copy migrate made of the file at path (the
// one of the highest schema), or "" when there is none. A link is not
// offered: restoring from it could copy a file from anywhere.
func findBackup(path string) string {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	best, bestV := "", -1
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), base+backupInfix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		v, err := strconv.Atoi(strings.TrimSuffix(rest, backupSuffix))
		if err != nil || !strings.HasSuffix(rest, backupSuffix) || v <= bestV {
			continue
		}
		best, bestV = filepath.Join(filepath.Dir(path), e.Name()), v
	}
	return best
}

// nameBackup fills in the Backup of a *statefile.CorruptError about the
// file at path.
func nameBackup(err error, path string) {
	var ce *statefile.CorruptError
	if errors.As(err, &ce) && ce.Backup == "" && ce.Path == path {
		ce.Backup = findBackup(path)
	}
}

// writeBackup copies the database as tx sees it, and syncs the copy: the
// backup matters most after a crash. A link at path is not followed (migrate
// refuses one first), so that it cannot make genform overwrite a file
// elsewhere.
func writeBackup(tx *bolt.Tx, path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|oNoFollow, 0o600)
	if err != nil {
		return err
	}
	_, err = tx.WriteTo(f)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}
