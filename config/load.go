package config

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/genform/genform/internal/addrs"
)

// File name suffixes of configuration and variables files.
const (
	SuffixHCL     = ".gen.hcl"
	SuffixJSON    = ".gen.json"
	SuffixVarFile = ".genvars.hcl"
)

var fileSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "genform"},
		{Type: "service"},
		{Type: "provider", LabelNames: []string{"name"}},
		{Type: "variable", LabelNames: []string{"name"}},
		{Type: "locals"},
		{Type: addrs.Image.String(), LabelNames: []string{"name"}},
		{Type: addrs.Video.String(), LabelNames: []string{"name"}},
		{Type: "output", LabelNames: []string{"name"}},
		{Type: "moved"},
		{Type: "module", LabelNames: []string{"name"}},
	},
}

// Load reads every *.gen.hcl and *.gen.json file in dir, in lexical order,
// as one configuration; decodes it; settles the input variables; and checks
// everything that can be checked without knowing any resource's value: it
// expands every resource with every resource reference unknown, so a bad
// image_number, a missing prompt, a cycle or a reference to nothing is
// reported here. It always returns a non-nil *Config whose Files holds
// every file parsed so far, so that diagnostics print with source snippets.
func Load(dir string, opts Options) (*Config, hcl.Diagnostics) {
	c := &Config{
		Dir:       dir,
		Files:     map[string]*hcl.File{},
		Variables: map[string]*Variable{},
		Locals:    map[string]*Local{},
		byAddr:    map[addrs.Resource]*Resource{},
		Providers: map[string]*Provider{},
		environ:   map[string]string{},
		calls:     map[string]*ModuleCall{},
		modFiles:  map[string][]hcl.Body{},
		varObj:    cty.EmptyObjectVal,
		staticLoc: cty.EmptyObjectVal,
		Settings: Settings{StateFile: DefaultStateFile, OutputDir: DefaultOutputDir,
			CacheDir: DefaultCacheDir, CacheMaxSize: DefaultCacheMaxSize, Restore: true},
		Service: Service{
			Parallelism:       DefaultParallelism,
			RequestsPerMinute: DefaultRequestsPerMinute,
			PollInterval:      DefaultPollInterval,
			Timeout:           DefaultTimeout,
		},
	}
	for _, kv := range opts.Environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			c.environ[k] = v
		}
	}
	todayDiags := c.decodeToday(opts)
	c.providers = opts.Providers
	if c.providers == nil {
		c.providers = noProviders{}
	}
	if c.ref = newRefSpecs(c.providers); c.ref == nil {
		return c, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "No providers",
			Detail: "The configuration was loaded without the providers genform speaks (Options.Providers), so no block can be checked. This is a bug of the program that loads it."}}
	}
	c.absDir = dir
	if abs, err := filepath.Abs(dir); err == nil {
		c.absDir = abs
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			c.absDir = real
		}
	}
	c.funcs = c.functions()
	c.pathObj = pathObject("", c.absDir)
	c.unknownUnset = opts.UnknownUnset

	names, err := configFileNames(dir)
	if err != nil {
		return c, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Failed to read the working directory",
			Detail:   fmt.Sprintf("Could not list the configuration files of %s: %v.", dir, err),
		}}
	}
	if len(names) == 0 {
		return c, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "No configuration files",
			Detail:   fmt.Sprintf("genform reads the *%s and *%s files of the working directory, and %s has none. Change to the directory that holds the configuration, or pass -chdir=DIR.", SuffixHCL, SuffixJSON, displayDir(dir)),
		}}
	}

	parser := hclparse.NewParser()
	early := &earlyDecoder{providers: c.providers}
	c.early = early
	hash := sha256.New()
	var diags hcl.Diagnostics
	var bodies []hcl.Body
	for _, name := range names {
		src, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			diags = append(diags, errorAt(&hcl.Range{Filename: name}, "Failed to read file",
				fmt.Sprintf("The configuration file %s could not be read: %v.", name, err)))
			continue
		}
		fmt.Fprintf(hash, "%s\x00%d\x00", name, len(src))
		hash.Write(src)
		isJSON := strings.HasSuffix(name, SuffixJSON)
		mode := scanConfig
		if isJSON {
			mode = scanJSON
		}
		// Before any parser sees it: they recurse once per level. The
		// file is not kept for snippets, whose lines may be megabytes.
		if d := checkNesting(src, name, mode); d != nil {
			diags = append(diags, d...)
			if d[0].Summary == badEncodingSummary {
				// As the parser would have, for its snippet.
				c.Files[name] = &hcl.File{Bytes: src}
			}
			continue
		}
		var f *hcl.File
		var d hcl.Diagnostics
		if isJSON {
			f, d = parser.ParseJSON(src, name)
		} else {
			f, d = parseHCLDecoding(parser, src, name, early.decode)
		}
		diags = append(diags, d...)
		if f != nil {
			c.Files[name] = f
			if f.Body != nil {
				bodies = append(bodies, f.Body)
			}
		}
	}
	if diags.HasErrors() {
		// Syntax errors make everything after them guesswork: report them
		// alone, like Terraform does.
		return c, diags
	}

	diags = append(diags, todayDiags...)
	c.modHash = hash // the modules' files join it as they are read
	diags = append(diags, c.decode(bodies, opts, parser)...)
	for _, name := range sortedKeys(c.Variables) {
		v := c.Variables[name]
		if c.Secret(name) {
			continue
		}
		enc, err := JSON(v.Value)
		if err != nil {
			continue // not settled: reported already
		}
		fmt.Fprintf(hash, "var\x00%s\x00%d:%s\x00", name, len(enc), enc)
	}
	c.Hash = hex.EncodeToString(hash.Sum(nil))
	return c, sortDiagnostics(dedupe(hideSensitive(diags)))
}

