package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/genform/genform/internal/addrs"
)

// ModuleCall is a module block: the configuration in the folder source
// names, called once, or once per count index or for_each key, with the
// block's other arguments as its input variables.
//
// A module is a folder of *.gen.hcl files with its own variable, locals,
// image, video, output (and module and moved) blocks; settings, service
// and provider blocks are the root module's alone. Its resources are
// addressed module.NAME.image.x (module.NAME["k"].image.x with for_each),
// and the configuration refers to its outputs as module.NAME.OUTPUT. Paths
// in a module (dir, file()) are relative to the working directory, as
// everywhere; path.module is the module's folder, relative to it.
type ModuleCall struct {
	Name string
	// Source is the source argument as written; Dir the folder it names,
	// relative to the working directory and cleaned.
	Source, Dir string
	// Count and ForEach are nil when absent.
	Count, ForEach hcl.Expression
	// DeclRange is the block's header.
	DeclRange hcl.Range

	inputs    hcl.Attributes
	sourceRng hcl.Range
	// instances are the module's instances, in key order, once loaded.
	instances []*Config
}

// maxModuleDepth bounds how deep modules nest, so that a module that calls
// itself through another is reported, not followed.
const maxModuleDepth = 16

// decodeModuleCall reads a module block. Its source is read at once: it
// is a literal path, as Terraform requires.
func (c *Config) decodeModuleCall(b *hcl.Block) (*ModuleCall, hcl.Diagnostics) {
	m := &ModuleCall{Name: b.Labels[0], DeclRange: b.DefRange}
	diags := checkName(m.Name, "module", b.LabelRanges[0])
	attrs, d := b.Body.JustAttributes()
	diags = append(diags, d...)
	m.inputs = hcl.Attributes{}
	for name, a := range attrs {
		switch name {
		case "source":
			m.sourceRng = a.Expr.Range()
			v, d := a.Expr.Value(nil)
			if d.HasErrors() || v.Type() != cty.String || v.IsNull() || !v.IsKnown() {
				diags = append(diags, errorAt(a.Expr.Range().Ptr(), "Invalid module source",
					`A module's source is a literal string: the path of a local folder, as in source = "./modules/product_shot".`))
				continue
			}
			m.Source = v.AsString()
		case "count":
			m.Count = a.Expr
		case "for_each":
			m.ForEach = a.Expr
		case "depends_on", "providers", "version":
			diags = append(diags, errorAt(a.NameRange.Ptr(), "Unsupported module argument",
				fmt.Sprintf("genform's modules do not take %s: %s. Remove it.", name, map[string]string{
					"depends_on": "a resource inside the module orders itself by what it refers to, and depends_on belongs on those resources",
					"providers":  "every module uses the root module's provider blocks",
					"version":    "a module is a local folder, and has no version",
				}[name])))
		default:
			m.inputs[name] = a
		}
	}
	if m.Count != nil && m.ForEach != nil {
		diags = append(diags, errorAt(m.ForEach.Range().Ptr(), "Invalid combination of \"count\" and \"for_each\"",
			`The "count" and "for_each" meta-arguments are mutually-exclusive, only one should be used to be explicit about the number of module instances to create.`))
		m.ForEach = nil
	}
	if _, ok := attrs["source"]; !ok {
		diags = append(diags, errorAt(b.DefRange.Ptr(), "Missing required argument",
			fmt.Sprintf(`The module %q has no source: add source = "./PATH", the folder of the module's files.`, m.Name)))
		return m, diags
	}
	if m.Source == "" {
		return m, diags
	}
	if !strings.HasPrefix(m.Source, "./") && !strings.HasPrefix(m.Source, "../") {
		diags = append(diags, errorAt(m.sourceRng.Ptr(), "Unsupported module source",
			fmt.Sprintf("The source %q is not a local path. genform's modules are local folders, written starting with ./ or ../ (source = \"./modules/%s\"); registry, git and other remote sources are not supported: copy the module into the repository.", m.Source, m.Name)))
		return m, diags
	}
	dir := filepath.Clean(filepath.Join(c.modDir, filepath.FromSlash(m.Source)))
	if p, err := insidePath(filepath.ToSlash(dir)); err != nil {
		diags = append(diags, errorAt(m.sourceRng.Ptr(), "Invalid module source",
			fmt.Sprintf("The module's folder %s: %v. A module is a folder inside the working directory.", dir, err)))
		return m, diags
	} else {
		m.Dir = p
	}
	return m, diags
}

