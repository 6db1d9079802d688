package addrs

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Resource is the address of a resource block: image.hero, or in a
// module module.brand.image.hero.
type Resource struct {
	// Module is the module instance that declares the resource; the zero
	// Module for the root module.
	Module Module
	Kind   Kind
	Name   string
}

// String is the address as the configuration writes it: "image.hero",
// "module.brand.image.hero".
func (r Resource) String() string {
	if r.Name == "" && r.Kind == 0 {
		return r.Module.String() // a module's address (ModuleTarget)
	}
	if !r.Module.IsRoot() {
		return r.Module.String() + "." + r.Kind.String() + "." + r.Name
	}
	return r.Kind.String() + "." + r.Name
}

// IsZero reports whether r is the zero Resource, no address at all.
func (r Resource) IsZero() bool { return r.Kind == 0 && r.Name == "" && r.Module.IsRoot() }

// Instance returns the address of r's instance with key k.
func (r Resource) Instance(k Key) Instance { return Instance{Resource: r, Key: k} }

// Compare orders resources by module (the root module's first), kind,
// then name: -1, 0 or +1.
func (r Resource) Compare(o Resource) int {
	if r.Module != o.Module {
		return strings.Compare(r.Module.String(), o.Module.String())
	}
	if c := cmp.Compare(r.Kind, o.Kind); c != 0 {
		return c
	}
	return strings.Compare(r.Name, o.Name)
}

// keyType says which of Key's fields holds the key.
type keyType uint8

const (
	noKey keyType = iota
	intKey
	stringKey
)

// Key tells one instance of a resource from the others: nothing for a
// resource without count or for_each (the zero Key), the count index, or
// the for_each key. A count index fits in 32 bits (a resource has at most
// 100,000 instances), which keeps an Instance at 48 bytes: a large plan
// holds several maps keyed by them.
type Key struct {
	s   string
	n   int32
	typ keyType
}

// NoKey is the key of the only instance of a resource without count or
// for_each.
var NoKey = Key{}

// IntKey is the key of instance i of a resource with count; i must fit in
// an int32.
func IntKey(i int) Key { return Key{typ: intKey, n: int32(i)} }

// StringKey is the key of the for_each instance keyed s.
func StringKey(s string) Key { return Key{typ: stringKey, s: s} }

// IsZero reports whether k is NoKey.
func (k Key) IsZero() bool { return k.typ == noKey }

// Int returns the count index, and false for any other key.
func (k Key) Int() (int, bool) { return int(k.n), k.typ == intKey }

// Str returns the for_each key, and false for any other key.
func (k Key) Str() (string, bool) { return k.s, k.typ == stringKey }

// String is the key as an address writes it: "", "[0]" or `["red"]`.
func (k Key) String() string {
	switch k.typ {
	case intKey:
		return "[" + strconv.Itoa(int(k.n)) + "]"
	case stringKey:
		return "[" + strconv.Quote(k.s) + "]"
	}
	return ""
}

// PathPart is the key as one directory name ("0", "red"), and "" for
// NoKey.
func (k Key) PathPart() string {
	switch k.typ {
	case intKey:
		return strconv.Itoa(int(k.n))
	case stringKey:
		return k.s
	}
	return ""
}

// Value is the key as the configuration sees it: count.index (a number)
// or each.key (a string); cty.NilVal for NoKey.
func (k Key) Value() cty.Value {
	switch k.typ {
	case intKey:
		return cty.NumberIntVal(int64(k.n))
	case stringKey:
		return cty.StringVal(k.s)
	}
	return cty.NilVal
}

// Equal reports whether k and o are the same key (go-cmp uses it).
func (k Key) Equal(o Key) bool { return k == o }

// Compare orders keys: NoKey first, then count indexes by number, then
// for_each keys by their bytes.
func (k Key) Compare(o Key) int {
	if c := cmp.Compare(k.typ, o.typ); c != 0 {
		return c
	}
	if c := cmp.Compare(k.n, o.n); c != 0 {
		return c
	}
	return strings.Compare(k.s, o.s)
}

// Instance is the address of one resource instance: image.hero,
// image.hero[0] or image.hero["red"]. Instances are comparable, so they
// serve as map keys.
type Instance struct {
	Resource Resource
	Key      Key
}

