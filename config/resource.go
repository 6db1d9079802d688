package config

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/genform/genform/internal/addrs"
)

// Resource is one image or video block as written.
//
// Its small fields share words (Kind with PreventDestroy; sensitive with
// countBad and cacheValid): a large configuration holds one Resource per
// block, and each in a word of its own made it 360 bytes, which Go
// allocates as 384 (TestResourceSize).
type Resource struct {
	// Module is the module instance that declares the resource; the zero
	// Module for the root module's.
	Module addrs.Module
	Kind   addrs.Kind
	// PreventDestroy is lifecycle.prevent_destroy.
	PreventDestroy bool
	Name           string
	// Count and ForEach are nil when absent.
	Count, ForEach hcl.Expression
	// DependsOn are the addresses of depends_on.
	DependsOn []addrs.Resource
	// IgnoreChanges are the attribute names of lifecycle.ignore_changes, as
	// the user wrote them ("prompt").
	IgnoreChanges []string
	// ReplaceTriggeredBy are the resources of lifecycle.replace_triggered_by:
	// when one of them is generated anew, so is this resource, even if its
	// own request did not change.
	ReplaceTriggeredBy []addrs.Resource
	// Refs is every resource-level address this resource refers to, through
	// its attributes, count/for_each, depends_on and the locals it uses;
	// sorted, without duplicates.
	Refs []addrs.Resource
	// DeclRange is the block header (`image "hero"`).
	DeclRange hcl.Range
	// live is provider = NAME, nil for the reference service's blocks
	// (kept out of line: most blocks of a large configuration have none).
	live *liveRef

	// extra holds what few blocks have, out of line; nil for most.
	extra  *resourceExtra
	attrs  []resAttr        // attributes in source order, with their ids; nil once cached
	direct []addrs.Resource // resources its expressions refer to directly
	locals []string         // locals its expressions refer to directly
	owner  *Config          // the module instance it is declared in
	cached []instData       // the instances, when they do not depend on the Scope
	// sensitive has a bit for each attribute that derives from a
	// sensitive value in some instance, as Load evaluated them.
	sensitive  uint32
	countBad   bool // count/for_each has invalid references
	cacheValid bool
}

// Sensitive names the attributes of r whose values, in any of its
// instances, derive from a sensitive variable (or one the service token
// is made from), as Load evaluated them with every resource unknown. A
// view of a recorded instance, whose request holds the real values,
// hides these.
func (r *Resource) Sensitive() []string {
	var names []string
	for id := attrID(0); id < numAttrs; id++ {
		if r.sensitive&(1<<id) != 0 {
			names = append(names, attrNames[id])
		}
	}
	return names
}

// attribute is the request or local attribute name as written (not a
// meta-argument), nil when the block does not set it.
func (r *Resource) attribute(name string) *hcl.Attribute {
	for _, a := range r.attrs {
		if a.attr.Name == name {
			return a.attr
		}
	}
	return nil
}

// resourceExtra is what a Resource keeps of the few blocks that have it:
// the depends_on attribute and the lifecycle's replace_triggered_by, for
// diagnostics, and the module calls its expressions refer to directly.
type resourceExtra struct {
	dependsOn, replaceTriggeredBy *hcl.Attribute
	calls                         []string
}

// ext is r.extra, made when first needed.
func (r *Resource) ext() *resourceExtra {
	if r.extra == nil {
		r.extra = &resourceExtra{}
	}
	return r.extra
}

// calls are the module calls r's expressions refer to directly.
func (r *Resource) calls() []string {
	if r.extra == nil {
		return nil
	}
	return r.extra.calls
}

type resAttr struct {
	id   attrID
	attr *hcl.Attribute
	bad  bool // invalid references: evaluated as unknown, already reported
}

// Addr returns the resource's address, e.g. image.hero.
func (r *Resource) Addr() addrs.Resource {
	return addrs.Resource{Module: r.Module, Kind: r.Kind, Name: r.Name}
}

// attrID numbers the request and local attributes a resource block may set,
// in the order every view lists them: what a reader looks for first (the
// prompts, then what shapes the output), the service's other fields, and
// genform's local ones last.
type attrID int

const (
	aPrompt attrID = iota
	aNegativePrompt
	aModel
	aImageNumber
	aAspectRatio
	aResolution
	aSeed
	aGenMode
	aDuration
	aSourceImage
	aSourceImages
	aFrameIndices
	aInputWidth
	aInputHeight
	aPromptEnhancer
	aIsPublic
	aInput
	aWatermarkFree
	aDir
	numAttrs
)

