package reconcile

import (
	"fmt"
	"maps"

	"github.com/hashicorp/hcl/v2"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// This file holds what the moved blocks do to a plan. As in Terraform,
// the moves are made to the state the plan reads before anything is
// compared: each record a moved block names is planned at the address the
// chain of blocks ends at, as if it had always been there, so its change
// is what that address needs (nothing, a new directory, a replacement),
// and carries the address it came from (Change.PrevAddr). Apply moves the
// record first, then carries out the rest.

// moves is what the moved blocks did to the state a plan reads.
type moves struct {
	// from is where each moved record was: new address to old.
	from map[addrs.Instance]addrs.Instance
	// by is the first moved block of the chain that moved each record,
	// by its new address, for messages.
	by map[addrs.Instance]*config.Moved
	// watch holds the instance addresses the moved blocks name whose
	// resources are declared, and whether the configuration makes them:
	// a from must not be made any more, and a chain's last to must be.
	watch map[addrs.Instance]bool
}

// applyMoves returns st with the moves of the configuration's moved
// blocks made, and notes them in p.moves. A move that cannot be made (its
// target holds a generation already, two records would land on one
// address, or an unfinished submission would be left behind) is an error
// of the plan, and st is returned as it is.
func (p *planner) applyMoves(st *statefile.Snapshot) *statefile.Snapshot {
	cfg := p.in.Config
	mv := &moves{from: map[addrs.Instance]addrs.Instance{}, by: map[addrs.Instance]*config.Moved{}, watch: map[addrs.Instance]bool{}}
	p.moves = mv
	for _, m := range cfg.Moved {
		if !m.From.Whole && cfg.Resource(m.From.Addr.Resource) != nil {
			mv.watch[m.From.Addr] = false
		}
		if m.Final() && !m.To.Whole && cfg.Resource(m.To.Addr.Resource) != nil {
			mv.watch[m.To.Addr] = false
		}
	}
	type move struct {
		src, dst addrs.Instance
		m        *config.Moved
	}
	var list []move
	leaving := map[addrs.Instance]bool{}
	for _, a := range addrs.SortedKeys(st.Resources) {
		if dst, m, ok := cfg.MoveTarget(a); ok {
			list = append(list, move{a, dst, m})
			leaving[a] = true
		}
	}
	bad := false
	fail := func(m *config.Moved, summary, detail string) {
		rng := m.DeclRange
		p.diags = append(p.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: &rng})
		bad = true
	}
	for _, a := range addrs.SortedKeys(st.Intents) {
		if dst, m, ok := cfg.MoveTarget(a); ok {
			fail(m, "Moved instance has an unfinished submission",
				fmt.Sprintf("The moved block moves %s to %s, but an interrupted apply left a submission of %s unfinished (job %s), which a move cannot take along: the job may have been paid for. Finish it first: put the block back under its old name without the moved block, run genform apply, then rename it again.", a, dst, a, jobName(st.Intents[a])))
		}
	}
	byDst := map[addrs.Instance]addrs.Instance{}
	for _, mo := range list {
		if prev, dup := byDst[mo.dst]; dup {
			fail(mo.m, "Moved instances collide",
				fmt.Sprintf("The moved blocks move both %s and %s to %s, and the state holds a generation at each: one address holds one. Remove one of them first with genform state rm (its files stay on disk), or move it elsewhere.", prev, mo.src, mo.dst))
			continue
		}
		byDst[mo.dst] = mo.src
		if st.Resources[mo.dst] != nil && !leaving[mo.dst] {
			fail(mo.m, "Moved to an address the state holds",
				fmt.Sprintf("The moved block moves %s to %s, but the state already holds a generation at %s. Keep one of them: remove the other with genform state rm (its files stay on disk), or remove the moved block so that %s is planned as what it is.", mo.src, mo.dst, mo.dst, mo.src))
		}
		if st.Intents[mo.dst] != nil {
			fail(mo.m, "Moved to an address with an unfinished submission",
				fmt.Sprintf("The moved block moves %s to %s, but an interrupted apply left a submission of %s unfinished (job %s). Run genform apply without the moved block first, so that it is finished.", mo.src, mo.dst, mo.dst, jobName(st.Intents[mo.dst])))
		}
	}
	if bad || len(list) == 0 {
		return st
	}
	out := &statefile.Snapshot{Meta: st.Meta, Intents: st.Intents,
		Resources: maps.Clone(st.Resources), Protections: maps.Clone(st.Protections)}
	if out.Protections == nil {
		out.Protections = map[addrs.Instance]bool{}
	}
	for _, mo := range list {
		delete(out.Resources, mo.src)
		delete(out.Protections, mo.src)
	}
	for _, mo := range list {
		rec := *st.Resources[mo.src]
		rec.Addr = mo.dst
		out.Resources[mo.dst] = &rec
		if st.Protections[mo.src] {
			out.Protections[mo.dst] = true
		}
		mv.from[mo.dst] = mo.src
		mv.by[mo.dst] = mo.m
	}
	return out
}