// String is the address as the configuration writes it.
func (i Instance) String() string {
	if i.Key.typ == noKey {
		return i.Resource.String()
	}
	return i.Resource.String() + i.Key.String()
}

// Equal reports whether i and o are the same address (go-cmp uses it).
func (i Instance) Equal(o Instance) bool { return i == o }

// IsZero reports whether i is the zero Instance, no address at all.
func (i Instance) IsZero() bool { return i.Resource.IsZero() && i.Key.IsZero() }

// Compare orders instances by resource, then key, so image.a[2] comes
// before image.a[10]: -1, 0 or +1.
func (i Instance) Compare(o Instance) int {
	if c := i.Resource.Compare(o.Resource); c != 0 {
		return c
	}
	return i.Key.Compare(o.Key)
}

// Less reports whether i sorts before o.
func (i Instance) Less(o Instance) bool { return i.Compare(o) < 0 }

// Sort sorts addresses in address order.
func Sort(list []Instance) {
	slices.SortFunc(list, Instance.Compare)
}

// SortedKeys lists the addresses a map is keyed by, in address order.
func SortedKeys[V any](m map[Instance]V) []Instance {
	list := make([]Instance, 0, len(m))
	for a := range m {
		list = append(list, a)
	}
	Sort(list)
	return list
}

// Shell is the address quoted for pasting into a POSIX shell: as it is when
// it holds nothing a shell would read specially, in single quotes
// otherwise (an instance key's brackets and double quotes).
func (i Instance) Shell() string { return ShellQuote(i.String()) }

// ShellQuote quotes s for a POSIX shell: as it is when it is made only of
// letters, digits and ._-/:=@, in single quotes otherwise.
func ShellQuote(s string) string {
	plain := s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-/:=@", r))
	})
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ParseError is an address that does not parse, with why.
type ParseError struct {
	Input string
	Why   string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%q is not a resource address: %s; write image.NAME or video.NAME, with [N] or [\"KEY\"] for one instance of a counted or for_each resource, and module.NAME. in front for one in a module", e.Input, e.Why)
}

// ParseInstance reads an instance address: image.NAME or video.NAME, with
// an optional instance key, [N] for count or ["KEY"] for for_each. It reads
// the canonical form String prints without allocating more than the
// address, and anything else the configuration language accepts as such a
// reference (spaces, an index written 007) through HCL's parser. A
// resource-level address parses as the instance with NoKey.
func ParseInstance(s string) (Instance, error) {
	if i, ok := ParseCanonical(s); ok {
		return i, nil
	}
	return parseTraversal(s)
}

// ParseCanonical reads an address written exactly as String prints it,
// and reports false for anything else, even what ParseInstance would read
// (image.hero[007]). It is the fast path for addresses as the state stores
// them, a large state having one per record, and tells a key genform wrote
// from one it could not have.
func ParseCanonical(s string) (Instance, bool) {
	if !strings.HasPrefix(s, "module.") {
		return parseCanonicalResource(s)
	}
	n, ok := canonicalModuleLen(s)
	if !ok {
		return Instance{}, false
	}
	a, ok := parseCanonicalResource(s[n+1:])
	a.Resource.Module = MakeModule(s[:n])
	return a, ok
}

// canonicalModuleLen is the length of the module path s starts with,
// written canonically (module.NAME, a key as Key.String writes it, steps
// joined by dots), up to the dot before the resource's kind.
func canonicalModuleLen(s string) (int, bool) {
	i := 0
	for strings.HasPrefix(s[i:], "module.") {
		i += len("module.")
		j := i
		for j < len(s) && s[j] != '.' && s[j] != '[' {
			j++
		}
		if !validName(s[i:j]) {
			return 0, false
		}
		if j < len(s) && s[j] == '[' {
			end := strings.Index(s[j:], "].")
			if end < 0 {
				return 0, false
			}
			if _, ok := canonicalKey(s[j : j+end+1]); !ok {
				return 0, false
			}
			j += end + 1
		}
		if j >= len(s) || s[j] != '.' {
			return 0, false
		}
		i = j + 1
	}
	if i == 0 {
		return 0, false
	}
	return i - 1, true
}

