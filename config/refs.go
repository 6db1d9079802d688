package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/genform/genform/internal/addrs"
)

// refRules says which references an expression may make.
type refRules struct {
	where     string // "the service block", for messages
	locals    bool
	resources bool
	count     bool
	each      bool
}

var rootNames = []string{"var", "local", "image", "video", "count", "each", "module", "path"}

// analyze checks every reference expr makes (found with
// Expression.Variables) and returns the resource-level addresses, local
// names and module calls it refers to directly, deduplicated, in order of
// appearance. A module's outputs may depend on its resources, so only an
// expression that may refer to resources may refer to a module.
func (c *Config) analyze(expr hcl.Expression, rules refRules) (resources []addrs.Resource, locals, calls []string, diags hcl.Diagnostics) {
	if expr == nil {
		return nil, nil, nil, nil
	}
	picked := false // an instance of a resource picked by an expression
	for _, tr := range expr.Variables() {
		rng := tr.SourceRange()
		root := tr.RootName()
		name, hasName := "", false
		if len(tr) > 1 {
			if at, ok := tr[1].(hcl.TraverseAttr); ok {
				name, hasName = at.Name, true
			}
		}
		bad := func(summary, detail string) {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: rng.Ptr()})
		}
		switch root {
		case "var":
			if !hasName {
				bad("Invalid reference", `The "var" object cannot be used on its own. Write var.NAME for the variable named NAME.`)
				continue
			}
			if _, ok := c.Variables[name]; !ok {
				bad("Reference to undeclared input variable",
					fmt.Sprintf("An input variable with the name %q has not been declared. This variable can be declared with a variable %q {} block.", name, name)+didYouMean(name, c.variableNames()))
			}
		case "local":
			if !rules.locals {
				bad("Invalid reference", fmt.Sprintf("Local values cannot be used in %s.", rules.where))
				continue
			}
			if !hasName {
				bad("Invalid reference", `The "local" object cannot be used on its own. Write local.NAME for the local value named NAME.`)
				continue
			}
			if _, ok := c.Locals[name]; !ok {
				bad("Reference to undeclared local value",
					fmt.Sprintf("A local value with the name %q has not been declared.", name)+didYouMean(name, c.localNames()))
				continue
			}
			locals = appendUnique(locals, name)
		case "image", "video":
			if !rules.resources {
				bad("Invalid reference", fmt.Sprintf("%s cannot refer to resources: its value is needed before any resource is evaluated.", upperFirst(rules.where)))
				continue
			}
			if !hasName {
				bad("Invalid reference", fmt.Sprintf("A reference to a resource type must be followed by at least one attribute access, specifying the resource name, as in %s.NAME.", root))
				continue
			}
			kind, _ := addrs.ParseKind(root)
			addr := addrs.Resource{Module: c.module, Kind: kind, Name: name}
			r, ok := c.byAddr[addr]
			if !ok {
				bad("Reference to undeclared resource",
					fmt.Sprintf("%s %s resource named %q has not been declared.", article(root), root, name)+didYouMean(name, c.resourceNames(kind)))
				continue
			}
			if detail := unsupportedResourceAttr(r, tr); detail != "" {
				bad("Unsupported attribute", detail)
				continue
			}
			picked = picked || len(tr) == 2 && (r.Count != nil || r.ForEach != nil)
			resources = appendUnique(resources, addr)
		case "module":
			if !rules.resources {
				bad("Invalid reference", fmt.Sprintf("%s cannot refer to a module's outputs: its value is needed before any resource is evaluated, and a module's outputs may depend on its resources.", upperFirst(rules.where)))
				continue
			}
			if !hasName {
				bad("Invalid reference", `The "module" object cannot be used on its own. Write module.NAME.OUTPUT for the output OUTPUT of the module block named NAME.`)
				continue
			}
			call, ok := c.calls[name]
			if !ok {
				bad("Reference to undeclared module",
					fmt.Sprintf("No module call named %q is declared in this module.", name)+didYouMean(name, c.callOrder))
				continue
			}
			if out, ok := moduleOutputStep(tr, call); ok && call.instances != nil && !slices.Contains(call.outputNames(), out) {
				bad("Unsupported attribute",
					fmt.Sprintf("The module %q (%s) has no output named %q.", name, call.Dir, out)+didYouMean(out, call.outputNames()))
				continue
			}
			calls = appendUnique(calls, name)
		case "path":
			if name != "module" && name != "root" && name != "cwd" {
				bad("Invalid path attribute", `The "path" object has three attributes: path.module (the module's folder, relative to the working directory), path.root and path.cwd.`)
			}
		case "count":
			if !rules.count {
				bad(`Reference to "count" in non-counted context`, fmt.Sprintf(`The "count" object can only be used in a resource block that sets count; this is %s.`, rules.where))
				continue
			}
			if name != "index" {
				bad("Invalid count attribute", `The "count" object has one attribute: count.index.`)
			}
		case "each":
			if !rules.each {
				bad(`Reference to "each" in context without for_each`, fmt.Sprintf(`The "each" object can only be used in a resource block that sets for_each; this is %s.`, rules.where))
				continue
			}
			if name != "key" && name != "value" {
				bad(`Invalid "each" attribute`, `The "each" object has two attributes: each.key and each.value.`)
			}
		default:
			bad("Unknown variable", fmt.Sprintf("There is no variable named %q.", root)+didYouMean(root, rootNames))
		}
	}
	if picked {
		for _, tr := range pickedRefs(expr) {
			kind, _ := addrs.ParseKind(tr.RootName())
			r := c.byAddr[addrs.Resource{Kind: kind, Name: tr[1].(hcl.TraverseAttr).Name}]
			if r == nil {
				continue
			}
			if detail := unsupportedResourceAttr(r, tr); detail != "" {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unsupported attribute", Detail: detail, Subject: tr.SourceRange().Ptr()})
			}
		}
	}
	return resources, locals, calls, diags
}

