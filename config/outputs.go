package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/genform/genform/internal/addrs"
)

// This file holds the output blocks (decoding, references, evaluation,
// the sensitivity check) and what Load knows of a resource's outputs
// before anything is generated: how many files one generation makes when image_number is
// known, so that a reference to outputs[i] past the last one is refused at
// validate rather than at apply, and which images rely on the service's
// default image count, which validate warns about.

// DefaultImageNumber reports whether inst is an image that leaves
// image_number unset on an endpoint that takes it, and so gets as many
// images a generation as the service (or the provider's model) makes by
// default; n is that default (4 for the reference service), 0 when the
// provider documents none. A model that does not take image_number makes
// its one image whatever the block says: for it, ok is false.
func (inst *Instance) DefaultImageNumber() (n int, ok bool) {
	m, ok := inst.data.defaultImageNumber()
	return int(m), ok
}

// ImageNumberDefaulted is DefaultImageNumber's ok alone: whether the
// service's default gives the instance's image count. It reads a bit of
// the instance, for the planner to say so of every change cheaply.
func (inst *Instance) ImageNumberDefaulted() bool { return inst.data.imageNumberDefaulted() }

func (d *instData) defaultImageNumber() (int64, bool) {
	if !d.imageNumberDefaulted() {
		return 0, false
	}
	n, _ := knownWhole(d.ep.defaults[aImageNumber])
	return n, true
}

// imageNumberDefaulted is defaultImageNumber's ok, without reading the
// number (which copies it), for counting a large for_each's instances.
func (d *instData) imageNumberDefaulted() bool {
	return d != nil && d.ep != nil && d.addr.Resource.Kind == addrs.Image && d.ep.takes[aImageNumber] && d.set&(1<<aImageNumber) == 0
}

// outputCount is how many outputs one generation of d makes, when that is
// known before it runs: one for a video, image_number for an image, the
// endpoint's default when the block leaves it unset. ok is false while
// image_number is not known (made from another resource, or a variable
// with no value), and for a provider's model that does not take
// image_number: how many such a model makes is its own matter, and a
// reference refused here could be one that works.
func (d *instData) outputCount() (n int64, ok bool) {
	if d == nil || d.ep == nil {
		return 0, false
	}
	if d.addr.Resource.Kind == addrs.Video {
		return 1, true
	}
	if !d.ep.takes[aImageNumber] {
		return 0, false
	}
	n, ok = knownWhole(d.final(aImageNumber))
	return n, ok && n > 0
}

// mostImages is the most images one generation at d's endpoint makes, for
// saying how far image_number can be raised; 0 when not known.
func (d *instData) mostImages() int64 {
	switch {
	case d.ep.prov != nil:
		return d.ep.caps.MostImages()
	case d.ep.lim != nil && len(d.ep.lim.ImageNumbers) > 0:
		return slices.Max(d.ep.lim.ImageNumbers)
	}
	return 0
}

// knownWhole is v as an int64 when it is a known, whole number.
func knownWhole(v cty.Value) (int64, bool) {
	if v == cty.NilVal || !v.IsKnown() || v.IsNull() || v.Type() != cty.Number {
		return 0, false
	}
	return wholeNumber(v)
}

// outputsOf is what Load knows of the outputs of one resource's instances.
type outputsOf struct {
	most    int64 // the most outputs an instance makes
	same    bool  // every instance makes most
	set     bool  // image_number is set in every instance
	unset   bool  // image_number is set in none
	ceiling int64 // the most images a generation at its endpoint can make
}

// noteOutputs records in counts how many outputs r's instances insts
// make, when that is known of every one of them.
func noteOutputs(counts map[addrs.Resource]outputsOf, r *Resource, insts []instData) {
	if len(insts) == 0 {
		return
	}
	o := outputsOf{same: true, set: true, unset: true}
	for i := range insts {
		n, ok := insts[i].outputCount()
		if !ok {
			return
		}
		if i > 0 && n != o.most {
			o.same = false
		}
		o.most = max(o.most, n)
		if insts[i].imageNumberDefaulted() {
			o.set = false
		} else {
			o.unset = false
		}
		o.ceiling = max(o.ceiling, insts[i].mostImages())
	}
	counts[r.Addr()] = o
}