// loadModules settles the count or for_each and the arguments of each
// module call, and loads each instance's configuration from the call's
// folder. Arguments, count and for_each are known before anything is
// generated: they may use variables, locals that refer to no resource or
// module, and count.index or each of the call.
func (c *Config) loadModules(calls []*ModuleCall) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, call := range calls {
		if call.Dir == "" {
			continue // reported by decodeModuleCall
		}
		if c.depth+1 > maxModuleDepth || c.callsDir(call.Dir) {
			diags = append(diags, errorAt(call.DeclRange.Ptr(), "Module calls itself",
				fmt.Sprintf("The module %q loads %s, which is this module or one that calls it: the modules would nest without end. Remove the call.", call.Name, call.Dir)))
			continue
		}
		files, d := c.rootConfig().moduleFiles(call)
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		keys, vals, counted, d := c.moduleKeys(call)
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		for i, key := range keys {
			inputs, d := c.moduleInputs(call, key, vals[i], counted)
			diags = append(diags, d...)
			if d.HasErrors() {
				continue
			}
			child := c.newChild(call, key)
			diags = append(diags, child.decodeModule(call, files, inputs)...)
			call.instances = append(call.instances, child)
		}
	}
	return diags
}

// moduleKeys are the instance keys of a call: NoKey alone without count
// or for_each.
func (c *Config) moduleKeys(call *ModuleCall) (keys []addrs.Key, vals []cty.Value, counted bool, diags hcl.Diagnostics) {
	if call.Count == nil && call.ForEach == nil {
		return []addrs.Key{addrs.NoKey}, []cty.Value{cty.NilVal}, false, nil
	}
	expr := call.Count
	if expr == nil {
		expr = call.ForEach
	}
	where := fmt.Sprintf("the count or for_each of module %s", call.Name)
	ctx, diags := c.staticContext(expr, where, false, false)
	if diags.HasErrors() {
		return nil, nil, false, diags
	}
	// The resources' checks serve: a call's repetition obeys their rules.
	probe := &Resource{Count: call.Count, ForEach: call.ForEach, DeclRange: call.DeclRange}
	// validate and init check a call whose count or for_each is made from
	// a variable given no value once, for whatever it will be.
	unknown := func() ([]addrs.Key, []cty.Value, bool, hcl.Diagnostics) {
		return []addrs.Key{addrs.NoKey}, []cty.Value{cty.DynamicVal}, call.Count != nil, diags
	}
	if call.Count != nil {
		n, ok, d := c.evalCount(probe, ctx)
		diags = append(diags, d...)
		if !ok && !d.HasErrors() && c.unknownUnset {
			return unknown()
		}
		if !ok || d.HasErrors() {
			if !d.HasErrors() {
				diags = append(diags, unknownModuleRepetition(call.Count, "count"))
			}
			return nil, nil, false, diags
		}
		for i := 0; i < n; i++ {
			keys = append(keys, addrs.IntKey(i))
			vals = append(vals, cty.NilVal)
		}
		return keys, vals, true, diags
	}
	ks, vs, ok, d := c.evalForEach(probe, ctx)
	diags = append(diags, d...)
	if !ok && !d.HasErrors() && c.unknownUnset {
		return unknown()
	}
	if !ok || d.HasErrors() {
		if !d.HasErrors() {
			diags = append(diags, unknownModuleRepetition(call.ForEach, "for_each"))
		}
		return nil, nil, false, diags
	}
	for i, k := range ks {
		if reason := badPathComponent(k); reason != "" {
			diags = append(diags, errorAt(call.ForEach.Range().Ptr(), "Invalid module instance key",
				fmt.Sprintf("The for_each key %q names the folder the module instance's files go in, but %s. Use another key.", k, reason)))
			continue
		}
		keys = append(keys, addrs.StringKey(k))
		vals = append(vals, vs[i])
	}
	return keys, vals, false, diags
}

