package config

import (
	"encoding/json"
	"fmt"
	"math/big"
	"math/bits"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/genform/genform/internal/addrs"
)

// MaxInstances bounds the instances of one resource, so that a mistyped
// count cannot exhaust memory.
const MaxInstances = 100_000

// Instance is one instance of a resource, evaluated into the request it
// would send.
type Instance struct {
	// Addr is the instance address: image.hero, image.hero[0] or
	// image.hero["red"]; its Key is the count index or the for_each key.
	Addr     addrs.Instance
	Resource *Resource
	// Endpoint is where the request is posted.
	Endpoint addrs.Endpoint
	// Request is the canonical JSON of Body, or nil when Body is not
	// wholly known.
	Request []byte
	// Dir is where the instance's files go, relative to the working
	// directory and cleaned: the resource's dir when set, else
	// <output_dir>/<kind>/<name>, plus a level for the instance key.
	Dir string
	// WatermarkFree asks for a video's watermark-free download.
	WatermarkFree bool
	// Sensitive names the attributes whose values derive from a sensitive
	// variable: the views show them as (sensitive), and a saved plan
	// leaves them out. The request holds their real values.
	Sensitive []string
	// DeclRange is the resource's block header.
	DeclRange hcl.Range

	// data holds the values Body, Attrs and Attr are made from, on
	// demand: a plan needs them only for the instances it shows, and
	// building them for every instance of a large catalog cost a tenth of
	// a no-op plan and kept two maps per instance alive.
	data *instData
}

// Fingerprint is the hash of the instance's request (see Fingerprint),
// made with reference, the reference service's identity, or for an
// instance of a live provider's model with the provider's identity.
func (inst *Instance) Fingerprint(reference string) string {
	service := reference
	if inst.Endpoint.Provider() != addrs.Reference {
		service = inst.Resource.live.id
	}
	return Fingerprint(service, inst.Endpoint, inst.Request)
}

// Body is the request body as it would be sent, with documented defaults
// filled in. It may hold unknowns, such as a source_image taken from a
// resource not generated yet. Each call builds it anew.
func (inst *Instance) Body() cty.Value {
	vals := inst.data.finalVals()
	sc := scratches.Get().(*scratch)
	defer scratches.Put(sc)
	return inst.data.ep.bodyValue(&vals, sc)
}

// Attrs are the request's fields under their user-facing, flattened names
// (prompt, seed, image_number ...), defaults filled, for showing in a
// plan; unknowns allowed. The local-only dir and watermark_free are the
// Dir and WatermarkFree fields instead. Each call makes a new map, which
// the caller may keep or change.
func (inst *Instance) Attrs() map[string]cty.Value {
	if inst.Endpoint.Provider() != addrs.Reference && inst.Request != nil {
		return inst.providerAttrs()
	}
	vals := inst.data.finalVals()
	n := 0
	for _, v := range vals {
		if v != cty.NilVal {
			n++
		}
	}
	attrs := make(map[string]cty.Value, n)
	for id, v := range vals {
		if v != cty.NilVal {
			attrs[attrNames[id]] = v
		}
	}
	return attrs
}

// Attr is the attribute of Attrs named name, without building the map.
func (inst *Instance) Attr(name string) (cty.Value, bool) {
	id, ok := attrByName[name]
	if !ok {
		return cty.NilVal, false
	}
	v := inst.data.final(id)
	return v, v != cty.NilVal
}

// Expand evaluates r's count or for_each and every attribute in scope,
// validates the values that are known, and returns r's instances in key
// order: count index, or for_each keys sorted. A count or for_each that is
// not known is an error ("Invalid count argument").
//
// The requests of a resource that refers to no other resource do not
// depend on scope: Load computes them once, and Expand only assembles their
// instances. Their Request bytes are shared, so callers must not modify
// them. Expand and EvalOutputs only read the Config, so several goroutines
// may call them at once.
func (c *Config) Expand(r *Resource, scope Scope) ([]*Instance, hcl.Diagnostics) {
	if r.cacheValid {
		return r.instances(r.cached), nil
	}
	data, _, diags := r.owner.expand(r, scope, false)
	diags = hideSensitive(diags)
	if diags.HasErrors() {
		return nil, diags
	}
	return r.instances(data), diags
}