// attrNames are the user-facing names, indexed by attrID.
var attrNames = [numAttrs]string{
	aPrompt:         "prompt",
	aNegativePrompt: "negative_prompt",
	aIsPublic:       "is_public",
	aSeed:           "seed",
	aImageNumber:    "image_number",
	aAspectRatio:    "aspect_ratio",
	aResolution:     "resolution",
	aSourceImage:    "source_image",
	aSourceImages:   "source_images",
	aFrameIndices:   "frame_indices",
	aInputWidth:     "input_width",
	aInputHeight:    "input_height",
	aPromptEnhancer: "is_enable_prompt_enhancer",
	aGenMode:        "gen_mode",
	aDuration:       "duration",
	aWatermarkFree:  "watermark_free",
	aDir:            "dir",
	aModel:          "model",
	aInput:          "input",
}

// AttrNames lists the attributes a resource block may set, in the order
// every view lists them.
func AttrNames() []string { return append([]string(nil), attrNames[:]...) }

// SortAttrNames sorts attribute names in the order of AttrNames; names it
// does not list come after, in lexical order.
func SortAttrNames(names []string) {
	rank := func(n string) int {
		if id, ok := attrByName[n]; ok {
			return int(id)
		}
		return int(numAttrs)
	}
	slices.SortFunc(names, func(a, b string) int {
		if c := cmp.Compare(rank(a), rank(b)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
}

var attrByName = func() map[string]attrID {
	m := make(map[string]attrID, numAttrs)
	for i, n := range attrNames {
		m[n] = attrID(i)
	}
	return m
}()

// resourceSchema holds every attribute any endpoint takes, so that a
// misspelt name gets HCL's "Did you mean" and a name that exists but does
// not fit the block's endpoint gets an explanation of why instead.
var resourceSchema = func() *hcl.BodySchema {
	s := &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "lifecycle"}}}
	for _, n := range attrNames {
		s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: n})
	}
	for _, n := range []string{"count", "for_each", "depends_on", "provider"} {
		s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: n})
	}
	return s
}()

// resourceContent is body.Content(resourceSchema). For a native-syntax
// body that holds only what the schema allows, which has nothing to
// report, it reads the body directly: hclsyntax's Content also builds the
// body of what remains, with two maps, for each of the 10,000 blocks of a
// large configuration.
func resourceContent(body hcl.Body) (*hcl.BodyContent, hcl.Diagnostics) {
	sb, ok := body.(*hclsyntax.Body)
	if !ok {
		return body.Content(resourceSchema)
	}
	for name := range sb.Attributes {
		if _, known := resourceAttrs[name]; !known {
			return body.Content(resourceSchema)
		}
	}
	for _, b := range sb.Blocks {
		if b.Type != "lifecycle" || len(b.Labels) > 0 {
			return body.Content(resourceSchema)
		}
	}
	content := &hcl.BodyContent{Attributes: make(hcl.Attributes, len(sb.Attributes)), MissingItemRange: sb.MissingItemRange()}
	for name, a := range sb.Attributes {
		content.Attributes[name] = a.AsHCLAttribute()
	}
	for _, b := range sb.Blocks {
		content.Blocks = append(content.Blocks, b.AsHCLBlock())
	}
	return content, nil
}

// resourceAttrs are the attribute names of resourceSchema.
var resourceAttrs = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, a := range resourceSchema.Attributes {
		m[a.Name] = struct{}{}
	}
	return m
}()

var lifecycleSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "prevent_destroy"}, {Name: "ignore_changes"}, {Name: "replace_triggered_by"}},
}

func decodeResource(block *hcl.Block, providers Providers) (*Resource, hcl.Diagnostics) {
	kind, _ := addrs.ParseKind(block.Type)
	r := &Resource{
		Kind:      kind,
		Name:      block.Labels[0],
		DeclRange: block.DefRange,
	}
	var diags hcl.Diagnostics
	diags = append(diags, checkName(r.Name, "resource", block.LabelRanges[0])...)
	content, d := resourceContent(block.Body)
	diags = append(diags, d...)
	for name, a := range content.Attributes {
		switch name {
		case "count":
			r.Count = a.Expr
		case "for_each":
			r.ForEach = a.Expr
		case "depends_on":
			r.ext().dependsOn = a
			r.DependsOn, d = decodeDependsOn(a)
			diags = append(diags, d...)
		case "provider":
			r.live = &liveRef{}
			r.live.name, r.live.rng, d = decodeProviderRef(a, providers)
			diags = append(diags, d...)
		default:
			r.attrs = append(r.attrs, resAttr{id: attrByName[name], attr: a})
		}
	}
	sort.Slice(r.attrs, func(i, j int) bool {
		return r.attrs[i].attr.Range.Start.Byte < r.attrs[j].attr.Range.Start.Byte
	})
	if a := content.Attributes["model"]; a != nil && r.live != nil {
		r.live.model = a.Expr.Range()
	}
	if r.Count != nil && r.ForEach != nil {
		diags = append(diags, errorAt(r.ForEach.Range().Ptr(), `Invalid combination of "count" and "for_each"`,
			`The "count" and "for_each" meta-arguments are mutually-exclusive, only one should be used to be explicit about the number of resources to be created.`))
	}
	var lifecycle *hcl.Block
	for _, b := range content.Blocks {
		if lifecycle != nil {
			diags = append(diags, errorAt(b.DefRange.Ptr(), "Duplicate lifecycle block",
				fmt.Sprintf("This resource already has a lifecycle block at %s.", lifecycle.DefRange)))
			continue
		}
		lifecycle = b
		diags = append(diags, r.decodeLifecycle(b)...)
	}
	return r, diags
}