// earlyDecoder decodes the resource blocks of a large file as parseHCL
// parses them (see parseHCLDecoding), for decode to take. Its results are
// keyed by the body left in place of each block's.
type earlyDecoder struct {
	providers Providers
	mu        sync.Mutex
	decoded   map[hcl.Body]earlyResource
}

type earlyResource struct {
	r     *Resource
	diags hcl.Diagnostics
}

// decode decodes b if it is a resource block, and returns the empty body
// to keep in its place; nil for any other block.
func (e *earlyDecoder) decode(b *hclsyntax.Block) *hclsyntax.Body {
	if _, ok := addrs.ParseKind(b.Type); !ok || len(b.Labels) != 1 {
		return nil
	}
	r, diags := decodeResource(b.AsHCLBlock(), e.providers)
	stub := &hclsyntax.Body{SrcRange: b.Body.SrcRange, EndRange: b.Body.EndRange}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.decoded == nil {
		e.decoded = map[hcl.Body]earlyResource{}
	}
	e.decoded[stub] = earlyResource{r, diags}
	return stub
}

// take is what decode made of the block whose body is now body.
func (e *earlyDecoder) take(body hcl.Body) (earlyResource, bool) {
	if e == nil {
		return earlyResource{}, false
	}
	r, ok := e.decoded[body]
	return r, ok
}

// sortDiagnostics orders diagnostics as they appear in the files (those
// about the command line or the environment first), so a run's problems
// read from top to bottom.
func sortDiagnostics(diags hcl.Diagnostics) hcl.Diagnostics {
	sort.SliceStable(diags, func(i, j int) bool {
		a, b := diags[i].Subject, diags[j].Subject
		switch {
		case a == nil || b == nil:
			return a == nil && b != nil
		case a.Filename != b.Filename:
			return a.Filename < b.Filename
		}
		return a.Start.Byte < b.Start.Byte
	})
	return diags
}

func displayDir(dir string) string {
	if dir == "." {
		if wd, err := os.Getwd(); err == nil {
			return wd
		}
	}
	return dir
}

// configFileNames lists the configuration files of dir in lexical order.
func configFileNames(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || strings.HasPrefix(n, ".") {
			continue
		}
		if strings.HasSuffix(n, SuffixHCL) || strings.HasSuffix(n, SuffixJSON) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names, nil
}

