package statefile_test

import (
	"path/filepath"
	"testing"

	"github.com/genform/genform/statefile"
	"github.com/genform/genform/statefile/storetest"
)

// TestConformance runs the backends' conformance suite on the bbolt file.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Opener {
		path := filepath.Join(t.TempDir(), ".genform", "state.db")
		return func(opts statefile.Options) (*statefile.Store, error) { return statefile.Open(path, opts) }
	})
}