// checkOutputIndexes refuses a reference to outputs[i] of a resource whose
// instances make fewer outputs than i+1, which apply would fail on after
// generating everything before it. Only literal indexes of outputs are
// checked (image.hero.outputs[3], image.hero[count.index].outputs[3]):
// one computed, or a reference through a local's value, is left to
// evaluation.
func (c *Config) checkOutputIndexes(counts map[addrs.Resource]outputsOf) hcl.Diagnostics {
	if len(counts) == 0 {
		return nil
	}
	var diags hcl.Diagnostics
	check := func(m *Config, expr hcl.Expression) {
		if expr == nil {
			return
		}
		for _, tr := range append(expr.Variables(), pickedRefs(expr)...) {
			if d := m.checkOutputIndex(tr, counts); d != nil {
				diags = append(diags, d)
			}
		}
	}
	for _, r := range c.Resources {
		if len(r.direct) == 0 {
			continue
		}
		check(r.owner, r.Count)
		check(r.owner, r.ForEach)
		for _, a := range r.attrs {
			if !a.bad {
				check(r.owner, a.attr.Expr)
			}
		}
	}
	for _, m := range append([]*Config{c}, c.descendants()...) {
		for _, l := range m.localList {
			if len(l.direct) > 0 && l.checked {
				check(m, l.Expr)
			}
		}
		for _, o := range m.Outputs {
			if len(o.direct) > 0 && o.ok {
				check(m, o.Expr)
			}
		}
	}
	return diags
}

// checkOutputIndex is checkOutputIndexes for one traversal.
func (c *Config) checkOutputIndex(tr hcl.Traversal, counts map[addrs.Resource]outputsOf) *hcl.Diagnostic {
	kind, ok := addrs.ParseKind(tr.RootName())
	if !ok || len(tr) < 2 {
		return nil
	}
	name, ok := tr[1].(hcl.TraverseAttr)
	if !ok {
		return nil
	}
	r := c.byAddr[addrs.Resource{Module: c.module, Kind: kind, Name: name.Name}]
	if r == nil {
		return nil
	}
	o, ok := counts[r.Addr()]
	if !ok {
		return nil
	}
	k := 2
	if r.Count != nil || r.ForEach != nil {
		if len(tr) <= k {
			return nil
		}
		if _, ok := tr[k].(hcl.TraverseIndex); !ok {
			return nil
		}
		k++
	}
	if len(tr) <= k+1 {
		return nil
	}
	if at, ok := tr[k].(hcl.TraverseAttr); !ok || at.Name != "outputs" {
		return nil
	}
	ix, ok := tr[k+1].(hcl.TraverseIndex)
	if !ok {
		return nil
	}
	i, ok := knownWhole(ix.Key)
	if !ok || i >= 0 && i < o.most {
		return nil
	}
	rng := hcl.RangeBetween(tr[0].SourceRange(), tr[k+1].SourceRange())
	return errorAt(&rng, "No such output",
		outputIndexDetail(r, o, i))
}