func unknownModuleRepetition(expr hcl.Expression, what string) *hcl.Diagnostic {
	return errorAt(expr.Range().Ptr(), fmt.Sprintf("Invalid %s argument", what),
		fmt.Sprintf("A module's %s must be known before anything is generated: make it depend only on variables and on locals that refer to no resource or module.", what))
}

// staticContext is the context of an expression that must be known before
// anything is generated (a module call's arguments): it checks that expr
// refers to nothing else, and gives var, the locals it uses and path.
func (c *Config) staticContext(expr hcl.Expression, where string, count, each bool) (*hcl.EvalContext, hcl.Diagnostics) {
	_, locals, calls, diags := c.analyze(expr, refRules{where: where, locals: true, count: count, each: each})
	if diags.HasErrors() {
		return nil, diags
	}
	_ = calls // refused by the rules
	for _, n := range locals {
		if l := c.Locals[n]; !l.static {
			diags = append(diags, errorAt(expr.Range().Ptr(), "Invalid reference",
				fmt.Sprintf("%s must be known before anything is generated, and local.%s refers to a resource or a module's output. Use a value that does not.", upperFirst(where), n)))
		}
	}
	if diags.HasErrors() {
		return nil, diags
	}
	ctx, d := c.evalContext(nil, locals, nil, nil, nil)
	return ctx, append(diags, d...)
}

// moduleInputs evaluates a call's arguments for the instance keyed key
// (each.value val for for_each).
func (c *Config) moduleInputs(call *ModuleCall, key addrs.Key, val cty.Value, counted bool) (map[string]*moduleInput, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	out := make(map[string]*moduleInput, len(call.inputs))
	for _, name := range sortedKeys(call.inputs) {
		a := call.inputs[name]
		where := fmt.Sprintf("the arguments of module %s", call.Name)
		ctx, d := c.staticContext(a.Expr, where, counted, call.ForEach != nil)
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		index, each := key.Value(), key.Value()
		if key.IsZero() { // a count or for_each not known (validate)
			index, each = cty.UnknownVal(cty.Number), cty.UnknownVal(cty.String)
		}
		switch {
		case counted:
			ctx = childCtx(ctx, "count", cty.ObjectVal(map[string]cty.Value{"index": index}))
		case call.ForEach != nil:
			ctx = childCtx(ctx, "each", cty.ObjectVal(map[string]cty.Value{"key": each, "value": val}))
		}
		v, d := a.Expr.Value(ctx)
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		out[name] = &moduleInput{value: v, attr: a}
	}
	return out, diags
}

// moduleInput is one argument of a module call, evaluated.
type moduleInput struct {
	value cty.Value
	attr  *hcl.Attribute
}

// callsDir reports whether dir is the folder of c or of a module that
// calls c: loading it again would never end.
func (c *Config) callsDir(dir string) bool {
	for m := c; m != nil; m = m.parent {
		if m.modDir == dir {
			return true
		}
	}
	return false
}

// rootConfig is the root module's Config.
func (c *Config) rootConfig() *Config {
	for c.parent != nil {
		c = c.parent
	}
	return c
}