// decode turns the parsed bodies into declarations and checks them.
func (c *Config) decode(bodies []hcl.Body, opts Options, parser *hclparse.Parser) hcl.Diagnostics {
	var diags hcl.Diagnostics
	var genformBlock, serviceBlock *hcl.Block
	var providerBlocks []*hcl.Block
	var locals []*Local
	var resources []*Resource
	defaults := map[string]*typeexpr.Defaults{}
	outputs := map[string]*Output{}
	var moved []*Moved
	var calls []*ModuleCall

	// Resource blocks are most of a large configuration and decode
	// independently: on every core, before the declarations are checked
	// in file order.
	type fileContent struct {
		blocks []*hcl.Block
		diags  hcl.Diagnostics
	}
	type decoded struct {
		r     *Resource
		diags hcl.Diagnostics
	}
	files := make([]fileContent, len(bodies))
	var resBlocks []*hcl.Block
	for i, body := range bodies {
		content, d := body.Content(fileSchema)
		files[i].diags = d
		if content == nil {
			continue
		}
		files[i].blocks = content.Blocks
		for _, b := range content.Blocks {
			if _, ok := addrs.ParseKind(b.Type); ok {
				resBlocks = append(resBlocks, b)
			}
		}
	}
	decodedRes := make([]decoded, len(resBlocks))
	parallel(len(resBlocks), func(i int) {
		if r, ok := c.early.take(resBlocks[i].Body); ok {
			decodedRes[i].r, decodedRes[i].diags = r.r, r.diags
			return
		}
		decodedRes[i].r, decodedRes[i].diags = decodeResource(resBlocks[i], c.providers)
	})
	c.early = nil

	nextRes := 0
	for _, f := range files {
		diags = append(diags, f.diags...)
		for _, b := range f.blocks {
			if c.parent != nil && (b.Type == "genform" || b.Type == "service" || b.Type == "provider") {
				diags = append(diags, errorAt(b.DefRange.Ptr(), "Unexpected "+b.Type+" block in a module",
					fmt.Sprintf("A module's files hold variable, locals, image, video, output, module and moved blocks; the %s block belongs to the root module, whose settings, service and providers every module uses. Move it to the working directory's configuration.", b.Type)))
				continue
			}
			switch b.Type {
			case "genform", "service":
				first := &genformBlock
				if b.Type == "service" {
					first = &serviceBlock
				}
				if *first != nil {
					diags = append(diags, duplicate(fmt.Sprintf("Duplicate %s block", b.Type), b.DefRange, fmt.Sprintf("A configuration has at most one %s block; the first one is at %s. Merge the two.", b.Type, (*first).DefRange)))
					continue
				}
				*first = b
			case "provider":
				dup := false
				for _, prev := range providerBlocks {
					if prev.Labels[0] == b.Labels[0] {
						diags = append(diags, duplicate("Duplicate provider block", b.DefRange, fmt.Sprintf("A configuration has at most one provider %q block; the first one is at %s. Merge the two.", b.Labels[0], prev.DefRange)))
						dup = true
					}
				}
				if !dup {
					providerBlocks = append(providerBlocks, b)
				}
			case "variable":
				v, defs, d := decodeVariable(b)
				diags = append(diags, d...)
				if prev, ok := c.Variables[v.Name]; ok {
					diags = append(diags, duplicate("Duplicate variable declaration", v.DeclRange, fmt.Sprintf("A variable named %q was already declared at %s. Variable names must be unique.", v.Name, prev.DeclRange)))
					continue
				}
				c.Variables[v.Name] = v
				defaults[v.Name] = defs
			case "locals":
				list, d := attributesInOrder(b.Body)
				diags = append(diags, d...)
				for _, a := range list {
					if prev, ok := c.Locals[a.Name]; ok {
						diags = append(diags, duplicate("Duplicate local value definition", a.NameRange, fmt.Sprintf("A local value named %q was already defined at %s. Local value names must be unique.", a.Name, prev.DeclRange)))
						continue
					}
					l := &Local{Name: a.Name, Expr: a.Expr, DeclRange: a.Range}
					c.Locals[a.Name] = l
					locals = append(locals, l)
				}
			case addrs.Image.String(), addrs.Video.String():
				r, d := decodedRes[nextRes].r, decodedRes[nextRes].diags
				nextRes++
				diags = append(diags, d...)
				r.Module = c.module
				if prev, ok := c.byAddr[r.Addr()]; ok {
					diags = append(diags, duplicate("Duplicate resource", r.DeclRange, fmt.Sprintf("%s %s resource named %q was already declared at %s. Resource names must be unique per type.", article(r.Kind.String()), r.Kind, r.Name, prev.DeclRange)))
					continue
				}
				c.byAddr[r.Addr()] = r
				resources = append(resources, r)
			case "output":
				o, d := decodeOutput(b)
				diags = append(diags, d...)
				if prev, ok := outputs[o.Name]; ok {
					diags = append(diags, duplicate("Duplicate output definition", o.DeclRange, fmt.Sprintf("An output named %q was already defined at %s. Output names must be unique.", o.Name, prev.DeclRange)))
					continue
				}
				outputs[o.Name] = o
				c.Outputs = append(c.Outputs, o)
			case "moved":
				m, d := decodeMoved(b)
				diags = append(diags, d...)
				if m != nil {
					moved = append(moved, m)
				}
			case "module":
				call, d := c.decodeModuleCall(b)
				diags = append(diags, d...)
				if prev, ok := c.calls[call.Name]; ok {
					diags = append(diags, duplicate("Duplicate module call", call.DeclRange, fmt.Sprintf("A module call named %q was already declared at %s. Module calls must have unique names within a module.", call.Name, prev.DeclRange)))
					continue
				}
				c.calls[call.Name] = call
				c.callOrder = append(c.callOrder, call.Name)
				calls = append(calls, call)
			}
		}
	}

	for _, r := range resources {
		r.owner = c
		if c.parent != nil {
			for i := range r.DependsOn {
				r.DependsOn[i].Module = c.module
			}
			for i := range r.ReplaceTriggeredBy {
				r.ReplaceTriggeredBy[i].Module = c.module
			}
		}
	}
	if c.parent != nil {
		for _, m := range moved {
			m.inModule(c.module)
		}
		return append(diags, c.decodeModuleRest(resources, locals, moved, calls)...)
	}

	// Everything needed of the syntax trees is decoded by now.
	c.releaseSyntax()

	// Before the variables settle: those the credentials are made from
	// are marked as sensitive ones are.
	c.tokenVars = c.secretVariables(serviceBlock, genformBlock, providerBlocks)
	diags = append(diags, c.settleVariables(opts, parser, defaults)...)
	diags = append(diags, c.checkVariableValidations()...)
	diags = append(diags, c.analyzeLocals(locals)...)
	if genformBlock != nil {
		diags = append(diags, c.decodeSettings(genformBlock)...)
	}
	diags = append(diags, c.settleStore()...)
	if serviceBlock != nil {
		diags = append(diags, c.decodeService(serviceBlock)...)
	}
	for _, b := range providerBlocks {
		diags = append(diags, c.decodeProvider(b)...)
	}
	for _, r := range resources {
		if r.live != nil {
			r.live.id = c.ProviderOf(r.live.name).Identity()
		}
	}
	diags = append(diags, c.loadModules(calls)...)
	c.addCallRefs()
	diags = append(diags, c.analyzeResources(resources)...)
	c.adoptModules()
	diags = append(diags, c.checkMoved(append(c.moved, moved...))...)
	for _, o := range c.Outputs {
		diags = append(diags, c.analyzeOutput(o)...)
	}
	diags = append(diags, c.validateExpansion()...)
	return diags
}