// parseCanonicalResource is ParseCanonical of an address in the root
// module.
func parseCanonicalResource(s string) (Instance, bool) {
	dot := strings.IndexByte(s, '.')
	if dot < 0 {
		return Instance{}, false
	}
	kind, ok := ParseKind(s[:dot])
	if !ok {
		return Instance{}, false
	}
	rest := s[dot+1:]
	name, key := rest, ""
	if b := strings.IndexByte(rest, '['); b >= 0 {
		name, key = rest[:b], rest[b:]
	}
	if !validName(name) {
		return Instance{}, false
	}
	addr := Instance{Resource: Resource{Kind: kind, Name: name}}
	if key == "" {
		return addr, true
	}
	k, ok := canonicalKey(key)
	if !ok {
		return Instance{}, false
	}
	addr.Key = k
	return addr, true
}

// canonicalKey reads a key written as Key.String writes it: [N] or
// ["KEY"].
func canonicalKey(key string) (Key, bool) {
	if len(key) < 3 || key[0] != '[' || key[len(key)-1] != ']' {
		return Key{}, false
	}
	inner := key[1 : len(key)-1]
	if inner[0] == '"' {
		k, err := strconv.Unquote(inner)
		if err != nil {
			return Key{}, false
		}
		// Quoted back the way String quotes, in a buffer on the stack: "\x41"
		// unquotes like "A" but is not how genform writes it.
		var buf [128]byte
		if string(strconv.AppendQuote(buf[:0], k)) != inner {
			return Key{}, false
		}
		return StringKey(k), true
	}
	if inner[0] < '0' || inner[0] > '9' || len(inner) > 1 && inner[0] == '0' {
		return Key{}, false // a sign or a leading zero: not canonical
	}
	n, err := strconv.Atoi(inner)
	if err != nil || n < 0 || n > math.MaxInt32 {
		return Key{}, false
	}
	return IntKey(n), true
}

// parseTraversal reads an address with HCL's traversal syntax, for what
// users type.
func parseTraversal(s string) (Instance, error) {
	bad := func(why string) (Instance, error) { return Instance{}, &ParseError{Input: s, Why: why} }
	if strings.TrimSpace(s) == "" {
		return bad("it is empty")
	}
	trav, diags := hclsyntax.ParseTraversalAbs([]byte(s), "", hcl.InitialPos)
	if diags.HasErrors() {
		return bad(strings.TrimSuffix(diags[0].Summary, "."))
	}
	addr, _, why := instanceOfTraversal(trav)
	if why != nil {
		return bad(why.Error())
	}
	return addr, nil
}

// instanceOfTraversal reads an instance address from a traversal, and how
// many parts it has: 2 for a resource (image.hero), 3 with a key.
func instanceOfTraversal(trav hcl.Traversal) (Instance, int, error) {
	module, trav, err := moduleOfTraversal(trav)
	if err != nil {
		return Instance{}, 0, err
	}
	if len(trav) == 0 {
		return Instance{}, 0, errors.New("a module holds resources: name one, as in " + module + ".image.NAME")
	}
	a, parts, err := rootInstanceOfTraversal(trav)
	a.Resource.Module = MakeModule(module)
	return a, parts, err
}