// jobName is an intent's job as messages name it.
func jobName(it *statefile.Intent) string {
	if it.GenerationID == "" {
		return "its create request was sent and its answer lost"
	}
	return it.GenerationID
}

// noteMove marks c, the change of a declared instance, as the move the
// moved blocks make of it: it carries the address the record came from,
// and a change that would do nothing else, or only move its files,
// is a move.
func (p *planner) noteMove(c *plans.Change) {
	mv := p.moves
	if _, ok := mv.watch[c.Addr]; ok {
		mv.watch[c.Addr] = true
	}
	prev, ok := mv.from[c.Addr]
	if !ok {
		return
	}
	c.PrevAddr = prev
	switch {
	case c.Action == plans.NoOp, c.Action == plans.Update && onlyMoves(c.Reason):
		c.Action = plans.Move
		c.Reason = &plans.Reason{Code: plans.ReasonMoved}
		c.Before = beforeAttrs(p.state.Resources[c.Addr])
	}
}

// onlyMoves reports whether an update's local changes only move its files
// and record a protection: what a move does.
func onlyMoves(why *plans.Reason) bool {
	if why == nil {
		return false
	}
	for _, l := range why.Local {
		if l.What != plans.DirMoved && l.What != plans.ProtectionChanged {
			return false
		}
	}
	return true
}

// checkMoves reports, once every declared instance is planned, the moved
// blocks whose from the configuration still makes or whose last to it
// does not make, among the instances whose expansion Load could not know.
func (p *planner) checkMoves() {
	cfg := p.in.Config
	for _, m := range cfg.Moved {
		if seen, ok := p.moves.watch[m.From.Addr]; ok && seen && !m.From.Whole {
			p.diags = append(p.diags, cfg.MovedStillDeclared(m))
		}
		if seen, ok := p.moves.watch[m.To.Addr]; ok && !seen && m.Final() && !m.To.Whole {
			p.diags = append(p.diags, cfg.UndeclaredMoveTarget(m))
		}
	}
}

// undeclaredMove is the error for a record moved to an address the
// configuration does not make (a whole resource moved to one whose count
// or for_each lacks one of its keys): planned as it is, it would be
// deleted, files and all.
func (p *planner) undeclaredMove(addr addrs.Instance) *hcl.Diagnostic {
	m := p.moves.by[addr]
	rng := m.DeclRange
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Moved to an undeclared address",
		Detail: fmt.Sprintf("The moved block moves %s to %s, which the configuration does not make (%s's count or for_each has no such key). genform refuses to move a generation to an address it would then delete, files and all. Declare %s, or move %s elsewhere with a moved block of its own.",
			p.moves.from[addr], addr, addr.Resource, addr, p.moves.from[addr]),
		Subject: &rng}
}