func decodeDependsOn(a *hcl.Attribute) ([]addrs.Resource, hcl.Diagnostics) {
	return decodeResourceRefs(a, "depends_on", "depends_on takes references to whole resources, such as image.hero or video.intro, without attributes or instance keys.", true)
}

// decodeResourceRefs reads a list of references to resources (image.NAME,
// video.NAME, and unless whole, an instance or attribute of one, which
// stands for its resource), each once.
func decodeResourceRefs(a *hcl.Attribute, name, detail string, whole bool) ([]addrs.Resource, hcl.Diagnostics) {
	exprs, diags := hcl.ExprList(a.Expr)
	var out []addrs.Resource
	for _, e := range exprs {
		tr, d := hcl.AbsTraversalForExpr(e)
		addr, ok := resourceAddrOf(tr)
		if d.HasErrors() || !ok || whole && len(tr) != 2 {
			why := detail
			if !d.HasErrors() && tr.RootName() == "module" {
				why += fmt.Sprintf(" A module or a resource in one cannot be named in %s: use one of the module's outputs (module.NAME.OUTPUT) where its value is needed, which orders this resource after the module's resources that output is made from.", name)
			}
			diags = append(diags, errorAt(e.Range().Ptr(), "Invalid "+name+" reference",
				why))
			continue
		}
		out = appendUnique(out, addr)
	}
	return out, diags
}

// resourceAddrOf returns the resource a traversal starting image.NAME or
// video.NAME refers to.
func resourceAddrOf(tr hcl.Traversal) (addrs.Resource, bool) {
	kind, ok := addrs.ParseKind(tr.RootName())
	if !ok || len(tr) < 2 {
		return addrs.Resource{}, false
	}
	at, ok := tr[1].(hcl.TraverseAttr)
	if !ok {
		return addrs.Resource{}, false
	}
	return addrs.Resource{Kind: kind, Name: at.Name}, true
}

func (r *Resource) decodeLifecycle(b *hcl.Block) hcl.Diagnostics {
	content, diags := b.Body.Content(lifecycleSchema)
	if a, ok := content.Attributes["prevent_destroy"]; ok {
		v, d := a.Expr.Value(nil)
		diags = append(diags, d...)
		if !d.HasErrors() {
			if v.IsNull() || !v.IsKnown() || v.Type() != cty.Bool {
				diags = append(diags, errorAt(a.Expr.Range().Ptr(), "Invalid prevent_destroy value",
					"prevent_destroy takes a literal true or false."))
			} else {
				r.PreventDestroy = v.True()
			}
		}
	}
	if a, ok := content.Attributes["replace_triggered_by"]; ok {
		r.ext().replaceTriggeredBy = a
		refs, d := decodeResourceRefs(a, "replace_triggered_by", "replace_triggered_by takes references to resources, such as [image.hero] or [video.intro]: when one of them is generated anew, so is this resource.", false)
		diags = append(diags, d...)
		r.ReplaceTriggeredBy = refs
	}
	if a, ok := content.Attributes["ignore_changes"]; ok {
		exprs, d := hcl.ExprList(a.Expr)
		diags = append(diags, d...)
		for _, e := range exprs {
			tr, d := hcl.AbsTraversalForExpr(e)
			if d.HasErrors() || len(tr) != 1 {
				diags = append(diags, errorAt(e.Range().Ptr(), "Invalid ignore_changes entry",
					"ignore_changes takes attribute names of this block, such as [prompt, seed]."))
				continue
			}
			name := tr.RootName()
			if _, ok := attrByName[name]; !ok {
				detail := fmt.Sprintf("This block has no attribute named %q.", name)
				sorted := slices.Sorted(slices.Values(attrNames[:]))
				if s := Suggest(name, sorted); s != "" {
					detail += fmt.Sprintf(" Did you mean %q?", s)
				}
				diags = append(diags, errorAt(e.Range().Ptr(), "Invalid ignore_changes entry",
					detail))
				continue
			}
			r.IgnoreChanges = append(r.IgnoreChanges, name)
		}
	}
	return diags
}

// liveRef is a block's provider = NAME: the name, where it is set, and
// the provider's identity in fingerprints (Provider.Identity), set once
// the provider blocks are decoded.
type liveRef struct {
	name string
	rng  hcl.Range
	id   string
	// model is where the block's model is written, for the diagnostics
	// about its lifecycle (kept past Load, which drops the attributes).
	model hcl.Range
}

// Provider is the live provider the block names with provider = NAME;
// "" for the reference service.
func (r *Resource) Provider() string {
	if r.live == nil {
		return ""
	}
	return r.live.name
}
