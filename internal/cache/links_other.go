//go:build !unix

package cache

import (
	"errors"
	"io/fs"
	"os"
)

// links is the number of hard links to a file; where the file system does
// not say, every entry counts as the cache's own.
func links(fs.FileInfo) uint64 { return 1 }

// linkIn and linkOut are not made where the directory cannot be held
// open for linkat: the cache copies instead.
func linkIn(*os.Root, string, string) error { return errors.ErrUnsupported }

func linkOut(*os.Root, string, string) error { return errors.ErrUnsupported }