// analyzeResources checks every resource's references, computes its Refs,
// and orders c.Resources by dependency, reporting cycles.
func (c *Config) analyzeResources(resources []*Resource) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, r := range resources {
		rules := refRules{
			where:     fmt.Sprintf("resource %s", r.Addr()),
			locals:    true,
			resources: true,
			count:     r.Count != nil,
			each:      r.ForEach != nil,
		}
		var refs, last []addrs.Resource
		add := func(expr hcl.Expression, rules refRules) bool {
			res, locs, calls, d := c.analyze(expr, rules)
			last = res
			diags = append(diags, d...)
			for _, a := range res {
				r.direct = appendUnique(r.direct, a)
			}
			for _, l := range locs {
				r.locals = appendUnique(r.locals, l)
			}
			for _, n := range calls {
				r.ext().calls = appendUnique(r.ext().calls, n)
				refs = append(refs, c.callRefs(n)...)
			}
			refs = append(refs, res...)
			return !d.HasErrors()
		}
		metaRules := rules
		metaRules.count, metaRules.each = false, false
		metaRules.where = fmt.Sprintf("the count or for_each of %s", r.Addr())
		if r.Count != nil {
			r.countBad = !add(r.Count, metaRules)
		}
		if r.ForEach != nil {
			r.countBad = !add(r.ForEach, metaRules)
		}
		for i := range r.attrs {
			ra := &r.attrs[i]
			ar := rules
			if ra.id == aDir || ra.id == aWatermarkFree {
				// Local attributes decide where files go before anything is
				// generated, so they cannot wait for another resource.
				ar.resources = false
				ar.where = fmt.Sprintf("the %s of %s", attrNames[ra.id], r.Addr())
			}
			ra.bad = !add(ra.attr.Expr, ar)
			if ra.id == aSourceImage || ra.id == aSourceImages {
				diags = append(diags, c.checkSourceLinks(r, ra.attr, last)...)
			}
		}
		for _, dep := range r.DependsOn {
			if _, ok := c.byAddr[dep]; !ok {
				diags = append(diags, c.undeclaredDependency(dep, c.dependsOnRange(r, dep)))
				continue
			}
			refs = append(refs, dep)
		}
		// replace_triggered_by orders the graph as a reference does: what
		// triggers a replacement is planned first.
		for _, t := range r.ReplaceTriggeredBy {
			if _, ok := c.byAddr[t]; !ok {
				diags = append(diags, errorAt(r.extra.replaceTriggeredBy.Expr.Range().Ptr(), "Reference to undeclared resource",
					fmt.Sprintf("replace_triggered_by refers to %s, but no %s resource named %q is declared.", t, t.Kind, t.Name)+didYouMean(t.Name, c.resourceNames(t.Kind))))
				continue
			}
			refs = append(refs, t)
		}
		for _, l := range r.locals {
			refs = append(refs, c.Locals[l].Refs...)
		}
		r.Refs = sortedUnique(refs)
	}

	index := make(map[addrs.Resource]int, len(resources))
	for i, r := range resources {
		index[r.Addr()] = i
	}
	order, cycles := topoSort(len(resources), func(i int) []int {
		deps := make([]int, 0, len(resources[i].Refs))
		for _, a := range resources[i].Refs {
			if k, ok := index[a]; ok { // not one of a module's, which come first
				deps = append(deps, k)
			}
		}
		return deps
	})
	placed := make([]bool, len(resources))
	c.Resources = make([]*Resource, 0, len(resources))
	for _, i := range order {
		c.Resources = append(c.Resources, resources[i])
		placed[i] = true
	}
	for i, r := range resources {
		if !placed[i] {
			c.Resources = append(c.Resources, r)
		}
	}
	for _, cyc := range cycles {
		names := make([]string, len(cyc))
		for i, k := range cyc {
			names[i] = resources[k].Addr().String()
		}
		detail := fmt.Sprintf("These resources refer to each other in a cycle: %s. Each would have to be generated before the other; remove one of the references.", joinList(names))
		if len(cyc) == 1 {
			detail = fmt.Sprintf("%s refers to itself. A resource cannot use its own outputs; remove the reference.", names[0])
		}
		diags = append(diags, errorAt(resources[cyc[0]].DeclRange.Ptr(), "Cycle: "+strings.Join(names, ", "),
			detail))
	}
	return diags
}