// moduleFiles parses the files of a module's folder, once for every call
// and instance that loads it; the root module keeps them.
func (c *Config) moduleFiles(call *ModuleCall) ([]hcl.Body, hcl.Diagnostics) {
	if bodies, ok := c.modFiles[call.Dir]; ok {
		return bodies, nil
	}
	dir := filepath.Join(c.Dir, call.Dir)
	names, err := configFileNames(dir)
	if err != nil || len(names) == 0 {
		why := "it has no *" + SuffixHCL + " or *" + SuffixJSON + " file"
		if err != nil {
			why = fmt.Sprintf("it cannot be read: %v", err)
			if os.IsNotExist(err) {
				why = "there is no such folder"
			}
		}
		return nil, hcl.Diagnostics{errorAt(call.sourceRng.Ptr(), "Module not found",
			fmt.Sprintf("The module %q loads %s, but %s. A module's source is a folder of configuration files, relative to the folder of the file that calls it.", call.Name, call.Dir, why))}
	}
	parser := hclparse.NewParser()
	var diags hcl.Diagnostics
	var bodies []hcl.Body
	for _, name := range names {
		rel := filepath.ToSlash(filepath.Join(call.Dir, name))
		src, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			diags = append(diags, errorAt(&hcl.Range{Filename: rel}, "Failed to read file",
				fmt.Sprintf("The configuration file %s could not be read: %v.", rel, err)))
			continue
		}
		fmt.Fprintf(c.modHash, "%s\x00%d\x00", rel, len(src))
		c.modHash.Write(src)
		mode := scanConfig
		if strings.HasSuffix(name, SuffixJSON) {
			mode = scanJSON
		}
		if d := checkNesting(src, rel, mode); d != nil {
			diags = append(diags, d...)
			continue
		}
		var f *hcl.File
		var d hcl.Diagnostics
		if mode == scanJSON {
			f, d = parser.ParseJSON(src, rel)
		} else {
			f, d = parseHCL(parser, src, rel)
		}
		diags = append(diags, d...)
		if f != nil {
			c.Files[rel] = f
			if f.Body != nil {
				bodies = append(bodies, f.Body)
			}
		}
	}
	if diags.HasErrors() {
		return nil, diags
	}
	c.modFiles[call.Dir] = bodies
	return bodies, nil
}

// newChild is the Config of one instance of a module call: it shares the
// root's settings, providers and functions, and has its own variables,
// locals, resources and outputs.
func (c *Config) newChild(call *ModuleCall, key addrs.Key) *Config {
	child := &Config{
		Dir:          c.Dir,
		Files:        c.Files,
		Settings:     c.Settings,
		Service:      c.Service,
		Providers:    c.Providers,
		providers:    c.providers,
		ref:          c.ref,
		Variables:    map[string]*Variable{},
		Locals:       map[string]*Local{},
		byAddr:       map[addrs.Resource]*Resource{},
		environ:      c.environ,
		funcs:        c.funcs,
		absDir:       c.absDir,
		varObj:       cty.EmptyObjectVal,
		staticLoc:    cty.EmptyObjectVal,
		today:        c.today,
		tokenVars:    nil,
		module:       c.module.Child(call.Name, key),
		modDir:       call.Dir,
		parent:       c,
		depth:        c.depth + 1,
		dirParts:     append(slices.Clone(c.dirParts), "module."+call.Name),
		moduleCall:   call,
		moduleKey:    key,
		calls:        map[string]*ModuleCall{},
		unknownUnset: c.unknownUnset,
	}
	if p := key.PathPart(); p != "" {
		child.dirParts = append(child.dirParts, p)
	}
	child.pathObj = pathObject(child.modDir, c.absDir)
	return child
}

// decodeModule decodes one module instance from its folder's files, with
// the call's arguments as its variables' values.
func (c *Config) decodeModule(call *ModuleCall, bodies []hcl.Body, inputs map[string]*moduleInput) hcl.Diagnostics {
	c.inputs = inputs
	diags := c.decode(bodies, Options{UnknownUnset: c.unknownUnset}, nil)
	for _, name := range sortedKeys(inputs) {
		if _, ok := c.Variables[name]; !ok {
			diags = append(diags, errorAt(inputs[name].attr.NameRange.Ptr(), "Unsupported argument",
				fmt.Sprintf("The module %q (%s) declares no variable named %q, so the argument has nowhere to go.", call.Name, call.Dir, name)+didYouMean(name, c.variableNames())))
		}
	}
	return diags
}

