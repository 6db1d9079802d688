//go:build !linux

package boltstate

import (
	"errors"
	"os"
)

// copyRange has no way here to copy in the kernel: the caller copies.
func copyRange(dst, src *os.File, off, n int64) (int64, error) {
	return 0, errors.ErrUnsupported
}
