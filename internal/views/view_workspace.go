package views

import (
	"fmt"
	"strings"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/operation/outcome"
	"github.com/genform/genform/internal/words"
)

// Workspace is the view of genform workspace's subcommands.
type Workspace interface {
	// List lists the workspaces, marking the selected one with '*'.
	List(names []string, selected string)
	// Show prints the selected workspace's name.
	Show(name string)
	// Created says workspace name was made; switched is whether it is
	// now the one selected (GENFORM_WORKSPACE, when set, keeps its own).
	Created(name string, switched bool, env string)
	// Switched says workspace name is now the one selected.
	Switched(name string)
	// Deleted says what deleting a workspace did.
	Deleted(d outcome.WorkspaceDeleted)
}

// NewWorkspace is the view of the workspace subcommands.
func NewWorkspace(s *Streams) Workspace { return workspaceHuman{s} }

type workspaceHuman struct{ *Streams }

func (v workspaceHuman) List(names []string, selected string) {
	for _, n := range names {
		mark := " "
		if n == selected {
			mark = "*"
		}
		fmt.Fprintf(v.Stdout, "%s %s\n", mark, n)
	}
}

func (v workspaceHuman) Show(name string) { fmt.Fprintln(v.Stdout, name) }

func (v workspaceHuman) Created(name string, switched bool, env string) {
	if switched {
		fmt.Fprintf(v.Stdout, "Created and switched to workspace %q.\n\nIts state is new and empty: plan and apply here restore what another workspace made of the same requests, and generate the rest.\n", name)
		return
	}
	fmt.Fprintf(v.Stdout, "Created workspace %q. %s selects the workspace this shell uses; set it to %s to use this one.\n", name, env, name)
}

func (v workspaceHuman) Switched(name string) {
	fmt.Fprintf(v.Stdout, "Switched to workspace %q.\n", name)
}

func (v workspaceHuman) Deleted(d outcome.WorkspaceDeleted) {
	fmt.Fprintf(v.Stdout, "Deleted workspace %q.\n", d.Name)
	if n := len(d.Managed); n > 0 {
		fmt.Fprintf(v.Stdout, "  The files of its %d instance%s stay on disk, no longer managed.\n", n, words.Plural(n))
	}
	if n := len(d.Abandoned); n > 0 {
		fmt.Fprintf(v.Stdout, "  %d submission%s an interrupted apply left (%s) no longer followed; the jobs may still be paid for.\n", n, words.Plural(n), joinAddrs(d.Abandoned))
	}
	switch {
	case d.Kept == 1:
		fmt.Fprintln(v.Stdout, "  1 generation of its history, which default's lacked, is kept there: restored at no cost wherever asked for again.")
	case d.Kept > 1:
		fmt.Fprintf(v.Stdout, "  %d generations of its history, which default's lacked, are kept there: restored at no cost wherever asked for again.\n", d.Kept)
	}
	fmt.Fprintln(v.Stdout, "  Every object in the store stays.")
}

func joinAddrs(list []addrs.Instance) string {
	parts := make([]string, len(list))
	for i, a := range list {
		parts[i] = a.String()
	}
	return strings.Join(parts, ", ")
}
