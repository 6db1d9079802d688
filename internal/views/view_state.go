package views

import (
	"bytes"
	"fmt"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/operation/outcome"
	"github.com/genform/genform/internal/words"
	"github.com/genform/genform/statefile"
)

// State is the view of the state subcommands but show (which is Show's):
// list, rm, mv, pull and push. It has one format: pull's document is the
// state's own (statefile.Document).
type State interface {
	// List lists addresses, one a line.
	List(list []addrs.Instance)
	// Removed says which instances state rm forgot.
	Removed(forgotten []outcome.Forgotten)
	// Moved says that state mv moved one instance, as it moves it.
	Moved(m outcome.Moved)
	// MovedAll ends state mv, which moved n instances.
	MovedAll(n int)
	// Document writes the state document of state pull, whole or not at
	// all.
	Document(doc *statefile.Document) error
	// SensitiveHeld warns that the document holds, in clear, what the
	// requests of the instances held were made from sensitive values.
	SensitiveHeld(held []string)
	// Pushed says what state push copied from from into the state at
	// where.
	Pushed(from, where string, c statefile.Copied)
}

// NewState is the view of the state subcommands.
func NewState(s *Streams) State { return stateHuman{s} }

type stateHuman struct{ *Streams }

func (v stateHuman) List(list []addrs.Instance) {
	for _, a := range list {
		fmt.Fprintln(v.Stdout, a)
	}
}

func (v stateHuman) Removed(forgotten []outcome.Forgotten) {
	for _, f := range forgotten {
		fmt.Fprintf(v.Stdout, "Removed %s\n", f.Addr)
		if f.AbandonedJob != "" {
			fmt.Fprintf(v.Stdout, "  job %s, submitted by an interrupted apply, is no longer followed\n", f.AbandonedJob)
		}
	}
	fmt.Fprintf(v.Stdout, "Successfully removed %d resource instance%s. Their files stay on disk; genform no longer manages them.\n", len(forgotten), words.Plural(len(forgotten)))
}

func (v stateHuman) Moved(m outcome.Moved) {
	fmt.Fprintf(v.Stdout, "Moved %s to %s\n", m.Src, m.Dst)
	if m.Files > 0 || m.FromDir != m.ToDir {
		fmt.Fprintf(v.Stdout, "  %d file%s moved from %s to %s\n", m.Files, words.Plural(m.Files), m.FromDir, m.ToDir)
	}
}

func (v stateHuman) MovedAll(n int) {
	fmt.Fprintf(v.Stdout, "Successfully moved %d resource instance%s.\n", n, words.Plural(n))
}

func (v stateHuman) Document(doc *statefile.Document) error {
	// The whole document is made before anything is printed: a failure
	// leaves no half document on standard output.
	var buf bytes.Buffer
	if err := statefile.WriteDocument(&buf, doc); err != nil {
		return fmt.Errorf("writing the state document: %w", err)
	}
	if _, err := v.Stdout.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("writing the state document: %w", err)
	}
	return nil
}

func (v stateHuman) SensitiveHeld(held []string) {
	if len(held) > 0 {
		fmt.Fprintf(v.Stderr, "Warning: the state document holds values made from sensitive variables, as they were sent (the requests of %s), in clear: state push needs them to restore the state. Keep the document as you keep the state, and do not paste it anywhere public.\n", words.List(held, 5))
	}
}

func (v stateHuman) Pushed(from, where string, c statefile.Copied) {
	if c.Unchanged {
		fmt.Fprintf(v.Stdout, "%s already holds this state: nothing was changed.\n", where)
		return
	}
	fmt.Fprintf(v.Stdout, "Pushed %s to %s: %s.\n", from, where, copiedSummary(c))
}

// copiedSummary says what a copy of a state (state push, init
// -migrate-state) carried.
func copiedSummary(c statefile.Copied) string {
	return fmt.Sprintf("%d resource instance%s, %d unfinished submission%s, %d generation%s in the history",
		c.Resources, words.Plural(c.Resources), c.Intents, words.Plural(c.Intents), c.History, words.Plural(c.History))
}
