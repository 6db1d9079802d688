//go:build !linux

package atomicfile

import (
	"errors"
	"os"
)

// syncfs is never reached where deviceOf says no.
func syncfs(string) error { return errors.ErrUnsupported }

// deviceOf says no: without syncfs(2) a Group leaves each Write to sync
// its own file and directory.
func deviceOf(*os.File) (uint64, bool) { return 0, false }