// moduleOutputStep is the output a reference to module call names:
// module.NAME.OUTPUT, or module.NAME[KEY].OUTPUT for a call with count or
// for_each.
func moduleOutputStep(tr hcl.Traversal, call *ModuleCall) (string, bool) {
	k := 2
	if call.Count != nil || call.ForEach != nil {
		if len(tr) <= k {
			return "", false
		}
		if _, ok := tr[k].(hcl.TraverseIndex); !ok {
			return "", false
		}
		k++
	}
	if len(tr) <= k {
		return "", false
	}
	at, ok := tr[k].(hcl.TraverseAttr)
	return at.Name, ok
}

// pickedRefs finds in expr the references to an instance picked by an
// expression, as in image.hero[count.index].outputs[0] or
// image.hero[each.key].id, which Expression.Variables cuts short at
// image.hero. Each is returned whole, the picking index as a TraverseIndex
// with an unknown key, so that what is checked of a reference with a
// literal index is checked of it too. Only the native syntax is searched.
func pickedRefs(expr hcl.Expression) []hcl.Traversal {
	node, ok := expr.(hclsyntax.Node)
	if !ok {
		return nil
	}
	var refs []hcl.Traversal
	hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
		rel, ok := n.(*hclsyntax.RelativeTraversalExpr)
		if !ok {
			return nil
		}
		ix, ok := rel.Source.(*hclsyntax.IndexExpr)
		if !ok {
			return nil
		}
		src, ok := ix.Collection.(*hclsyntax.ScopeTraversalExpr)
		if !ok || len(src.Traversal) != 2 {
			return nil
		}
		if _, ok := addrs.ParseKind(src.Traversal.RootName()); !ok {
			return nil
		}
		if _, ok := src.Traversal[1].(hcl.TraverseAttr); !ok {
			return nil
		}
		tr := append(hcl.Traversal{}, src.Traversal...)
		tr = append(tr, hcl.TraverseIndex{Key: cty.DynamicVal, SrcRange: ix.BracketRange})
		refs = append(refs, append(tr, rel.Traversal...))
		return nil
	})
	return refs
}