// Precomputed reports whether r's instances do not depend on the scope:
// r refers to no other resource, Load computed its requests, and
// Expand(r, nil) returns its instances, of which there are n.
func (c *Config) Precomputed(r *Resource) (n int, ok bool) { return len(r.cached), r.cacheValid }

// InstanceAddrs returns the addresses of a precomputed resource's
// instances, in key order, without assembling the instances.
func (c *Config) InstanceAddrs(r *Resource) []addrs.Instance {
	out := make([]addrs.Instance, len(r.cached))
	for i := range r.cached {
		out[i] = r.cached[i].addr
	}
	return out
}

// ExpandRange returns instances lo to hi-1 of a precomputed resource, as
// Expand(r, nil)[lo:hi] would: a caller walking a large for_each holds a
// window of its instances at a time, not all of them.
func (c *Config) ExpandRange(r *Resource, lo, hi int) []*Instance {
	return r.instances(r.cached[lo:hi])
}

// instances assembles the instances of r from their requests: each points
// at its compact data, from which Body and Attrs are made when asked for.
func (r *Resource) instances(data []instData) []*Instance {
	insts := make([]*Instance, len(data))
	for i := range data {
		insts[i] = data[i].instance(r)
	}
	return insts
}

// instData is one instance in the compact form Load keeps: what the
// request is made of, without the cty objects an Instance carries. Those
// cost about ten times as much, and a large configuration keeps one
// instData for every instance of a resource that refers to no other
// resource, from Load to the end of the command.
type instData struct {
	addr addrs.Instance
	ep   *endpointSpec
	// set has a bit for each attribute the block gives a value (after
	// conversion, before defaults), and vals holds those values in
	// attrID order.
	set  uint32
	vals []cty.Value
	// request is the canonical JSON body (exactly its length), nil when
	// not wholly known.
	request       []byte
	dir           string
	watermarkFree bool
	sensitive     uint32 // attrValues.sensitive
}

// keep files on d the endpoint ep and the values of vals it sends: the
// values of attributes ep does not take, or that stay local, are cleared
// in vals, and the rest are kept in attrID order.
func (d *instData) keep(ep *endpointSpec, vals *[numAttrs]cty.Value) {
	d.ep = ep
	n := 0
	for id := attrID(0); id < numAttrs; id++ {
		if !ep.takes[id] || attrPlace[id] == placeLocal {
			vals[id] = cty.NilVal
		}
		if vals[id] != cty.NilVal {
			d.set |= 1 << id
			n++
		}
	}
	if n > 0 {
		d.vals = make([]cty.Value, 0, n)
		for id := attrID(0); id < numAttrs; id++ {
			if vals[id] != cty.NilVal {
				d.vals = append(d.vals, vals[id])
			}
		}
	}
}

// final is the value of field id of the body, its default when the block
// gives none, and cty.NilVal when the field is not sent.
func (d *instData) final(id attrID) cty.Value {
	if d.set&(1<<id) == 0 {
		return d.ep.defaults[id]
	}
	return d.vals[bits.OnesCount32(d.set&(1<<id-1))]
}

// finalVals is the value of every field of the body, defaults filled in,
// and cty.NilVal for fields not sent.
func (d *instData) finalVals() (vals [numAttrs]cty.Value) {
	k := 0
	for id := attrID(0); id < numAttrs; id++ {
		if d.set&(1<<id) != 0 {
			vals[id] = d.vals[k]
			k++
		} else {
			vals[id] = d.ep.defaults[id] // cty.NilVal when there is none
		}
	}
	return vals
}

