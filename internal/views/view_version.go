package views

import (
	"fmt"
	"runtime"
)

// Version is the view of genform version.
type Version interface {
	// Version shows genform's version, the Go it was built with and the
	// state schema version it reads and writes.
	Version(version string, schema int)
}

// NewVersion is version's view.
func NewVersion(s *Streams) Version { return versionHuman{s} }

type versionHuman struct{ *Streams }

func (v versionHuman) Version(version string, schema int) {
	fmt.Fprintf(v.Stdout, "genform %s\ngo %s %s/%s\nstate schema %d\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH, schema)
}