func appendUnique[T comparable](list []T, s T) []T {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

func (c *Config) localNames() []string {
	names := make([]string, 0, len(c.Locals))
	for n := range c.Locals {
		names = append(names, n)
	}
	return names
}

func (c *Config) resourceNames(kind addrs.Kind) []string {
	var names []string
	for _, r := range c.byAddr {
		if r.Kind == kind {
			names = append(names, r.Name)
		}
	}
	return names
}

// analyzeLocals checks the locals' references, orders them so each comes
// after the locals it uses, reports cycles, computes which resources each
// refers to (through other locals too), and evaluates the ones that refer to
// none.
func (c *Config) analyzeLocals(list []*Local) hcl.Diagnostics {
	var diags hcl.Diagnostics
	direct := map[string][]addrs.Resource{}
	for _, l := range list {
		res, locs, calls, d := c.analyze(l.Expr, refRules{where: "a local value", locals: true, resources: true})
		diags = append(diags, d...)
		l.checked = !d.HasErrors()
		l.locals = locs
		l.calls = calls
		l.direct = res
		direct[l.Name] = res
	}
	index := make(map[string]int, len(list))
	for i, l := range list {
		index[l.Name] = i
	}
	order, cycles := topoSort(len(list), func(i int) []int {
		var deps []int
		for _, n := range list[i].locals {
			deps = append(deps, index[n])
		}
		return deps
	})
	for _, cyc := range cycles {
		names := make([]string, len(cyc))
		for i, k := range cyc {
			names[i] = "local." + list[k].Name
			list[k].checked = false
		}
		diags = append(diags, errorAt(list[cyc[0]].DeclRange.Ptr(), "Cycle in local values",
			fmt.Sprintf("These local values refer to each other in a cycle: %s. Break the cycle by removing one of the references.", joinList(names))))
	}
	c.localList = c.localList[:0]
	static := map[string]cty.Value{}
	for _, i := range order {
		l := list[i]
		c.localList = append(c.localList, l)
		refs := append([]addrs.Resource(nil), direct[l.Name]...)
		l.static = l.checked
		for _, n := range l.locals {
			dep := c.Locals[n]
			refs = append(refs, dep.Refs...)
			if !dep.static {
				l.static = false
			}
		}
		l.Refs = sortedUnique(refs)
		if len(l.Refs) > 0 || len(l.calls) > 0 {
			l.static = false
		}
		if !l.static {
			continue
		}
		ctx := &hcl.EvalContext{
			Variables: map[string]cty.Value{"var": c.varObj, "local": subObject(static, l.locals), "path": c.pathObj},
			Functions: c.funcs,
		}
		v, d := l.Expr.Value(ctx)
		diags = append(diags, d...)
		if d.HasErrors() {
			v = cty.DynamicVal
		}
		l.value = v
		static[l.Name] = v
	}
	// Locals in a cycle never reach the order; they stay unknown.
	for _, l := range list {
		if !l.static && l.value == cty.NilVal {
			l.value = cty.DynamicVal
		}
	}
	return diags
}

// subObject builds an object of the named entries of m (cty.DynamicVal for
// missing ones).
func subObject(m map[string]cty.Value, names []string) cty.Value {
	if len(names) == 0 {
		return cty.EmptyObjectVal
	}
	o := make(map[string]cty.Value, len(names))
	for _, n := range names {
		v, ok := m[n]
		if !ok {
			v = cty.DynamicVal
		}
		o[n] = v
	}
	return cty.ObjectVal(o)
}

// sortedUnique sorts list in address order and drops repeats.
func sortedUnique(list []addrs.Resource) []addrs.Resource {
	if len(list) == 0 {
		return nil
	}
	slices.SortFunc(list, addrs.Resource.Compare)
	out := list[:1]
	for _, s := range list[1:] {
		if s != out[len(out)-1] {
			out = append(out, s)
		}
	}
	return out
}

func joinList(names []string) string { return joinWith(names, "and") }

// joinWith joins names as a sentence does: "a, b and c".
func joinWith(names []string, conj string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	s := ""
	for i, n := range names {
		switch {
		case i == 0:
		case i == len(names)-1:
			s += " " + conj + " "
		default:
			s += ", "
		}
		s += n
	}
	return s
}

// The attributes of an instance's value and of each of its outputs, in
// the order messages list them (config.InstanceType).
var (
	instanceAttrNames = []string{"id", "generation_id", "status", "outputs"}
	outputAttrNames   = []string{"id", "media_url", "thumbnail_url", "path", "sha256"}
)

// unsupportedResourceAttr says what is wrong with tr, a reference to r,
// when it names an attribute an instance of r, or one of its outputs, does
// not have (image.hero.output), with the attribute it likely means; ""
// when it does not. Evaluation would refuse it too, without saying which
// attributes there are. A reference whose shape does not fit r's (an
// instance of a resource without count or for_each indexed) is left to
// evaluation, whose message says that.
func unsupportedResourceAttr(r *Resource, tr hcl.Traversal) string {
	k := 2
	if r.Count != nil || r.ForEach != nil {
		if len(tr) <= k {
			return ""
		}
		if _, ok := tr[k].(hcl.TraverseIndex); !ok {
			return ""
		}
		k++
	}
	if len(tr) <= k {
		return ""
	}
	at, ok := tr[k].(hcl.TraverseAttr)
	if !ok {
		return ""
	}
	if !slices.Contains(instanceAttrNames, at.Name) {
		return fmt.Sprintf("%s has no attribute %q: the attributes of %s %s are %s.%s",
			r.Addr(), at.Name, strings.ToLower(article(r.Kind.String())), r.Kind, joinList(instanceAttrNames), didYouMean(at.Name, instanceAttrNames))
	}
	if at.Name != "outputs" || len(tr) <= k+2 {
		return ""
	}
	if _, ok := tr[k+1].(hcl.TraverseIndex); !ok {
		return ""
	}
	out, ok := tr[k+2].(hcl.TraverseAttr)
	if !ok || slices.Contains(outputAttrNames, out.Name) {
		return ""
	}
	return fmt.Sprintf("An output of %s has no attribute %q: the attributes of each of outputs are %s.%s",
		r.Addr(), out.Name, joinList(outputAttrNames), didYouMean(out.Name, outputAttrNames))
}