// instance builds the Instance of r that d describes.
func (d *instData) instance(r *Resource) *Instance {
	inst := &Instance{
		Addr:          d.addr,
		Resource:      r,
		Endpoint:      d.ep.ep,
		Request:       d.request,
		Dir:           d.dir,
		WatermarkFree: d.watermarkFree,
		DeclRange:     r.DeclRange,
		data:          d,
	}
	for id := attrID(0); d.sensitive != 0 && id < numAttrs; id++ {
		if d.sensitive&(1<<id) != 0 {
			inst.Sensitive = append(inst.Sensitive, attrNames[id])
		}
	}
	return inst
}

// evalInstances evaluates the n instances of a count or for_each, on every
// core when there are many: each is independent of the others, and a
// catalog's single resource is most of a large configuration. at gives
// instance i's evaluation context and address. The diagnostics, appended
// to diags, are in instance order whatever the cores did.
func (c *Config) evalInstances(r *Resource, n int, diags hcl.Diagnostics, at func(i int, sc *scratch) (*hcl.EvalContext, addrs.Instance)) ([]instData, hcl.Diagnostics) {
	insts := make([]instData, n)
	instDiags := make([]hcl.Diagnostics, n)
	parallelRange(n, func(lo, hi int) {
		sc := scratches.Get().(*scratch)
		defer scratches.Put(sc)
		for i := lo; i < hi; i++ {
			ctx, addr := at(i, sc)
			insts[i], instDiags[i] = c.instance(r, ctx, addr, true, sc)
		}
	})
	for _, d := range instDiags {
		diags = append(diags, d...)
	}
	return insts, diags
}

// expand does Expand's work, up to the compact form of the instances. In
// validate mode (Load), a count or for_each that is not known yet is not
// an error: the attributes are checked once with an unknown key instead,
// known reports false, and insts holds that one instance.
func (c *Config) expand(r *Resource, scope Scope, validate bool) (insts []instData, known bool, diags hcl.Diagnostics) {
	var memo map[string]cty.Value
	if len(r.locals) > 0 {
		memo = map[string]cty.Value{}
	}
	ctx, diags := c.evalContext(r.direct, r.locals, r.calls(), scope, memo)
	if diags.HasErrors() {
		return nil, false, diags
	}
	addr := r.Addr()
	noKey := addr.Instance(addrs.NoKey)
	sc := scratches.Get().(*scratch)
	defer scratches.Put(sc)
	switch {
	case r.Count != nil:
		n, ok, d := c.evalCount(r, ctx)
		diags = append(diags, d...)
		if d.HasErrors() {
			return nil, false, diags
		}
		if !ok {
			if !validate {
				return nil, false, append(diags, unknownRepetition(r.Count, "count"))
			}
			inst, d := c.instance(r, childCtx(ctx, "count", cty.ObjectVal(map[string]cty.Value{"index": cty.UnknownVal(cty.Number)})), noKey, false, sc)
			return []instData{inst}, false, append(diags, d...)
		}
		insts, diags = c.evalInstances(r, n, diags, func(i int, sc *scratch) (*hcl.EvalContext, addrs.Instance) {
			key := addrs.IntKey(i)
			return childCtx(ctx, "count", sc.countVal(key.Value())), addr.Instance(key)
		})
	case r.ForEach != nil:
		keys, vals, ok, d := c.evalForEach(r, ctx)
		diags = append(diags, d...)
		if d.HasErrors() {
			return nil, false, diags
		}
		if !ok {
			if !validate {
				return nil, false, append(diags, unknownRepetition(r.ForEach, "for_each"))
			}
			each := cty.ObjectVal(map[string]cty.Value{"key": cty.UnknownVal(cty.String), "value": cty.DynamicVal})
			inst, d := c.instance(r, childCtx(ctx, "each", each), noKey, false, sc)
			return []instData{inst}, false, append(diags, d...)
		}
		insts, diags = c.evalInstances(r, len(keys), diags, func(i int, sc *scratch) (*hcl.EvalContext, addrs.Instance) {
			return childCtx(ctx, "each", sc.eachVal(cty.StringVal(keys[i]), vals[i])), addr.Instance(addrs.StringKey(keys[i]))
		})
	default:
		inst, d := c.instance(r, ctx, noKey, true, sc)
		diags = append(diags, d...)
		insts = []instData{inst}
	}
	if diags.HasErrors() {
		return nil, true, diags
	}
	return insts, true, diags
}