// undeclaredDependency reports a depends_on entry naming no resource.
func (c *Config) undeclaredDependency(dep addrs.Resource, rng hcl.Range) *hcl.Diagnostic {
	return errorAt(rng.Ptr(), "Reference to undeclared resource",
		fmt.Sprintf("depends_on refers to %s, but no %s resource named %q is declared.", dep, dep.Kind, dep.Name)+didYouMean(dep.Name, c.resourceNames(dep.Kind)))
}

// dependsOnRange finds the range of dep in r's depends_on, for diagnostics.
func (c *Config) dependsOnRange(r *Resource, dep addrs.Resource) hcl.Range {
	if r.extra != nil && r.extra.dependsOn != nil {
		exprs, _ := hcl.ExprList(r.extra.dependsOn.Expr)
		for _, e := range exprs {
			if tr, d := hcl.AbsTraversalForExpr(e); !d.HasErrors() {
				if a, ok := resourceAddrOf(tr); ok && a.Kind == dep.Kind && a.Name == dep.Name {
					return e.Range()
				}
			}
		}
		return r.extra.dependsOn.Expr.Range()
	}
	return r.DeclRange
}

// duplicate is the error for a block or name that the configuration
// already has: summary names what is doubled, subject is the second one,
// and detail says where the first one is and what to do.
func duplicate(summary string, subject hcl.Range, detail string) *hcl.Diagnostic {
	return errorAt(subject.Ptr(), summary, detail)
}

