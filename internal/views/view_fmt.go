package views

import (
	"fmt"
	"path/filepath"

	"github.com/rogpeppe/go-internal/diff"
)

// Fmt is the view of genform fmt.
type Fmt interface {
	// Changed says that the file name, whose bytes are src, formats as
	// out.
	Changed(name string, src, out []byte)
	// Stdin writes standard input, src, formatted as out.
	Stdin(src, out []byte)
}

// NewFmt is fmt's view: with list it names each file that changes, with
// showDiff it shows how as a unified diff, and with check it never
// writes formatted input.
func NewFmt(s *Streams, list, showDiff, check bool) Fmt {
	return fmtHuman{Streams: s, list: list, diff: showDiff, check: check}
}

type fmtHuman struct {
	*Streams
	list, diff, check bool
}

func (v fmtHuman) Changed(name string, src, out []byte) {
	if v.list {
		fmt.Fprintln(v.Stdout, name)
	}
	if v.diff {
		v.Stdout.Write(diff.Diff("old/"+filepath.ToSlash(name), src, "new/"+filepath.ToSlash(name), out))
	}
}

func (v fmtHuman) Stdin(src, out []byte) {
	switch {
	case v.diff:
		v.Stdout.Write(diff.Diff("old/<stdin>", src, "new/<stdin>", out))
	case !v.check:
		v.Stdout.Write(out)
	}
}