// outputIndexDetail says why outputs[i] of r does not exist and what to
// do: "image.a has 1 output (image_number = 1): outputs[3] does not
// exist; ..."
func outputIndexDetail(r *Resource, o outputsOf, i int64) string {
	var b strings.Builder
	who := r.Addr().String()
	if r.Count != nil || r.ForEach != nil {
		who = "Each instance of " + who
		if !o.same {
			who = "The instances of " + r.Addr().String()
		}
	}
	has := "has"
	if !o.same {
		has = "have at most"
	}
	fmt.Fprintf(&b, "%s %s %d %s", who, has, o.most, plural(int(o.most), "output", "outputs"))
	switch {
	case r.Kind == addrs.Video:
		b.WriteString(" (a video is one file)")
	case o.same && o.set:
		fmt.Fprintf(&b, " (image_number = %d)", o.most)
	case o.same && o.unset:
		fmt.Fprintf(&b, " (image_number is not set: %d is the default)", o.most)
	default:
		b.WriteString(" (their image_number, or the default where it is not set)")
	}
	fmt.Fprintf(&b, ": outputs[%d] does not exist; ", i)
	refer := "Refer to one of those"
	if o.most == 1 {
		b.WriteString("the only valid index is 0.")
		refer = "Refer to outputs[0]"
	} else {
		fmt.Fprintf(&b, "valid indexes are 0 to %d.", o.most-1)
	}
	switch {
	case i < 0:
		b.WriteString(" Indexes count from 0: outputs[0] is the first output.")
	case r.Kind == addrs.Image && i+1 == o.ceiling:
		fmt.Fprintf(&b, " %s, or set image_number = %d to make outputs[%d].", refer, i+1, i)
	case r.Kind == addrs.Image && i < o.ceiling:
		fmt.Fprintf(&b, " %s, or set image_number = %d (or more) to make outputs[%d].", refer, i+1, i)
	case r.Kind == addrs.Image && o.ceiling > 0:
		fmt.Fprintf(&b, " %s: one generation makes at most %d images.", refer, o.ceiling)
	default:
		fmt.Fprintf(&b, " %s.", refer)
	}
	return b.String()
}

// noteDefaultImages keeps, for ImageNumberWarnings, a warning about r when
// its instances insts leave image_number to a default of more than one
// image: a bare image block pays for four, which a newcomer rarely means.
// known is false when insts is the one instance standing for a count or
// for_each not known yet.
func (c *Config) noteDefaultImages(r *Resource, insts []instData, known bool) {
	var def, n int64
	var ep *endpointSpec
	relying := 0
	for i := range insts {
		d := &insts[i]
		if !d.imageNumberDefaulted() {
			continue
		}
		if d.ep != ep {
			// Read once an endpoint: the number is copied as it is read.
			ep = d.ep
			n, _ = d.defaultImageNumber()
		}
		if n > 1 {
			def, relying = max(def, n), relying+1
		}
	}
	if relying == 0 {
		return
	}
	who := "the service makes"
	if r.live != nil {
		who = fmt.Sprintf("provider %s's model makes", r.live.name)
	}
	repeat := "count"
	if r.ForEach != nil {
		repeat = "for_each"
	}
	makes := fmt.Sprintf("%s %d images a generation (its default)", who, def)
	var detail string
	switch {
	case r.Count == nil && r.ForEach == nil:
		detail = fmt.Sprintf("%s sets no image_number, so %s, each one paid for.", r.Addr(), makes)
	case !known:
		detail = fmt.Sprintf("%s sets no image_number, so %s for each of the instances its %s makes, each one paid for.", r.Addr(), makes, repeat)
	case relying == len(insts):
		detail = fmt.Sprintf("%s sets no image_number, so %s: %d in all for its %d %s, each one paid for.", r.Addr(), makes, def*int64(relying), relying, plural(relying, "instance", "instances"))
	default:
		detail = fmt.Sprintf("%s leaves image_number unset in %d of its %d instances, so %s for each of them: %d in all, each one paid for.", r.Addr(), relying, len(insts), makes, def*int64(relying))
	}
	detail += fmt.Sprintf(" Set image_number = 1 for one image, or image_number = %d if %d is what you mean.", def, def)
	rng := r.DeclRange
	c.imageWarnings = append(c.imageWarnings, &hcl.Diagnostic{
		Severity: hcl.DiagWarning,
		Summary:  "image_number not set",
		Detail:   detail,
		Subject:  &rng,
	})
}

// ImageNumberWarnings warns, once for each image block whose instances
// leave image_number to a default of more than one image (the reference
// service's is 4), of what that makes and costs, and how to ask for one.
// Only validate prints them: plan shows the counts in its own way.
func (c *Config) ImageNumberWarnings() hcl.Diagnostics { return c.imageWarnings }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

var outputSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "value", Required: true}, {Name: "description"}, {Name: "sensitive"}, {Name: "depends_on"},
	},
}