// errorAt is an error at subject: summary names the problem, detail says
// what is wrong and what to do.
func errorAt(subject *hcl.Range, summary, detail string) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: subject}
}

// evalContext builds the context for an expression that refers directly to
// the resources direct and the locals locals: only those are put in it, so
// the cost does not grow with the size of the configuration. memo keeps the
// values of locals that depend on resources, evaluated in this scope.
func (c *Config) evalContext(direct []addrs.Resource, locals, calls []string, scope Scope, memo map[string]cty.Value) (*hcl.EvalContext, hcl.Diagnostics) {
	if len(locals) == 0 && len(direct) == 0 && len(calls) == 0 && c.baseCtx != nil {
		return c.baseCtx, nil // shared: evaluation only reads a context
	}
	vars := make(map[string]cty.Value, 5)
	vars["var"] = c.varObj
	vars["path"] = c.pathObj
	var diags hcl.Diagnostics
	if len(calls) > 0 {
		if memo == nil {
			memo = map[string]cty.Value{}
		}
		mv := make(map[string]cty.Value, len(calls))
		for _, n := range calls {
			v, d := c.moduleValue(n, scope, memo)
			diags = append(diags, d...)
			mv[n] = v
		}
		vars["module"] = cty.ObjectVal(mv)
	}
	if len(locals) > 0 {
		lv := make(map[string]cty.Value, len(locals))
		for _, n := range locals {
			v, d := c.localValue(n, scope, memo)
			diags = append(diags, d...)
			lv[n] = v
		}
		vars["local"] = cty.ObjectVal(lv)
	}
	if len(direct) > 0 {
		var images, videos map[string]cty.Value
		for _, addr := range direct {
			r := c.byAddr[addr]
			v, ok := scope[addr]
			if !ok || v == cty.NilVal {
				v = unknownValue(r)
			}
			if r.Kind == addrs.Image {
				if images == nil {
					images = map[string]cty.Value{}
				}
				images[r.Name] = v
			} else {
				if videos == nil {
					videos = map[string]cty.Value{}
				}
				videos[r.Name] = v
			}
		}
		if images != nil {
			vars[addrs.Image.String()] = cty.ObjectVal(images)
		}
		if videos != nil {
			vars[addrs.Video.String()] = cty.ObjectVal(videos)
		}
	}
	return &hcl.EvalContext{Variables: vars, Functions: c.funcs}, diags
}

// localValue is the value of a local in scope: computed once at Load for
// locals that refer to no resource, otherwise evaluated here and memoised.
func (c *Config) localValue(name string, scope Scope, memo map[string]cty.Value) (cty.Value, hcl.Diagnostics) {
	l := c.Locals[name]
	if l.static || !l.checked {
		return l.value, nil
	}
	if v, ok := memo[name]; ok {
		return v, nil
	}
	ctx, diags := c.evalContext(l.direct, l.locals, l.calls, scope, memo)
	v, d := l.Expr.Value(ctx)
	diags = append(diags, d...)
	if d.HasErrors() {
		v = cty.DynamicVal
	}
	memo[name] = v
	return v, diags
}