// settleInputs gives a module's variables the call's arguments, or their
// defaults, as settleVariables does for the root module's.
func (c *Config) settleInputs() (map[string]cty.Value, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	vals := make(map[string]cty.Value, len(c.Variables))
	for _, name := range sortedKeys(c.Variables) {
		v := c.Variables[name]
		in, given := c.inputs[name]
		switch {
		case given:
			raw, marks := in.value.UnmarkDeep()
			if hasSensitive(marks) {
				v.Sensitive = true
			}
			conv, err := convert.Convert(raw, v.Type)
			if err != nil {
				diags = append(diags, errorAt(in.attr.Expr.Range().Ptr(), "Invalid value for module argument",
					fmt.Sprintf("The value given for the module's variable %q is not suitable: %s. The variable is declared at %s.", name, err, v.DeclRange)))
				conv = cty.UnknownVal(v.Type)
			}
			v.Value, v.hasValue, v.valueExpr = conv, true, in.attr.Expr.Range()
		case v.Default != cty.NilVal:
			v.Value, v.hasValue = v.Default, true
		default:
			diags = append(diags, errorAt(c.moduleCall.DeclRange.Ptr(), "Missing required argument",
				fmt.Sprintf("The module %q declares the variable %q, which has no default: set it in the module block (%s = ...).", c.moduleCall.Name, name, name)))
			v.Value = cty.UnknownVal(v.Type)
		}
		vals[name] = v.Value
		if v.Sensitive {
			vals[name] = v.Value.Mark(markSensitive)
		}
	}
	return vals, diags
}

// pathObject is the path object: path.module, the module's folder
// relative to the working directory ("." for the root module);
// path.root, the working directory (".", as everything is relative to
// it); and path.cwd, the working directory's absolute path.
func pathObject(modDir, absDir string) cty.Value {
	if modDir == "" {
		modDir = "."
	}
	return cty.ObjectVal(map[string]cty.Value{
		"module": cty.StringVal(filepath.ToSlash(modDir)),
		"root":   cty.StringVal("."),
		"cwd":    cty.StringVal(filepath.ToSlash(absDir)),
	})
}

// moduleValue is what module.NAME is in scope: the object of the call's
// outputs; a tuple of them for count, an object keyed like for_each.
// memo keeps it for the expression's evaluation.
func (c *Config) moduleValue(name string, scope Scope, memo map[string]cty.Value) (cty.Value, hcl.Diagnostics) {
	if v, ok := memo["module."+name]; ok {
		return v, nil
	}
	call := c.calls[name]
	var diags hcl.Diagnostics
	objects := make([]cty.Value, len(call.instances))
	for i, child := range call.instances {
		outs, d := child.EvalOutputs(scope)
		diags = append(diags, d...)
		for _, o := range child.Outputs {
			if o.Sensitive && outs[o.Name].IsKnown() {
				outs[o.Name] = outs[o.Name].Mark(markSensitive)
			}
		}
		objects[i] = cty.EmptyObjectVal
		if len(outs) > 0 {
			objects[i] = cty.ObjectVal(outs)
		}
	}
	var v cty.Value
	switch {
	case len(call.instances) == 0 && call.Count == nil && call.ForEach == nil:
		v = cty.DynamicVal // not loaded: reported already
	case call.Count != nil:
		v = cty.EmptyTupleVal
		if len(objects) > 0 {
			v = cty.TupleVal(objects)
		}
	case call.ForEach != nil:
		m := make(map[string]cty.Value, len(objects))
		for i, child := range call.instances {
			k, _ := child.moduleKey.Str()
			m[k] = objects[i]
		}
		v = cty.EmptyObjectVal
		if len(m) > 0 {
			v = cty.ObjectVal(m)
		}
	default:
		v = objects[0]
	}
	if memo != nil {
		memo["module."+name] = v
	}
	return v, diags
}

