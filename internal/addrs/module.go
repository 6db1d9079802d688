package addrs

import (
	"strings"
	"unique"
)

// Module is the address of a module instance: module.brand,
// module.brand["a"], module.brand.module.logo; the zero Module is the root
// module. Module addresses are interned, so a Module costs a pointer in
// every address that holds one and two compare as pointers do.
type Module struct{ h unique.Handle[string] }

// RootModule is the root module's address.
var RootModule = Module{}

// MakeModule is the Module written s, canonically (as String prints
// it); "" is the root module.
func MakeModule(s string) Module {
	if s == "" {
		return Module{}
	}
	return Module{unique.Make(s)}
}

// String is the address as the configuration writes it; "" for the root
// module.
func (m Module) String() string {
	if m.IsRoot() {
		return ""
	}
	return m.h.Value()
}

// Equal reports whether m and o are the same module (go-cmp uses it).
func (m Module) Equal(o Module) bool { return m == o }

// IsRoot reports whether m is the root module.
func (m Module) IsRoot() bool { return m == Module{} }

// Child is the instance key of the module call name in m: module.NAME
// (NoKey), module.NAME[0] or module.NAME["k"] inside m.
func (m Module) Child(name string, key Key) Module {
	s := "module." + name + key.String()
	if !m.IsRoot() {
		s = m.String() + "." + s
	}
	return MakeModule(s)
}

// ModuleTarget is the address that names every instance of the resources
// in module m and the modules it calls, as -target=module.NAME does. It
// prints as m.
func ModuleTarget(m Module) Instance { return Instance{Resource: Resource{Module: m}} }

// IsModule reports whether i is a ModuleTarget.
func (i Instance) IsModule() bool {
	return i.Resource.Kind == 0 && i.Resource.Name == "" && !i.Resource.Module.IsRoot()
}

// Targets reports whether the address t (an instance, a resource, as its
// instance with NoKey, or a ModuleTarget) names the instance a.
func (t Instance) Targets(a Instance) bool {
	switch {
	case t.IsModule():
		return !a.Resource.Module.IsRoot() && t.Resource.Module.Contains(a.Resource.Module)
	case t.Key.IsZero():
		return a.Resource == t.Resource
	}
	return a == t
}

// ParseTarget reads what -target takes: an instance or resource address
// (ParseInstance), or a module's (module.NAME, module.NAME["k"]) as a
// ModuleTarget.
func ParseTarget(s string) (Instance, error) {
	a, err := ParseInstance(s)
	if err == nil {
		return a, nil
	}
	if m, merr := ParseModule(s); merr == nil {
		return ModuleTarget(m), nil
	}
	return Instance{}, err
}

// Join is the module o, an address relative to m, from the root module:
// module.b in module.a is module.a.module.b.
func (m Module) Join(o Module) Module {
	switch {
	case o.IsRoot():
		return m
	case m.IsRoot():
		return o
	}
	return MakeModule(m.String() + "." + o.String())
}

// Contains reports whether o is m or a module inside it. A module address
// without a key contains the instances of its call: module.brand
// contains module.brand["a"].
func (m Module) Contains(o Module) bool {
	if m.IsRoot() || m == o {
		return true
	}
	ms, os := m.String(), o.String()
	if len(os) <= len(ms) || !strings.HasPrefix(os, ms) {
		return false
	}
	switch os[len(ms)] {
	case '.':
		return true
	case '[':
		return ms[len(ms)-1] != ']'
	}
	return false
}

// Rebase is o, an address inside from (from.Contains(o)), moved under
// to: module.a.module.x rebased from module.a to module.b is
// module.b.module.x.
func (m Module) Rebase(from, to Module) Module {
	if m == from {
		return to
	}
	rest := strings.TrimPrefix(m.String(), from.String())
	if from.IsRoot() {
		rest = "." + rest
	}
	if to.IsRoot() {
		return MakeModule(strings.TrimPrefix(rest, "."))
	}
	return MakeModule(to.String() + rest)
}
