package schema

import (
	"slices"

	"github.com/genform/genform/internal/addrs"
)

// Model is one row of a provider's tables, as genform providers shows it.
type Model struct {
	// ID is the model's id; "" for the provider's general capabilities,
	// what a model the tables do not list is taken to accept.
	ID string
	Caps
}

// ListedModels lists the provider's listed models, sorted, then its general
// capabilities (ID "").
func (p *Provider) ListedModels() []Model {
	ms := make([]Model, 0, len(p.Models)+1)
	for _, id := range p.ModelIDs() {
		ms = append(ms, Model{ID: id, Caps: p.Models[id]})
	}
	return append(ms, Model{Caps: p.General})
}

// Kinds are what any of the provider's models make, images first.
func (p *Provider) Kinds() []addrs.Kind {
	var kinds []addrs.Kind
	for _, m := range p.ListedModels() {
		for _, k := range m.Kinds {
			if !slices.Contains(kinds, k) {
				kinds = append(kinds, k)
			}
		}
	}
	slices.Sort(kinds)
	return kinds
}

// Taking lists the listed models that take the common attribute name.
func (p *Provider) Taking(name string) []string {
	var ids []string
	for _, id := range p.ModelIDs() {
		if p.Models[id].Takes(name) {
			ids = append(ids, id)
		}
	}
	return ids
}