// scratch holds maps that one expansion reuses from instance to instance:
// cty copies what it is given, so the maps only carry values across a call.
// A large for_each builds thousands of instances, and these maps were a
// good part of the garbage.
type scratch struct {
	top, config, settings, small map[string]cty.Value
	buf                          []byte               // a request being encoded
	av                           attrValues           // an instance's attributes
	key                          []byte               // appendGroupKey's text of a config or settings object
	groups                       map[string]cty.Value // such objects by their key (sc.group)
}

// scratches recycles scratch across expansions too: a configuration of
// many single-instance resources expands each on its own, and fresh maps
// for each were a tenth of what loading and planning it allocated.
var scratches = sync.Pool{New: func() any { return new(scratch) }}

func reuse(m *map[string]cty.Value) map[string]cty.Value {
	if *m == nil {
		*m = make(map[string]cty.Value, 8)
	} else {
		clear(*m)
	}
	return *m
}

// countVal is the count object. A map serves as well as an object for
// count.index (references are checked before evaluation) and costs less.
func (sc *scratch) countVal(index cty.Value) cty.Value {
	m := reuse(&sc.small)
	m["index"] = index
	return cty.MapVal(m)
}

// eachVal is the each object; a map when each.value is a string, as it is
// for a set, an object otherwise.
func (sc *scratch) eachVal(key, value cty.Value) cty.Value {
	m := reuse(&sc.small)
	m["key"], m["value"] = key, value
	if value.Type() == cty.String {
		return cty.MapVal(m)
	}
	return cty.ObjectVal(m)
}

func childCtx(parent *hcl.EvalContext, name string, v cty.Value) *hcl.EvalContext {
	ctx := parent.NewChild()
	ctx.Variables = map[string]cty.Value{name: v}
	return ctx
}

func unknownRepetition(expr hcl.Expression, what string) *hcl.Diagnostic {
	return errorAt(expr.Range().Ptr(), fmt.Sprintf("Invalid %s argument", what),
		fmt.Sprintf("The %q value depends on resource attributes that cannot be determined until apply, so genform cannot predict how many instances will be created. Make %s depend only on variables, locals and resources already generated.", what, what))
}

func (c *Config) evalCount(r *Resource, ctx *hcl.EvalContext) (int, bool, hcl.Diagnostics) {
	if r.countBad {
		return 0, false, nil
	}
	v, diags := r.Count.Value(ctx)
	if diags.HasErrors() {
		return 0, false, diags
	}
	// Allowed, as in Terraform: the number of instances is all that shows
	// of a sensitive value. A refusal does not quote it.
	v, marks := v.UnmarkDeep()
	secret := hasSensitive(marks)
	bad := func(detail string) (int, bool, hcl.Diagnostics) {
		if secret {
			detail = `The given "count" argument value, which derives from a sensitive variable and is not shown, is unsuitable: it must be a whole number, zero or more, and at most ` + strconv.Itoa(MaxInstances) + "."
		}
		return 0, false, append(diags, errorAt(r.Count.Range().Ptr(), "Invalid count argument",
			detail))
	}
	if v.IsNull() {
		return bad(`The given "count" argument value is null. A whole number is required.`)
	}
	if !v.IsKnown() {
		return 0, false, diags
	}
	n, err := convert.Convert(v, cty.Number)
	if err != nil {
		return bad(fmt.Sprintf(`The given "count" argument value is unsuitable: %s.`, err))
	}
	i, acc := n.AsBigFloat().Int64()
	if acc != big.Exact || i < 0 {
		return bad(fmt.Sprintf(`The given "count" argument value is unsuitable: it must be a whole number, zero or more; got %s.`, n.AsBigFloat().Text('g', -1)))
	}
	if i > MaxInstances {
		return bad(fmt.Sprintf(`The given "count" argument value %d is more than the %d instances one resource may have.`, i, MaxInstances))
	}
	return int(i), true, diags
}

