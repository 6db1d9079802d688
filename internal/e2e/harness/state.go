package harness

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/statefile"
	"github.com/genform/genform/statefile/boltstate"
)

// ReadCheckedState opens the state file at path as command would, runs
// bbolt's consistency check and every record's decoder, and returns what
// the file holds. An error from opening is returned as it is, so that a
// caller can tell a missing file (fs.ErrNotExist) from a damaged one.
func ReadCheckedState(path, command string) (*statefile.Snapshot, error) {
	st, err := boltstate.Open(path, statefile.Options{Command: command})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	if err := st.Check(); err != nil {
		return nil, fmt.Errorf("checking state file %s: %w", path, err)
	}
	return st.Snapshot()
}

// CheckOutput reports whether output o of addr is in dir with the sha256
// the state recorded for it.
func CheckOutput(dir string, addr addrs.Instance, o statefile.Output) error {
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(o.Path)))
	if err != nil {
		return fmt.Errorf("%s output %d: %w", addr, o.Index, err)
	}
	if sum := SHA256(b); sum != o.SHA256 {
		return fmt.Errorf("%s output %d (%s): sha256 %s on disk, %s recorded", addr, o.Index, o.Path, sum, o.SHA256)
	}
	return nil
}

// SHA256 is the hex sha256 of b, as the state records it.
func SHA256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