// dedupe drops repeated diagnostics: an error in a resource with many
// instances is reported once, not once per instance.
func dedupe(diags hcl.Diagnostics) hcl.Diagnostics {
	type key struct {
		sev             hcl.DiagnosticSeverity
		summary, detail string
		rng             hcl.Range
	}
	seen := make(map[key]bool, len(diags))
	out := diags[:0:0]
	for _, d := range diags {
		k := key{sev: d.Severity, summary: d.Summary, detail: d.Detail}
		if d.Subject != nil {
			k.rng = *d.Subject
		}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, d)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// validateExpansion expands every resource, in dependency order, with the
// values of all resources unknown: everything that does not depend on a
// generation's result is checked here, at validate time. The instances of
// resources that refer to no other resource are kept for Expand. It also
// refuses two instances whose directories are one, or one inside the
// other (checkDirs).
func (c *Config) validateExpansion() hcl.Diagnostics {
	var diags hcl.Diagnostics
	// Only resources something refers to need a value in the scope;
	// building the value of a large for_each is not free.
	referenced := map[addrs.Resource]bool{}
	c.referenced = referenced
	for _, r := range c.Resources {
		for _, a := range r.direct {
			referenced[a] = true
		}
	}
	for _, m := range append([]*Config{c}, c.descendants()...) {
		for _, l := range m.Locals {
			for _, a := range l.direct {
				referenced[a] = true
			}
		}
		for _, o := range m.Outputs {
			for _, a := range o.direct {
				referenced[a] = true
			}
		}
	}
	scope := make(Scope, len(referenced))

	// Resources of one level refer only to resources of lower levels, so
	// a level's resources expand in parallel, reading a scope no one writes
	// until the level is done.
	level := make(map[*Resource]int, len(c.Resources))
	var levels [][]int
	for i, r := range c.Resources {
		l := 0
		for _, a := range r.Refs {
			if dl, ok := level[c.byAddr[a]]; ok && dl+1 > l {
				l = dl + 1
			}
		}
		level[r] = l
		for len(levels) <= l {
			levels = append(levels, nil)
		}
		levels[l] = append(levels[l], i)
	}
	type result struct {
		insts []instData
		known bool
		diags hcl.Diagnostics
	}
	results := make([]result, len(c.Resources))
	counts := map[addrs.Resource]outputsOf{}
	expandOne := func(i int) {
		res := &results[i]
		r := c.Resources[i]
		res.insts, res.known, res.diags = r.owner.expand(r, scope, true)
	}
	for _, group := range levels {
		parallel(len(group), func(k int) { expandOne(group[k]) })
		for _, i := range group {
			r, res := c.Resources[i], &results[i]
			diags = append(diags, res.diags...)
			for j := range res.insts {
				r.sensitive |= res.insts[j].sensitive
			}
			if !res.diags.HasErrors() {
				if referenced[r.Addr()] {
					noteOutputs(counts, r, res.insts)
				}
				c.noteDefaultImages(r, res.insts, res.known)
			}
			c.noteModels(r, res.insts)
			if !res.known || res.diags.HasErrors() {
				res.insts = nil
				continue
			}
			if referenced[r.Addr()] {
				scope[r.Addr()] = unknownResourceValue(r, res.insts)
			}
			if r.owner.scopeFree(r) {
				r.cached, r.cacheValid = res.insts, true
			}
		}
	}

	diags = append(diags, c.checkOutputIndexes(counts)...)
	for _, m := range append([]*Config{c}, c.descendants()...) {
		diags = append(diags, m.checkOutputSensitivity(scope)...)
	}
	insts := make([][]instData, len(results))
	for i := range results {
		insts[i] = results[i].insts
	}
	diags = append(diags, c.checkDirs(insts)...)
	if len(c.Moved) > 0 {
		diags = append(diags, c.checkMovedInstances(insts)...)
	}
	// The attributes of a resource whose instances are cached are read
	// again by nothing (Expand assembles its instances from the cache),
	// and their expressions are most of what a large configuration keeps
	// of its syntax.
	for _, r := range c.Resources {
		if r.cacheValid {
			r.attrs = nil
		}
	}
	return diags
}

// parallel calls f(0) ... f(n-1), on every core when n is large enough for
// that to pay, and returns when all calls have.
func parallel(n int, f func(int)) {
	parallelRange(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			f(i)
		}
	})
}

// parallelRange calls f on consecutive ranges [lo, hi) that together cover
// [0, n): on every core when n is large enough for that to pay, else once
// with [0, n). It returns when all calls have.
func parallelRange(n int, f func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	const batch = 64
	if n < 4*batch || workers < 2 {
		if n > 0 {
			f(0, n)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				start := int(next.Add(batch)) - batch
				if start >= n {
					return
				}
				f(start, min(start+batch, n))
			}
		}()
	}
	wg.Wait()
}

// scopeFree reports whether r's instances are the same whatever the Scope:
// nothing it evaluates refers to a resource, directly or through locals.
func (c *Config) scopeFree(r *Resource) bool {
	if len(r.direct) > 0 || len(r.calls()) > 0 {
		return false
	}
	for _, n := range r.locals {
		if l := c.Locals[n]; !l.static && l.checked {
			return false
		}
	}
	return true
}
