package addrs

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
)

// MoveEndpoint is the from or the to of a moved block: a whole resource
// (image.a), every instance of which moves keeping its key, one instance
// (image.a[0], image.a["x"]), or a module (module.a, module.a["x"]),
// every resource in which moves keeping its address inside it.
type MoveEndpoint struct {
	// Addr is the instance moved; for a whole resource its Key is NoKey
	// and only its Resource counts; for a module it is a ModuleTarget.
	Addr Instance
	// Whole is set for a resource or a module address: every instance.
	Whole bool
}

// IsModule reports whether e names a module.
func (e MoveEndpoint) IsModule() bool { return e.Addr.IsModule() }

// String is the endpoint as the configuration writes it.
func (e MoveEndpoint) String() string {
	if e.Whole {
		return e.Addr.Resource.String()
	}
	return e.Addr.String()
}

// Matches reports whether the state's instance a is what e names: an
// instance of the resource for a whole one, the instance itself otherwise.
func (e MoveEndpoint) Matches(a Instance) bool {
	if e.IsModule() {
		return e.Addr.Targets(a)
	}
	if e.Whole {
		return a.Resource == e.Addr.Resource
	}
	return a == e.Addr
}

// Overlaps reports whether e and o can name one instance: the same
// resource, and for two instances the same key.
func (e MoveEndpoint) Overlaps(o MoveEndpoint) bool {
	if e.IsModule() || o.IsModule() {
		em, om := e.Addr.Resource.Module, o.Addr.Resource.Module
		switch {
		case e.IsModule() && o.IsModule():
			return em.Contains(om) || om.Contains(em)
		case e.IsModule():
			return !om.IsRoot() && em.Contains(om)
		}
		return !em.IsRoot() && om.Contains(em)
	}
	if e.Addr.Resource != o.Addr.Resource {
		return false
	}
	return e.Whole || o.Whole || e.Addr.Key == o.Addr.Key
}

// MoveOf is where a, an instance from matches, goes when from moves to to:
// the same key under to's resource for two whole resources, to's instance
// otherwise.
func MoveOf(a Instance, from, to MoveEndpoint) Instance {
	if from.IsModule() && to.IsModule() {
		a.Resource.Module = a.Resource.Module.Rebase(from.Addr.Resource.Module, to.Addr.Resource.Module)
		return a
	}
	if from.Whole && to.Whole {
		return to.Addr.Resource.Instance(a.Key)
	}
	return to.Addr
}

// UnifyMoveEndpoints reads from and to as a pair, as Terraform does: when
// one is a whole resource and the other an instance, the whole one is its
// resource's instance without a key (moving image.a to image.a[0] when a
// block gains count).
func UnifyMoveEndpoints(from, to MoveEndpoint) (MoveEndpoint, MoveEndpoint) {
	if from.IsModule() || to.IsModule() {
		return from, to
	}
	if from.Whole != to.Whole {
		from.Whole, to.Whole = false, false
	}
	return from, to
}

// ParseMoveEndpoint reads the traversal of a moved block's from or to:
// image.NAME or video.NAME, optionally with an instance key.
func ParseMoveEndpoint(tr hcl.Traversal) (MoveEndpoint, error) {
	if module, rest, err := moduleOfTraversal(tr); err == nil && module != "" && len(rest) == 0 {
		return MoveEndpoint{Addr: ModuleTarget(MakeModule(module)), Whole: true}, nil
	}
	a, parts, err := instanceOfTraversal(tr)
	if err != nil {
		return MoveEndpoint{}, moveEndpointError(err.Error())
	}
	return MoveEndpoint{Addr: a, Whole: parts == 2}, nil
}

// moveEndpointError is what ParseMoveEndpoint says of what it cannot read.
func moveEndpointError(why string) error {
	return fmt.Errorf("%s; write image.NAME or video.NAME, with [N] or [\"KEY\"] for one instance, or module.NAME for a module", why)
}
