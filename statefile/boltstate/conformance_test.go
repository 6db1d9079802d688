package boltstate_test

import (
	"path/filepath"
	"testing"

	"github.com/genform/genform/statefile"
	"github.com/genform/genform/statefile/boltstate"
	"github.com/genform/genform/statefile/storetest"
)

// TestConformance runs the backends' conformance suite on the bbolt file,
// each test in a directory of its own.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Opener {
		path := filepath.Join(t.TempDir(), ".genform", "state.db")
		return func(opts statefile.Options) (*statefile.Store, error) { return boltstate.Open(path, opts) }
	})
}