// tosetStrings evaluates for_each = toset(LIST) as the set's elements in
// order, when LIST is a known list or tuple of known strings, none of
// them null or marked: the distinct strings, sorted, which is what
// iterating the set would give. It reports false for anything else, which
// evalForEach then evaluates as written (and reports on).
//
// What it buys: cty orders a set's elements, on every iteration, with a
// comparison that checks equality first; for 100,000 keys that sort was
// half of loading the configuration (0.46 s), where sorting the strings
// takes 20 ms. TestToSetShortcutMatchesTheSet guards it.
func tosetStrings(expr hcl.Expression, ctx *hcl.EvalContext) ([]string, bool) {
	call, ok := expr.(*hclsyntax.FunctionCallExpr)
	if !ok || call.Name != "toset" || len(call.Args) != 1 || call.ExpandFinal || ctx == nil {
		return nil, false
	}
	if _, ok := ctx.Functions["toset"]; !ok { // genform's own: no configuration defines functions
		return nil, false
	}
	list, diags := call.Args[0].Value(ctx)
	if diags.HasErrors() || !list.IsWhollyKnown() || list.IsNull() || list.IsMarked() {
		return nil, false
	}
	if ty := list.Type(); !ty.IsListType() && !ty.IsTupleType() {
		return nil, false
	}
	keys := make([]string, 0, list.LengthInt())
	for it := list.ElementIterator(); it.Next(); {
		_, e := it.Element()
		if e.IsNull() || e.IsMarked() || e.Type() != cty.String {
			return nil, false
		}
		keys = append(keys, e.AsString())
	}
	sort.Strings(keys)
	keys = slices.Compact(keys)
	if len(keys) > MaxInstances {
		return nil, false
	}
	return keys, true
}

