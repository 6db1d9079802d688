package config

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"

	"github.com/genform/genform/internal/addrs"
)

// Moved is a moved block: what the state holds at From belongs at To, so
// a rename keeps its generation (and its files, which follow it) whatever
// else changed in the same commit. Planning applies the moves to the
// state before it compares it with the configuration, as Terraform does.
type Moved struct {
	// From and To are the block's addresses, read as a pair (see
	// addrs.UnifyMoveEndpoints).
	From, To addrs.MoveEndpoint
	// DeclRange is the block's header.
	DeclRange hcl.Range

	fromRange, toRange hcl.Range
	// onward is set when another moved block moves on every address To
	// names: To is not where the chain ends, and need not be declared.
	onward bool
}

// FromRange and ToRange are where the block's from and to are written.
func (m *Moved) FromRange() hcl.Range { return m.fromRange }

// ToRange is where the block's to is written.
func (m *Moved) ToRange() hcl.Range { return m.toRange }

// Final reports whether To is where a chain of moves ends (no other moved
// block moves it on), so it must be declared.
func (m *Moved) Final() bool { return !m.onward }

// String is the move as messages name it: "image.a to image.b".
func (m *Moved) String() string { return m.From.String() + " to " + m.To.String() }

var movedSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "from", Required: true}, {Name: "to", Required: true}},
}

// decodeMoved reads a moved block; nil when it cannot be read.
func decodeMoved(b *hcl.Block) (*Moved, hcl.Diagnostics) {
	content, diags := b.Body.Content(movedSchema)
	m := &Moved{DeclRange: b.DefRange}
	ok := content != nil
	read := func(name string, ep *addrs.MoveEndpoint, rng *hcl.Range) {
		if content == nil {
			return
		}
		a, has := content.Attributes[name]
		if !has {
			ok = false // reported by Content
			return
		}
		*rng = a.Expr.Range()
		tr, d := hcl.AbsTraversalForExpr(a.Expr)
		var err error
		if !d.HasErrors() {
			*ep, err = addrs.ParseMoveEndpoint(tr)
		}
		if d.HasErrors() || err != nil {
			why := "it is not an address"
			if err != nil {
				why = err.Error()
			}
			diags = append(diags, errorAt(rng, "Invalid "+name+" address",
				fmt.Sprintf("A moved block's %s is the address of a resource or of one of its instances, written as a reference, without quotes: %s.", name, why)))
			ok = false
		}
	}
	read("from", &m.From, &m.fromRange)
	read("to", &m.To, &m.toRange)
	if !ok {
		return nil, diags
	}
	m.From, m.To = addrs.UnifyMoveEndpoints(m.From, m.To)
	fk, tk := m.From.Addr.Resource.Kind, m.To.Addr.Resource.Kind
	switch {
	case m.From.IsModule() != m.To.IsModule():
		diags = append(diags, errorAt(m.DeclRange.Ptr(), "Moved block mixes a module and a resource",
			fmt.Sprintf("This block moves %s to %s. A module moves to a module (every resource in it keeps its address inside it), and a resource to a resource: write one moved block per resource to move resources into or out of a module, as from = image.hero, to = module.brand.image.hero.", m.From, m.To)))
		return nil, diags
	case fk != tk:
		diags = append(diags, errorAt(m.toRange.Ptr(), "Moved block changes the kind",
			fmt.Sprintf("This block moves %s, %s, to %s, %s: a generation keeps its kind. Move it to %s block, or remove the moved block.",
				m.From, kindWithArticle(fk), m.To, kindWithArticle(tk), kindWithArticle(fk))))
		return nil, diags
	case m.From == m.To:
		diags = append(diags, errorAt(m.DeclRange.Ptr(), "Redundant moved block",
			fmt.Sprintf("This block moves %s to itself. Remove it, or give the address it moved to.", m.From)))
		return nil, diags
	}
	return m, diags
}

// inModule makes the addresses of a moved block declared in the module
// instance mod addresses from the root module.
func (m *Moved) inModule(mod addrs.Module) {
	m.From.Addr.Resource.Module = mod.Join(m.From.Addr.Resource.Module)
	m.To.Addr.Resource.Module = mod.Join(m.To.Addr.Resource.Module)
}

// kindWithArticle is "an image" or "a video".
func kindWithArticle(k addrs.Kind) string {
	return articleLower([]addrs.Kind{k})
}

