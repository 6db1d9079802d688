package config

import (
	"github.com/zclconf/go-cty/cty"

	"github.com/genform/genform/internal/addrs"
)

// Scope gives the value of each resource, by its address, for evaluating the expressions that refer to it. A
// resource without count or for_each has an object of InstanceType; one
// with count a tuple of them; one with for_each an object keyed by instance
// key. ResourceValue builds these. A missing address means unknown; values
// may also be wholly or partly unknown.
type Scope map[addrs.Resource]cty.Value

var outputObjectType = cty.Object(map[string]cty.Type{
	"id":            cty.String,
	"media_url":     cty.String,
	"thumbnail_url": cty.String,
	"path":          cty.String,
	"sha256":        cty.String,
})

var instanceType = cty.Object(map[string]cty.Type{
	"id":            cty.String,
	"generation_id": cty.String,
	"status":        cty.String,
	"outputs":       cty.List(outputObjectType),
})

// InstanceType is the object type of one instance's value, what
// image.NAME (or image.NAME[0]) evaluates to:
// {id, generation_id, status: string, outputs: list(object({id, media_url,
// thumbnail_url, path, sha256: string}))}.
func InstanceType() cty.Type { return instanceType }

// OutputValue is one output file of an instance, as the state records it.
type OutputValue struct {
	ID, MediaURL, ThumbnailURL, Path, SHA256 string
}

// InstanceValue builds the known value of an instance from what the state
// records: its creation id, generation id, status and outputs.
func InstanceValue(id, generationID, status string, outputs []OutputValue) cty.Value {
	outs := cty.ListValEmpty(outputObjectType)
	if len(outputs) > 0 {
		vals := make([]cty.Value, len(outputs))
		for i, o := range outputs {
			vals[i] = cty.ObjectVal(map[string]cty.Value{
				"id":            cty.StringVal(o.ID),
				"media_url":     cty.StringVal(o.MediaURL),
				"thumbnail_url": cty.StringVal(o.ThumbnailURL),
				"path":          cty.StringVal(o.Path),
				"sha256":        cty.StringVal(o.SHA256),
			})
		}
		outs = cty.ListVal(vals)
	}
	v := cty.ObjectVal(map[string]cty.Value{
		"id":            cty.StringVal(id),
		"generation_id": cty.StringVal(generationID),
		"status":        cty.StringVal(status),
		"outputs":       outs,
	})
	// A plan builds the value of every recorded instance: let them all
	// share one type rather than each carry its own.
	return withType(unknownInstance, v)
}

var unknownInstance = cty.UnknownVal(instanceType)

// UnknownInstance is the value of an instance that does not exist yet, or
// will be generated again: every attribute is known only after apply.
func UnknownInstance() cty.Value { return unknownInstance }

// ResourceValue assembles the value of resource r for a Scope from its
// instances (as Expand returned them, in order) and their values keyed by
// Instance.Addr. An instance missing from values is unknown
// (UnknownInstance). The result is the single instance's object when r has
// neither count nor for_each, a tuple in count order with count, and an
// object keyed by instance key with for_each. So the reconciler builds a
// Scope by expanding each resource in Config.Resources order and storing
// scope[r.Addr()] = ResourceValue(r, instances, valuesFromState).
func ResourceValue(r *Resource, instances []*Instance, values map[addrs.Instance]cty.Value) cty.Value {
	get := func(inst *Instance) cty.Value {
		if v, ok := values[inst.Addr]; ok && v != cty.NilVal {
			return v
		}
		return UnknownInstance()
	}
	switch {
	case r.Count != nil:
		if len(instances) == 0 {
			return cty.EmptyTupleVal
		}
		vals := make([]cty.Value, len(instances))
		for i, inst := range instances {
			vals[i] = get(inst)
		}
		return cty.TupleVal(vals)
	case r.ForEach != nil:
		if len(instances) == 0 {
			return cty.EmptyObjectVal
		}
		vals := make(map[string]cty.Value, len(instances))
		for _, inst := range instances {
			k, _ := inst.Addr.Key.Str()
			vals[k] = get(inst)
		}
		return cty.ObjectVal(vals)
	default:
		if len(instances) == 0 {
			return UnknownInstance()
		}
		return get(instances[0])
	}
}

// unknownValue is the value of a resource that is missing from a Scope.
func unknownValue(r *Resource) cty.Value {
	if r.Count == nil && r.ForEach == nil {
		return UnknownInstance()
	}
	return cty.DynamicVal
}

// unknownResourceValue is what ResourceValue(r, instances, nil) gives for
// the instances data describes: every instance unknown.
func unknownResourceValue(r *Resource, data []instData) cty.Value {
	switch {
	case r.Count != nil:
		if len(data) == 0 {
			return cty.EmptyTupleVal
		}
		vals := make([]cty.Value, len(data))
		for i := range vals {
			vals[i] = UnknownInstance()
		}
		return cty.TupleVal(vals)
	case r.ForEach != nil:
		if len(data) == 0 {
			return cty.EmptyObjectVal
		}
		vals := make(map[string]cty.Value, len(data))
		for _, d := range data {
			k, _ := d.addr.Key.Str()
			vals[k] = UnknownInstance()
		}
		return cty.ObjectVal(vals)
	}
	return UnknownInstance()
}