// evalForEach returns the sorted instance keys and each.value for each.
func (c *Config) evalForEach(r *Resource, ctx *hcl.EvalContext) ([]string, []cty.Value, bool, hcl.Diagnostics) {
	if r.countBad {
		return nil, nil, false, nil
	}
	if keys, ok := tosetStrings(r.ForEach, ctx); ok {
		vals := make([]cty.Value, len(keys))
		for i, k := range keys {
			vals[i] = cty.StringVal(k)
		}
		return keys, vals, true, nil
	}
	v, diags := r.ForEach.Value(ctx)
	if diags.HasErrors() {
		return nil, nil, false, diags
	}
	// A value made from a sensitive variable carries the mark on the
	// whole collection: set elements cannot be marked, and map keys never
	// are. Walking every element to look would cost a second sort of a
	// large set.
	if v.IsMarked() {
		return nil, nil, false, append(diags, errorAt(r.ForEach.Range().Ptr(), "Invalid for_each argument",
			"The for_each value derives from a sensitive variable, and its keys would be shown in every instance address. Use a value that is not sensitive, or count."))
	}
	bad := func(detail string) ([]string, []cty.Value, bool, hcl.Diagnostics) {
		return nil, nil, false, append(diags, errorAt(r.ForEach.Range().Ptr(), "Invalid for_each argument",
			detail))
	}
	if v.IsNull() {
		return bad(`The given "for_each" argument value is null. A map, or set of strings, is allowed.`)
	}
	ty := v.Type()
	switch {
	case ty.IsSetType():
		if !ty.ElementType().Equals(cty.String) && ty.ElementType() != cty.DynamicPseudoType {
			return bad(fmt.Sprintf(`The given "for_each" argument value is unsuitable: "for_each" supports maps and sets of strings, but you have provided a set containing type %s.`, ty.ElementType().FriendlyName()))
		}
	case ty.IsMapType() || ty.IsObjectType():
	case ty == cty.DynamicPseudoType:
		return nil, nil, false, diags
	default:
		hint := ""
		if ty.IsListType() || ty.IsTupleType() {
			hint = " Convert a list to a set with toset(...)."
		}
		return bad(fmt.Sprintf(`The given "for_each" argument value is unsuitable: the "for_each" argument must be a map, or set of strings, and you have provided a value of type %s.%s`, ty.FriendlyName(), hint))
	}
	// A set of strings, a map or an object.
	if !v.IsKnown() {
		return nil, nil, false, diags
	}
	if v.LengthInt() > MaxInstances {
		return bad(fmt.Sprintf("for_each has %d elements, more than the %d instances one resource may have.", v.LengthInt(), MaxInstances))
	}
	keys := make([]string, 0, v.LengthInt())
	vals := make([]cty.Value, 0, v.LengthInt())
	if !ty.IsSetType() {
		// cty iterates maps and objects in key order.
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			keys = append(keys, k.AsString())
			vals = append(vals, e)
		}
		return keys, vals, true, diags
	}
	// One pass over the set: cty sorts a set's elements on every
	// iteration, which is most of the cost of a large for_each. Known
	// strings come out in lexical order, the instance key order.
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		if !e.IsKnown() {
			return nil, nil, false, diags
		}
		if e.IsNull() {
			return bad(`The given "for_each" argument value is unsuitable: "for_each" sets must not contain null values.`)
		}
		if e.Type() != cty.String {
			return bad(`The given "for_each" argument value is unsuitable: "for_each" supports maps and sets of strings.`)
		}
		keys = append(keys, e.AsString())
		vals = append(vals, e)
	}
	if !sort.StringsAreSorted(keys) {
		sort.Strings(keys)
		for i, k := range keys {
			vals[i] = cty.StringVal(k)
		}
	}
	return keys, vals, true, diags
}

// attrValues holds one instance's evaluated attributes, by attrID. A null
// value counts as not set, as in Terraform.
type attrValues struct {
	val  [numAttrs]cty.Value
	set  [numAttrs]bool
	expr [numAttrs]hcl.Expression
	// sensitive has a bit for each attribute whose value derives from a
	// sensitive variable.
	sensitive uint32
}

// rng is the source range of attribute id's expression.
func (av *attrValues) rng(id attrID) hcl.Range {
	if e := av.expr[id]; e != nil {
		return e.Range()
	}
	return hcl.Range{}
}

// instance evaluates r's attributes in ctx and builds the request of the
// instance at addr. keyKnown is false when a count or for_each is not known
// yet, so the instance stands for all of them with an unknown key.
func (c *Config) instance(r *Resource, ctx *hcl.EvalContext, addr addrs.Instance, keyKnown bool, sc *scratch) (instData, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	sc.av = attrValues{}
	av := &sc.av
	for _, ra := range r.attrs {
		av.expr[ra.id] = ra.attr.Expr
		if ra.bad {
			av.val[ra.id], av.set[ra.id] = cty.DynamicVal, true
			continue
		}
		v, d := ra.attr.Expr.Value(ctx)
		diags = append(diags, d...)
		if d.HasErrors() {
			v = cty.DynamicVal
		}
		// The request carries the real value; which attributes came from
		// a sensitive variable is kept beside it, for the views. (Most
		// values carry no mark, and UnmarkDeep allocates even then.)
		if v.IsMarked() || !v.Type().IsPrimitiveType() && v.ContainsMarked() {
			var marks cty.ValueMarks
			v, marks = v.UnmarkDeep()
			if _, ok := marks[markSensitive]; ok {
				av.sensitive |= 1 << ra.id
			}
		}
		av.val[ra.id] = v
		av.set[ra.id] = !v.IsNull()
	}
	inst := instData{addr: addr, sensitive: av.sensitive}
	b := bodyBuilder{c: c, r: r, av: av, sc: sc}
	b.endpoint()
	b.build(&inst)
	diags = append(diags, b.diags...)

	dir, d := c.instanceDir(r, av, addr.Key, keyKnown)
	diags = append(diags, d...)
	inst.dir = dir
	return inst, diags
}