// checkMoved checks the moved blocks against one another and against the
// declared resources, once those are known: no address is moved by two
// blocks, no chain of blocks is a cycle, a resource moved away is no
// longer declared, and a chain ends at a declared resource (whose
// instance, for an instance address, checkMovedInstances looks for).
// Unlike Terraform, which moves to an undeclared address and then plans
// its deletion, genform refuses: the files moved are paid for, and the
// likeliest cause is a typo. It keeps the blocks that pass in c.Moved,
// and indexes them by the resource they move from.
func (c *Config) checkMoved(list []*Moved) hcl.Diagnostics {
	if len(list) == 0 {
		return nil
	}
	var diags hcl.Diagnostics
	var kept []*Moved
	for _, m := range list {
		dup := false
		for _, prev := range kept {
			if prev.From.Overlaps(m.From) {
				diags = append(diags, errorAt(m.fromRange.Ptr(), "Ambiguous moved blocks",
					fmt.Sprintf("This block moves %s, and the moved block at %s already moves %s. An address moves to one place only: keep one of the two.", m.From, prev.DeclRange, prev.From)))
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		if r := c.declaredIn(m.From); r != nil && m.From.IsModule() {
			diags = append(diags, errorAt(m.fromRange.Ptr(), "Moved object still exists",
				fmt.Sprintf("This block moves %s to %s, but %s is still declared (%s at %s). Rename the module block (a move's from is what the configuration no longer declares), or remove the moved block.", m.From, m.To, m.From, r.Addr(), r.DeclRange)))
			continue
		}
		if r := c.byAddr[m.From.Addr.Resource]; r != nil && m.From.Whole {
			diags = append(diags, errorAt(m.fromRange.Ptr(), "Moved object still exists",
				fmt.Sprintf("This block moves %s to %s, but %s is still declared at %s. Rename the block to %s (a move's from is what the configuration no longer declares), or remove the moved block.", m.From, m.To, m.From, r.DeclRange, m.To)))
			continue
		}
		kept = append(kept, m)
	}

	// A chain of moves is an edge from each block to those that move on
	// what it moves to.
	next := make([][]int, len(kept))
	for i, m := range kept {
		for j, n := range kept {
			if m.To.Overlaps(n.From) {
				next[i] = append(next[i], j)
				if n.From.Whole || !m.To.Whole {
					m.onward = true
				}
			}
		}
	}
	_, cycles := topoSort(len(kept), func(i int) []int { return next[i] })
	inCycle := make([]bool, len(kept))
	for _, cyc := range cycles {
		names := make([]string, len(cyc))
		for k, i := range cyc {
			inCycle[i] = true
			names[k] = fmt.Sprintf("%s (at %s)", kept[i], kept[i].DeclRange)
		}
		diags = append(diags, errorAt(kept[cyc[0]].DeclRange.Ptr(), "Cycle in moved blocks",
			fmt.Sprintf("These moved blocks move addresses in a cycle: %s. A chain of moves must end at an address no moved block moves from; remove the block that closes the cycle.", joinList(names))))
	}

	c.Moved = c.Moved[:0]
	c.movedBy = map[addrs.Resource][]*Moved{}
	for i, m := range kept {
		if inCycle[i] {
			continue
		}
		c.Moved = append(c.Moved, m)
		if m.From.IsModule() {
			c.movedMods = append(c.movedMods, m)
		} else {
			c.movedBy[m.From.Addr.Resource] = append(c.movedBy[m.From.Addr.Resource], m)
		}
		if !m.Final() {
			continue
		}
		if m.To.IsModule() && c.declaredIn(m.To) == nil || !m.To.IsModule() && c.byAddr[m.To.Addr.Resource] == nil {
			diags = append(diags, c.undeclaredMoveTarget(m, kept))
		}
	}
	return diags
}

// undeclaredMoveTarget is the error for a chain of moves ending at m.To,
// which is not declared.
func (c *Config) undeclaredMoveTarget(m *Moved, all []*Moved) *hcl.Diagnostic {
	to := m.To.Addr.Resource
	what := fmt.Sprintf("no %s block named %q is declared", to.Kind, to.Name)
	if m.To.IsModule() {
		what = fmt.Sprintf("no module call makes %s, or it declares no resource", to.Module)
	}
	if c.byAddr[to] != nil {
		what = fmt.Sprintf("%s is declared, but without that instance (its count or for_each does not make the key %s)", to, m.To.Addr.Key)
	}
	chain := ""
	if start := chainStart(m, all); start != m {
		chain = fmt.Sprintf(" (the chain of moves from %s ends there)", start.From)
	}
	suggest := didYouMean(to.Name, c.resourceNames(to.Kind))
	if m.To.IsModule() {
		suggest = ""
	}
	return errorAt(m.toRange.Ptr(), "Moved to an undeclared address",
		fmt.Sprintf("This block moves %s to %s%s, but %s. genform refuses to move a generation to an address the configuration does not declare, since the same plan would delete its files. Declare %s, or correct the to address.", m.From, m.To, chain, what, m.To)+
			suggest)
}

// declaredIn is a resource the configuration declares that e names (for
// a module, one inside it), or nil.
func (c *Config) declaredIn(e addrs.MoveEndpoint) *Resource {
	if !e.IsModule() {
		return c.byAddr[e.Addr.Resource]
	}
	for _, r := range c.Resources {
		if e.Addr.Targets(r.Addr().Instance(addrs.NoKey)) {
			return r
		}
	}
	return nil
}

// chainStart is the first block of a chain of moves that ends with m.
func chainStart(m *Moved, all []*Moved) *Moved {
	start := m
	for range all {
		var prev *Moved
		for _, n := range all {
			if n != start && n.To.Overlaps(start.From) {
				prev = n
				break
			}
		}
		if prev == nil {
			break
		}
		start = prev
	}
	return start
}

// checkMovedInstances checks the moved blocks that name one instance
// against the instances the configuration makes, for the resources whose
// instances are known (insts[i] are those of c.Resources[i], nil when not
// known): a chain must end at a declared instance, and an instance moved
// away must no longer be declared. Planning checks the others.
func (c *Config) checkMovedInstances(insts [][]instData) hcl.Diagnostics {
	var diags hcl.Diagnostics
	declared := func(a addrs.Instance) (known, ok bool) {
		for i, r := range c.Resources {
			if r.Addr() != a.Resource {
				continue
			}
			if insts[i] == nil {
				return false, false
			}
			for _, d := range insts[i] {
				if d.addr == a {
					return true, true
				}
			}
			return true, false
		}
		return true, false
	}
	for _, m := range c.Moved {
		if !m.From.Whole {
			if known, ok := declared(m.From.Addr); known && ok {
				diags = append(diags, c.MovedStillDeclared(m))
			}
		}
		if m.Final() && !m.To.Whole && c.byAddr[m.To.Addr.Resource] != nil {
			if known, ok := declared(m.To.Addr); known && !ok {
				diags = append(diags, c.UndeclaredMoveTarget(m))
			}
		}
	}
	return diags
}

// MovedStillDeclared is the error for a moved block whose from, one
// instance, the configuration still makes.
func (c *Config) MovedStillDeclared(m *Moved) *hcl.Diagnostic {
	return errorAt(m.fromRange.Ptr(), "Moved object still exists",
		fmt.Sprintf("This block moves %s to %s, but the configuration still makes %s. A move's from is what the configuration no longer declares: change the count or for_each so that it makes %s instead, or remove the moved block.", m.From, m.To, m.From, m.To))
}

// UndeclaredMoveTarget is the error for a moved block whose chain ends at
// an instance the configuration does not make.
func (c *Config) UndeclaredMoveTarget(m *Moved) *hcl.Diagnostic {
	return c.undeclaredMoveTarget(m, c.Moved)
}

// MoveTarget follows the moved blocks from a, an address the state holds:
// where its record belongs, and the first block of the chain that moves
// it; false when no block moves it.
func (c *Config) MoveTarget(a addrs.Instance) (addrs.Instance, *Moved, bool) {
	if len(c.movedBy) == 0 && len(c.movedMods) == 0 {
		return a, nil, false
	}
	var first *Moved
	cur := a
	// Cycles are refused at Load; the bound is a guard all the same.
	for range len(c.Moved) + 1 {
		var step *Moved
		for _, m := range c.movedBy[cur.Resource] {
			if m.From.Matches(cur) {
				step = m
				break
			}
		}
		for _, m := range c.movedMods {
			if step == nil && m.From.Matches(cur) {
				step = m
			}
		}
		if step == nil {
			break
		}
		if first == nil {
			first = step
		}
		cur = addrs.MoveOf(cur, step.From, step.To)
	}
	return cur, first, first != nil
}
