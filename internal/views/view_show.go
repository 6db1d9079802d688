package views

import (
	"fmt"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/formats/jsonplan"
	"github.com/genform/genform/internal/formats/jsonstate"
	"github.com/genform/genform/internal/history"
	"github.com/genform/genform/internal/operation/outcome"
	"github.com/genform/genform/internal/secrets"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// ShownState is the state as show, state show and history read it: one
// committed state and its history.
type ShownState struct {
	// Snapshot is nil when there is no state.
	Snapshot *statefile.Snapshot
	History  *history.View
	// Hider hides what the configuration makes from a secret.
	Hider *secrets.Hider
	// Service is the service identity the configuration points at, which
	// the state document names.
	Service string
	// Store is whether an object store is configured.
	Store bool
}

// Show is the view of genform show and genform state show.
type Show interface {
	// Plan shows a saved plan as plan showed it; services are those its
	// changes are made with.
	Plan(p *plans.Plan, services outcome.Services) error
	// State shows the whole state.
	State(st ShownState) error
	// Resource shows every attribute of the instance at addr, which st
	// records, and its history.
	Resource(st ShownState, addr addrs.Instance) error
}

// NewShow is show's view in format f: Human, or JSON (the state
// document, or the plan document for a saved plan).
func NewShow(s *Streams, f Format) Show {
	if f == JSON {
		return showJSON{s}
	}
	return showHuman{s}
}

type showHuman struct{ *Streams }

func (v showHuman) Plan(p *plans.Plan, services outcome.Services) error {
	writePlan(v.Stdout, p, serviceLine(services))
	return nil
}

func (v showHuman) State(st ShownState) error {
	snap := st.Snapshot
	switch {
	case snap == nil:
		fmt.Fprintln(v.Stdout, "No state. Nothing has been applied in this directory yet.")
	case len(snap.Resources) == 0 && len(snap.Intents) == 0:
		fmt.Fprintln(v.Stdout, "The state is empty: no resources are managed.")
	default:
		writeStateSummary(v.Stdout, snap, st.Hider, st.Store)
	}
	return nil
}

func (v showHuman) Resource(st ShownState, addr addrs.Instance) error {
	writeResource(v.Stdout, st.Snapshot, addr, st.Hider, st.Store)
	if entries := st.History.Of(addr); len(entries) > 0 {
		fmt.Fprintf(v.Stdout, "\n%s\n", Bold(fmt.Sprintf("# history of %s (newest first; 'genform history' lists every instance's):", addr)))
		differ := historyDiffers(entries)
		for _, e := range entries {
			fmt.Fprintf(v.Stdout, "#   %s\n", historyLine(st.History, e, addr, differ))
		}
	}
	return nil
}

type showJSON struct{ *Streams }

func (v showJSON) Plan(p *plans.Plan, _ outcome.Services) error {
	if err := jsonplan.Write(v.Stdout, p); err != nil {
		return fmt.Errorf("writing the plan: %w", err)
	}
	return nil
}

func (v showJSON) State(st ShownState) error {
	return v.write(st.Snapshot, st, st.History.Entries())
}

// Resource writes the state document holding that instance alone: its
// record, protection and unfinished submission, and its history.
func (v showJSON) Resource(st ShownState, addr addrs.Instance) error {
	snap := st.Snapshot
	one := &statefile.Snapshot{
		Meta:        snap.Meta,
		Resources:   map[addrs.Instance]*statefile.Resource{addr: snap.Resources[addr]},
		Protections: snap.Protections,
	}
	if it := snap.Intents[addr]; it != nil {
		one.Intents = map[addrs.Instance]*statefile.Intent{addr: it}
	}
	return v.write(one, st, st.History.Of(addr))
}

func (v showJSON) write(snap *statefile.Snapshot, st ShownState, entries []*statefile.Resource) error {
	if err := jsonstate.Write(v.Stdout, snap, st.Service, st.Hider, st.History, entries); err != nil {
		return fmt.Errorf("writing the state: %w", err)
	}
	return nil
}

// History is the view of genform history.
type History interface {
	// History shows the generations st's history holds of addr, or of
	// every instance when addr is zero.
	History(st ShownState, addr addrs.Instance) error
}

// NewHistory is history's view in format f: Human, or JSON (the history
// document).
func NewHistory(s *Streams, f Format) History {
	if f == JSON {
		return historyJSON{s}
	}
	return historyHuman{s}
}

type historyHuman struct{ *Streams }

func (v historyHuman) History(st ShownState, addr addrs.Instance) error {
	entries := st.History.Of(addr)
	switch {
	case st.Snapshot == nil:
		fmt.Fprintln(v.Stdout, "No state. Nothing has been applied in this directory yet.")
	case len(entries) == 0 && !addr.IsZero():
		fmt.Fprintf(v.Stdout, "The history holds no generation of %s.\n", addr)
	case len(entries) == 0:
		fmt.Fprintln(v.Stdout, "The history is empty: nothing has been generated yet.")
	default:
		writeHistory(v.Stdout, st.History, entries)
	}
	return nil
}

type historyJSON struct{ *Streams }

func (v historyJSON) History(st ShownState, addr addrs.Instance) error {
	if err := jsonstate.WriteHistory(v.Stdout, st.History, st.History.Of(addr)); err != nil {
		return fmt.Errorf("writing the history: %w", err)
	}
	return nil
}