func decodeOutput(b *hcl.Block) (*Output, hcl.Diagnostics) {
	o := &Output{Name: b.Labels[0], DeclRange: b.DefRange}
	var diags hcl.Diagnostics
	diags = append(diags, checkName(o.Name, "output", b.LabelRanges[0])...)
	content, d := b.Body.Content(outputSchema)
	diags = append(diags, d...)
	if a, ok := content.Attributes["value"]; ok {
		o.Expr = a.Expr
	}
	diags = append(diags, decodeDescribed(content, &o.Description, &o.Sensitive)...)
	if a, ok := content.Attributes["depends_on"]; ok {
		deps, d := decodeDependsOn(a)
		diags = append(diags, d...)
		o.dependsOn = deps
	}
	return o, diags
}

func (c *Config) analyzeOutput(o *Output) hcl.Diagnostics {
	if o.Expr == nil {
		return nil
	}
	res, locs, calls, diags := c.analyze(o.Expr, refRules{where: "output " + o.Name, locals: true, resources: true})
	o.ok = !diags.HasErrors()
	o.direct, o.locals, o.calls = res, locs, calls
	refs := append([]addrs.Resource(nil), res...)
	for _, n := range calls {
		refs = append(refs, c.callRefs(n)...)
	}
	for _, l := range locs {
		refs = append(refs, c.Locals[l].Refs...)
	}
	for _, dep := range o.dependsOn {
		if _, ok := c.byAddr[dep]; !ok {
			diags = append(diags, c.undeclaredDependency(dep, o.DeclRange))
			continue
		}
		refs = append(refs, dep)
	}
	o.Refs = sortedUnique(refs)
	return diags
}

// EvalOutputs evaluates every output in scope. Values that depend on
// resources not yet generated stay unknown.
func (c *Config) EvalOutputs(scope Scope) (map[string]cty.Value, hcl.Diagnostics) {
	out := make(map[string]cty.Value, len(c.Outputs))
	var diags hcl.Diagnostics
	memo := map[string]cty.Value{}
	for _, o := range c.Outputs {
		if !o.ok {
			out[o.Name] = cty.DynamicVal
			continue
		}
		ctx, d := c.evalContext(o.direct, o.locals, o.calls, scope, memo)
		diags = append(diags, d...)
		v, d := o.Expr.Value(ctx)
		diags = append(diags, d...)
		if d.HasErrors() {
			v = cty.DynamicVal
		}
		v, marks := v.UnmarkDeep()
		if hasSensitive(marks) && !o.Sensitive {
			// Load refuses what it can see; a value known only now (a
			// conditional on a resource) is refused here.
			diags = append(diags, sensitiveOutputDiag(o))
			v = cty.DynamicVal
		}
		out[o.Name] = v
	}
	return out, hideSensitive(diags)
}

// checkOutputSensitivity refuses an output whose value derives from a
// sensitive variable (or one the service token is made from) unless it
// is declared sensitive, as Terraform does: printing it must be asked for.
// Outputs are evaluated in scope, where resources are unknown.
func (c *Config) checkOutputSensitivity(scope Scope) hcl.Diagnostics {
	var diags hcl.Diagnostics
	memo := map[string]cty.Value{}
	for _, o := range c.Outputs {
		if !o.ok || o.Sensitive {
			continue
		}
		ctx, d := c.evalContext(o.direct, o.locals, o.calls, scope, memo)
		if d.HasErrors() {
			continue // reported where the locals are
		}
		v, d := o.Expr.Value(ctx)
		if d.HasErrors() {
			continue // reported when the output is evaluated
		}
		if _, marks := v.UnmarkDeep(); hasSensitive(marks) {
			diags = append(diags, sensitiveOutputDiag(o))
		}
	}
	return diags
}

func sensitiveOutputDiag(o *Output) *hcl.Diagnostic {
	return errorAt(o.Expr.Range().Ptr(), "Output refers to sensitive values",
		fmt.Sprintf("The value of output %q derives from a sensitive variable (or one the service token is made from), and genform prints outputs. If you do mean to export it, declare the output sensitive by adding this argument to its block:\n    sensitive = true\n\ngenform output then hides it in the list of outputs and prints it only when asked for by name.", o.Name))
}