// callRefs are the resources the outputs of every instance of the call
// name refer to.
func (c *Config) callRefs(name string) []addrs.Resource {
	var refs []addrs.Resource
	for _, child := range c.calls[name].instances {
		for _, o := range child.Outputs {
			refs = append(refs, o.Refs...)
		}
	}
	return refs
}

// outputNames lists the outputs a call's module declares.
func (call *ModuleCall) outputNames() []string {
	if len(call.instances) == 0 {
		return nil
	}
	var names []string
	for _, o := range call.instances[0].Outputs {
		names = append(names, o.Name)
	}
	return names
}

// descendants lists every module instance's Config under c, depth first
// in call and key order.
func (c *Config) descendants() []*Config {
	var out []*Config
	for _, name := range c.callOrder {
		for _, child := range c.calls[name].instances {
			out = append(out, child)
			out = append(out, child.descendants()...)
		}
	}
	return out
}

// ModuleCalls lists the module blocks of the root module, in declaration
// order.
func (c *Config) ModuleCalls() []*ModuleCall {
	out := make([]*ModuleCall, 0, len(c.callOrder))
	for _, n := range c.callOrder {
		out = append(out, c.calls[n])
	}
	return out
}

// ModuleInstances lists the module instances (the root module's calls and
// theirs), in address order.
func (c *Config) ModuleInstances() []addrs.Module {
	var out []addrs.Module
	for _, d := range c.descendants() {
		out = append(out, d.module)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// decodeModuleRest is what decode does of a module instance once its
// blocks are read: its variables take the call's arguments, and its
// locals, the modules it calls, its resources and its outputs are checked
// as the root module's are. Its resources join the root's, which expands
// and checks them with its own.
func (c *Config) decodeModuleRest(resources []*Resource, locals []*Local, moved []*Moved, calls []*ModuleCall) hcl.Diagnostics {
	vals, diags := c.settleInputs()
	if len(vals) > 0 {
		c.varObj = cty.ObjectVal(vals)
	}
	c.baseCtx = &hcl.EvalContext{Variables: map[string]cty.Value{"var": c.varObj, "path": c.pathObj}, Functions: c.funcs}
	diags = append(diags, c.checkVariableValidations()...)
	diags = append(diags, c.analyzeLocals(locals)...)
	for _, r := range resources {
		if r.live != nil {
			r.live.id = c.ProviderOf(r.live.name).Identity()
		}
	}
	diags = append(diags, c.loadModules(calls)...)
	c.addCallRefs()
	diags = append(diags, c.analyzeResources(resources)...)
	c.adoptModules()
	c.moved = append(c.moved, moved...)
	for _, o := range c.Outputs {
		diags = append(diags, c.analyzeOutput(o)...)
	}
	return diags
}

// adoptModules makes the resources of the modules c calls c's too: they
// come first in c.Resources (nothing in them refers to c's), and c.byAddr
// finds them by their module addresses. Their moved blocks join c's.
func (c *Config) adoptModules() {
	var res []*Resource
	var moved []*Moved
	for _, name := range c.callOrder {
		for _, child := range c.calls[name].instances {
			res = append(res, child.Resources...)
			for a, r := range child.byAddr {
				c.byAddr[a] = r
			}
			moved = append(moved, child.moved...)
		}
	}
	if len(res) > 0 {
		c.Resources = append(res, c.Resources...)
	}
	c.moved = append(moved, c.moved...)
}

// addCallRefs adds to each local that refers to a module's outputs the
// resources those outputs refer to, then to the locals that use it.
func (c *Config) addCallRefs() {
	if len(c.callOrder) == 0 {
		return
	}
	for _, l := range c.localList {
		refs := l.Refs
		for _, name := range l.calls {
			refs = append(refs, c.callRefs(name)...)
		}
		for _, n := range l.locals {
			refs = append(refs, c.Locals[n].Refs...)
		}
		l.Refs = sortedUnique(refs)
	}
}