// instanceDir is where an instance's files go: "" when that depends on a
// key not known yet.
func (c *Config) instanceDir(r *Resource, av *attrValues, key addrs.Key, keyKnown bool) (string, hcl.Diagnostics) {
	if av.sensitive&(1<<aDir) != 0 {
		// As for for_each keys: the path is shown wherever the files
		// are, in plans, progress lines and the state.
		return "", hcl.Diagnostics{errorAt(av.rng(aDir).Ptr(), "Invalid dir",
			"The dir value derives from a sensitive variable, and a directory is shown wherever its files are: in plans, progress lines, the state and the files' paths. Use a value that is not sensitive.")}
	}
	if av.set[aDir] {
		v := av.val[aDir]
		s, err := convert.Convert(v, cty.String)
		if err != nil {
			return "", typeDiag(aDir, err, av.rng(aDir))
		}
		if !s.IsKnown() {
			return "", nil
		}
		p, err := insidePath(s.AsString())
		if err != nil {
			return "", hcl.Diagnostics{errorAt(av.rng(aDir).Ptr(), "Invalid dir",
				fmt.Sprintf("dir %s.", err))}
		}
		return p, nil
	}
	base := filepath.Join(c.Settings.OutputDir, r.Kind.String(), r.Name)
	if len(c.dirParts) > 0 {
		base = filepath.Join(append(append([]string{c.Settings.OutputDir}, c.dirParts...), r.Kind.String(), r.Name)...)
	}
	k, isString := key.Str()
	switch {
	case !keyKnown && (r.Count != nil || r.ForEach != nil):
		return "", nil
	case key.IsZero():
		return base, nil
	case !isString:
		return filepath.Join(base, key.PathPart()), nil
	}
	if reason := badPathComponent(k); reason != "" {
		rng := r.DeclRange
		if r.ForEach != nil {
			rng = r.ForEach.Range()
		}
		return "", hcl.Diagnostics{errorAt(&rng, "Invalid instance key for a directory",
			fmt.Sprintf("The for_each key %q names the directory of its instance's files, but %s. Use another key, or set dir explicitly.", k, reason))}
	}
	return filepath.Join(base, k), nil
}

// badPathComponent says why s cannot be one directory name, or "".
func badPathComponent(s string) string {
	switch {
	case s == "":
		return "it is empty"
	case s == "." || s == "..":
		return "it would leave the resource's directory"
	case strings.ContainsAny(s, `/\`):
		return "it contains a path separator"
	case strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "it contains a control character"
	}
	return ""
}

func typeDiag(id attrID, err error, rng hcl.Range) hcl.Diagnostics {
	return hcl.Diagnostics{errorAt(rng.Ptr(), "Incorrect attribute value type",
		fmt.Sprintf("Inappropriate value for attribute %q: %s.", attrNames[id], err))}
}

// providerAttrs are the attributes of an instance of a live provider's
// model whose request is known: the model's input as it is sent, under
// the provider's own names (as FlattenRequest shows the recorded one),
// beside the model.
func (inst *Instance) providerAttrs() map[string]cty.Value {
	var body map[string]json.RawMessage
	if err := json.Unmarshal(inst.Request, &body); err != nil {
		return map[string]cty.Value{"model": cty.StringVal(inst.Endpoint.Target())}
	}
	attrs := make(map[string]cty.Value, len(body)+1)
	for k, raw := range body {
		ty, err := ctyjson.ImpliedType(raw)
		if err != nil {
			continue
		}
		v, err := ctyjson.Unmarshal(raw, ty)
		if err != nil {
			continue
		}
		attrs[k] = v
	}
	attrs["model"] = cty.StringVal(inst.Endpoint.Target())
	return attrs
}
