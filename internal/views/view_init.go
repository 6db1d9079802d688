package views

import (
	"fmt"

	"github.com/genform/genform/statefile"
)

// Init is the view of genform init: where the state is kept from now
// on, and what was copied there. Storages are named as package backend
// names them ("the state file genform.state").
type Init interface {
	// Kept says that the state is kept in cur; migrate is whether
	// -migrate-state asked for a move there was no storage to make from.
	Kept(cur string, migrate bool)
	// Reconfigured says that the state is kept in cur from now on, and
	// that what prev holds was left there.
	Reconfigured(cur, prev string)
	// NothingToCopy says that prev held no state to copy into cur.
	NothingToCopy(prev, cur string)
	// Migrated says what was copied from prev into cur.
	Migrated(prev, cur string, c statefile.Copied)
}

// NewInit is init's view.
func NewInit(s *Streams) Init { return initHuman{s} }

type initHuman struct{ *Streams }

func (v initHuman) Kept(cur string, migrate bool) {
	if migrate {
		fmt.Fprintf(v.Stdout, "There is no other storage to migrate from: ")
	}
	fmt.Fprintf(v.Stdout, "The state is kept in %s.\n", cur)
}

func (v initHuman) Reconfigured(cur, prev string) {
	fmt.Fprintf(v.Stdout, "The state is kept in %s from now on; %s was not copied, and is left as it is.\n", cur, prev)
}

func (v initHuman) NothingToCopy(prev, cur string) {
	fmt.Fprintf(v.Stdout, "%s holds no state: nothing to copy. The state is kept in %s from now on.\n", capitalize(prev), cur)
}

func (v initHuman) Migrated(prev, cur string, c statefile.Copied) {
	if c.Unchanged {
		fmt.Fprintf(v.Stdout, "%s holds the state of %s already: nothing was copied.\n", capitalize(cur), prev)
		return
	}
	fmt.Fprintf(v.Stdout, "Copied the state from %s to %s: %s. The state is kept there from now on; %s is left as it is.\n", prev, cur, copiedSummary(c), prev)
}

// capitalize starts s with a capital letter, for a sentence that opens
// with a storage's name.
func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