// moduleOfTraversal reads the module steps a traversal starts with
// (module.NAME, optionally with an instance key, repeated), and returns
// the module path as Resource.Module writes it and the rest of the
// traversal, whose first step is then its root.
func moduleOfTraversal(trav hcl.Traversal) (string, hcl.Traversal, error) {
	var b strings.Builder
	for len(trav) > 0 && stepName(trav[0]) == "module" {
		if len(trav) < 2 {
			return "", nil, errors.New("the module name is missing after module")
		}
		name, ok := trav[1].(hcl.TraverseAttr)
		if !ok {
			return "", nil, errors.New("the module name is missing after module")
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString("module.")
		b.WriteString(name.Name)
		trav = trav[2:]
		if len(trav) > 0 {
			if idx, ok := trav[0].(hcl.TraverseIndex); ok {
				k, err := keyOfIndex(idx.Key)
				if err != nil {
					return "", nil, err
				}
				b.WriteString(k.String())
				trav = trav[1:]
			}
		}
	}
	if b.Len() > 0 && len(trav) > 0 {
		root := stepName(trav[0])
		if root == "" {
			return "", nil, errors.New("a module is followed by a resource, as in " + b.String() + ".image.NAME")
		}
		trav = append(hcl.Traversal{hcl.TraverseRoot{Name: root, SrcRange: trav[0].SourceRange()}}, trav[1:]...)
	}
	return b.String(), trav, nil
}

// stepName is the name of a root or attribute step, "" for an index.
func stepName(s hcl.Traverser) string {
	switch s := s.(type) {
	case hcl.TraverseRoot:
		return s.Name
	case hcl.TraverseAttr:
		return s.Name
	}
	return ""
}

// keyOfIndex is the instance key an index value writes.
func keyOfIndex(key cty.Value) (Key, error) {
	switch {
	case key.Type() == cty.String && key.IsKnown() && !key.IsNull():
		return StringKey(key.AsString()), nil
	case key.Type() == cty.Number && key.IsKnown() && !key.IsNull():
		n, acc := key.AsBigFloat().Int64()
		if acc != 0 || n < 0 || n > math.MaxInt32 {
			return Key{}, errors.New("a count index is a whole number, 0 or more")
		}
		return IntKey(int(n)), nil
	}
	return Key{}, errors.New("an instance key is a number or a string")
}

// ParseModule reads a module instance's address: module.NAME, with an
// instance key, nested as module.a.module.b.
func ParseModule(s string) (Module, error) {
	bad := func(why string) (Module, error) {
		return Module{}, fmt.Errorf("%q is not a module address: %s; write module.NAME, with [N] or [\"KEY\"] for one instance of a module with count or for_each", s, why)
	}
	trav, diags := hclsyntax.ParseTraversalAbs([]byte(s), "", hcl.InitialPos)
	if diags.HasErrors() {
		return bad(strings.TrimSuffix(diags[0].Summary, "."))
	}
	module, rest, err := moduleOfTraversal(trav)
	switch {
	case err != nil:
		return bad(err.Error())
	case module == "":
		return bad("it does not start with module")
	case len(rest) > 0:
		return bad("it names more than a module")
	}
	return MakeModule(module), nil
}

// rootInstanceOfTraversal is instanceOfTraversal of an address in the
// root module.
func rootInstanceOfTraversal(trav hcl.Traversal) (Instance, int, error) {
	bad := func(why string) (Instance, int, error) { return Instance{}, 0, errors.New(why) }
	if len(trav) < 2 || len(trav) > 3 {
		return bad("it has the wrong number of parts")
	}
	kind, ok := ParseKind(trav.RootName())
	if !ok {
		return bad(fmt.Sprintf("a resource is an image or a video, not %q", trav.RootName()))
	}
	nameStep, ok := trav[1].(hcl.TraverseAttr)
	if !ok {
		return bad("the resource name is missing")
	}
	addr := Instance{Resource: Resource{Kind: kind, Name: nameStep.Name}}
	if len(trav) == 2 {
		return addr, 2, nil
	}
	idx, ok := trav[2].(hcl.TraverseIndex)
	if !ok {
		return bad("only an instance key may follow the name")
	}
	k, err := keyOfIndex(idx.Key)
	if err != nil {
		return bad(err.Error())
	}
	addr.Key = k
	return addr, 3, nil
}

// validName reports whether s is an identifier, as a resource name must
// be. ASCII names, nearly all of them, are checked here; hclsyntax's own
// check runs its scanner and is kept for the others, since a state holds
// one name per record.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf:
			return hclsyntax.ValidIdentifier(s)
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_':
		case (c >= '0' && c <= '9' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// Strings prints each address of list; nil for an empty list.
func Strings(list []Instance) []string {
	if len(list) == 0 {
		return nil
	}
	out := make([]string, len(list))
	for i, a := range list {
		out[i] = a.String()
	}
	return out
}

// MustParseInstance is ParseInstance for addresses written in the
// program (tests, tables), which panics on a malformed one.
func MustParseInstance(s string) Instance {
	a, err := ParseInstance(s)
	if err != nil {
		panic(err)
	}
	return a
}
