package config

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/schema"
)

// Provider is a provider block: the settings of a live provider genform
// speaks. A block that uses provider = NAME without one gets the
// provider's defaults.
type Provider struct {
	Name string
	// Catalog is the provider's tables.
	Catalog *schema.Provider
	// Settings holds what the block shares with the service block:
	// base_url (BaseURL, "" for the provider's public address), key
	// (Token: "" when unset, then read from the provider's usual
	// environment variable), parallelism, requests_per_minute,
	// poll_interval, timeout, max_download_size, and prices with their
	// currency.
	Settings Service
	// ModelPrices are the prices set for one model
	// (prices = { "fal-ai/flux/schnell" = { image = 0.003 } }), by model.
	ModelPrices map[string]*Prices
}

// Identity is the provider's identity as it enters fingerprints: its
// name, with its base URL when that is not the public one, so that a
// generation made on a simulator is never taken for one made live.
func (p *Provider) Identity() string {
	if p == nil || p.Settings.BaseURL == "" {
		return p.name()
	}
	return p.Name + "@" + p.Settings.BaseURL
}

func (p *Provider) name() string {
	if p == nil {
		return ""
	}
	return p.Name
}

// PricesFor is what the provider charges for model: its own prices, or
// the block's, or nil when the configuration sets none.
func (p *Provider) PricesFor(model string) *Prices {
	if p == nil {
		return nil
	}
	if pr, ok := p.ModelPrices[model]; ok {
		return pr
	}
	return p.Settings.Prices
}

// ProviderOf is the settings of the provider named name: its block, or
// the provider's defaults when the configuration has none.
func (c *Config) ProviderOf(name string) *Provider {
	if p, ok := c.Providers[name]; ok {
		return p
	}
	var cat *schema.Provider
	if c.providers != nil {
		cat = c.providers.Live(name)
	}
	return &Provider{Name: name, Catalog: cat}
}

// SettingsOf is what the jobs of the provider named name run with: the
// service block's settings for "" (the reference service), and for a live
// provider its block's, each one it leaves out taken from the provider's
// documented limits (parallelism, requests_per_minute) or genform's
// defaults.
func (c *Config) SettingsOf(name string) Service {
	if name == "" {
		return c.Service
	}
	p := c.ProviderOf(name)
	s := p.Settings
	var lim schema.Limits
	if p.Catalog != nil {
		lim = p.Catalog.Limits
	}
	if s.Parallelism == 0 {
		s.Parallelism = cmp.Or(lim.Parallelism, DefaultParallelism)
	}
	if s.RequestsPerMinute == 0 {
		s.RequestsPerMinute = cmp.Or(lim.RequestsPerMinute, DefaultRequestsPerMinute)
	}
	if s.PollInterval == 0 {
		s.PollInterval = DefaultPollInterval
	}
	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}
	return s
}

// ServiceID is the identity of the service an instance of ep is made
// with, as it enters its fingerprint: reference (the reference service's,
// a base URL or SimulatorService) for the reference service's endpoints,
// the provider's Identity for a model.
func (c *Config) ServiceID(reference string, ep addrs.Endpoint) string {
	if ep.Provider() == addrs.Reference {
		return reference
	}
	return c.ProviderOf(ep.Provider()).Identity()
}

// PricesFor is what an instance of ep costs to make: the service block's
// prices for the reference service, the provider's for a model.
func (c *Config) PricesFor(ep addrs.Endpoint) *Prices {
	if ep.Provider() == addrs.Reference {
		return c.Service.Prices
	}
	return c.ProviderOf(ep.Provider()).PricesFor(ep.Target())
}

var providerSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "base_url"}, {Name: "key"}, {Name: "parallelism"},
		{Name: "requests_per_minute"}, {Name: "poll_interval"}, {Name: "timeout"},
		{Name: "max_download_size"},
		{Name: "prices"}, {Name: "currency"},
	},
}

// decodeProvider reads a provider block.
func (c *Config) decodeProvider(b *hcl.Block) hcl.Diagnostics {
	name := b.Labels[0]
	cat := c.providers.Live(name)
	if cat == nil {
		return hcl.Diagnostics{errorAt(b.LabelRanges[0].Ptr(), "Unknown provider",
			c.unknownProvider(name))}
	}
	p := &Provider{Name: name, Catalog: cat, Settings: Service{DeclRange: b.DefRange}}
	where := fmt.Sprintf("the provider %q block", name)
	content, diags := b.Body.Content(providerSchema)
	diags = append(diags, c.decodeConn(content, where, "key", &p.Settings)...)
	prices, currency := content.Attributes["prices"], content.Attributes["currency"]
	if prices != nil {
		// Prices per model when every key names one; otherwise the
		// block's own prices.
		if v, ok, d := c.settingValue(prices, where, cty.DynamicPseudoType); ok && perModel(v) {
			diags = append(diags, d...)
			p.ModelPrices = map[string]*Prices{}
			for it := v.ElementIterator(); it.Next(); {
				k, mv := it.Element()
				mp, d := c.pricesOf(prices, mv, &Prices{Currency: "USD"}, true)
				diags = append(diags, d...)
				if mp != nil {
					p.ModelPrices[k.AsString()] = mp
				}
			}
			prices = nil
		}
	}
	pr, d := c.decodePrices(prices, currency, where)
	diags = append(diags, d...)
	p.Settings.Prices = pr
	if pr != nil {
		for _, mp := range p.ModelPrices {
			mp.Currency = pr.Currency
		}
	}
	c.Providers[name] = p
	return diags
}

// perModel reports whether a prices value sets prices per model: every
// value is an object (the prices of the model its key names, which may be
// "fal-ai/flux/dev" or "gpt-image-2"), where the block's own prices are
// numbers, or video_second's object of prices by resolution (a key named
// as a price names no model).
func perModel(v cty.Value) bool {
	if !v.Type().IsObjectType() && !v.Type().IsMapType() || v.LengthInt() == 0 {
		return false
	}
	for it := v.ElementIterator(); it.Next(); {
		k, e := it.Element()
		if !(e.Type().IsObjectType() || e.Type().IsMapType()) || slices.ContainsFunc(priceNames, func(n struct{ key, what string }) bool { return n.key == k.AsString() }) {
			return false
		}
	}
	return true
}

// decodeProviderRef reads provider = NAME (a bare name, as Terraform
// writes it, or a string).
func decodeProviderRef(a *hcl.Attribute, providers Providers) (string, hcl.Range, hcl.Diagnostics) {
	rng := a.Expr.Range()
	if tr, d := hcl.AbsTraversalForExpr(a.Expr); !d.HasErrors() && len(tr) == 1 {
		return tr.RootName(), rng, nil
	}
	if v, d := a.Expr.Value(nil); !d.HasErrors() && v.Type() == cty.String && v.IsKnown() && !v.IsNull() {
		return v.AsString(), rng, nil
	}
	return "", rng, hcl.Diagnostics{errorAt(&rng, "Invalid provider",
		fmt.Sprintf("provider takes the name of a provider genform speaks, written as it is, such as provider = %s; the providers are %s.", firstOr(providers.LiveNames(), "NAME"), strings.Join(providers.LiveNames(), ", ")))}
}

// specKey names one provider's model making one kind.
type specKey struct {
	provider, model string
	kind            addrs.Kind
}

// providerSpecs caches the endpointSpec of each model the configuration
// uses; expansions run on every core.
var providerSpecs sync.Map // specKey -> *endpointSpec

// providerSpec is what model of provider p takes, making kind, as an
// endpointSpec: the common attributes its tables list, model, input and
// dir. Its defaults are the provider's (how many images it makes, how
// long a video is), for showing and counting: they are not sent.
func providerSpec(p *schema.Provider, model string, kind addrs.Kind) *endpointSpec {
	key := specKey{p.Name, model, kind}
	if s, ok := providerSpecs.Load(key); ok {
		return s.(*endpointSpec)
	}
	caps := p.Caps(model)
	ids := []attrID{aModel, aInput}
	for _, name := range caps.Attrs {
		if id, ok := attrByName[name]; ok {
			ids = append(ids, id)
		}
	}
	spec := &endpointSpec{
		ep:       addrs.ModelEndpoint(p.Name, model, kind),
		takes:    takes(ids...),
		required: []attrID{aModel},
		defaults: map[attrID]cty.Value{},
		prov:     p,
		caps:     caps,
	}
	spec.chosenBy = fmt.Sprintf("%s %s of provider %s", articleOf(kind), kind, p.Name)
	if kind == addrs.Image && caps.DefaultImageNumber > 0 {
		spec.defaults[aImageNumber] = cty.NumberIntVal(caps.DefaultImageNumber)
	}
	if kind == addrs.Video && caps.DefaultDuration > 0 && caps.Takes(schema.Duration) {
		spec.defaults[aDuration] = cty.NumberIntVal(caps.DefaultDuration)
	}
	s, _ := providerSpecs.LoadOrStore(key, spec)
	return s.(*endpointSpec)
}

func articleOf(kind addrs.Kind) string {
	if kind == addrs.Image {
		return "An"
	}
	return "A"
}

// providerEndpoint chooses the spec of a block with provider = NAME from
// its model; nil, reported, when the provider or the model cannot be had.
func (b *bodyBuilder) providerEndpoint() *endpointSpec {
	r := b.r
	p := b.c.providers.Live(r.Provider())
	if p == nil {
		rng := r.live.rng
		b.diags = append(b.diags, errorAt(&rng, "Unknown provider", b.c.unknownProvider(r.Provider())))
		return nil
	}
	if !b.av.set[aModel] {
		b.diags = append(b.diags, errorAt(r.DeclRange.Ptr(), "Missing required argument",
			fmt.Sprintf("The argument \"model\" is required with provider = %s: it names the model that makes the %s, such as %s.", p.Name, r.Kind, exampleModel(p, r.Kind))))
		return nil
	}
	v, err := convert.Convert(b.av.val[aModel], cty.String)
	if err != nil || !v.IsKnown() || v.IsNull() || strings.TrimSpace(v.AsString()) == "" {
		b.bad(aModel, "Invalid model", fmt.Sprintf("model must be a string known before apply, naming a model of %s such as %s.", p.Name, exampleModel(p, r.Kind)))
		return nil
	}
	model := v.AsString()
	spec := providerSpec(p, model, r.Kind)
	if caps := spec.caps; !caps.Makes(r.Kind) {
		b.bad(aModel, "Invalid model", fmt.Sprintf("%s model %s makes %s, not %ss; declare it in %s block.", p.Name, model, kindsText(caps.Kinds), r.Kind, articleLower(caps.Kinds)))
		return nil
	}
	return spec
}

func exampleModel(p *schema.Provider, kind addrs.Kind) string {
	for _, id := range p.ModelIDs() {
		if p.Models[id].Makes(kind) {
			return strconv.Quote(id)
		}
	}
	return "one its documentation lists"
}

func kindsText(kinds []addrs.Kind) string {
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = k.String() + "s"
	}
	return strings.Join(parts, " and ")
}

func articleLower(kinds []addrs.Kind) string {
	if len(kinds) > 0 && kinds[0] == addrs.Video {
		return "a video"
	}
	return "an image"
}

// buildProvider validates a provider block's values against its model's
// tables and records its request: the model's input, built from the
// common attributes it sets and input, passed through unchanged.
func (b *bodyBuilder) buildProvider(d *instData) {
	ep, av := b.ep, b.av
	var vals [numAttrs]cty.Value
	known := true
	common := map[string]any{}
	var input map[string]any
	for _, ra := range b.r.attrs {
		id := ra.id
		if !av.set[id] {
			continue
		}
		name := attrNames[id]
		if !ep.takes[id] {
			b.bad(id, "Unsupported argument", fmt.Sprintf("%s, model %s, does not take %s: %s Remove %s.", ep.chosenBy, ep.ep.Target(), name, b.providerReason(id), name))
			continue
		}
		ty := attrType[id]
		v, err := convert.Convert(av.val[id], ty)
		if err != nil {
			b.diags = append(b.diags, typeDiag(id, err, av.rng(id))...)
			known = false
			continue
		}
		if v.IsNull() {
			continue
		}
		vals[id] = v
		if !v.IsWhollyKnown() {
			known = false
			continue
		}
		switch id {
		case aModel, aDir, aWatermarkFree:
		case aInput:
			input = b.checkInput(v)
		default:
			b.checkCommon(id, v)
			common[name] = JSONValue(v)
		}
	}
	d.keep(ep, &vals)
	if !known || b.diags.HasErrors() {
		return
	}
	body, err := ep.prov.Body(ep.ep.Target(), b.r.Kind, common, input)
	if ie, ok := errors.AsType[*schema.InputError](err); ok {
		// Shown on the key of input it is about, where it is written.
		b.diags = append(b.diags, errorAt(inputKeyRange(b.av.expr[aInput], ie.Key).Ptr(), "Invalid input",
			fmt.Sprintf("%s, model %s: %v.", ep.chosenBy, ep.ep.Target(), ie)))
		return
	}
	if err != nil {
		b.diags = append(b.diags, errorAt(b.r.DeclRange.Ptr(), "Invalid request",
			fmt.Sprintf("%s, model %s: %v.", ep.chosenBy, ep.ep.Target(), err)))
		return
	}
	req, err := json.Marshal(body)
	if err != nil {
		b.diags = append(b.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid request", Detail: err.Error(), Subject: b.r.DeclRange.Ptr()})
		return
	}
	d.request = req
}

// inputKeyRange is the range of the item of key in the object expression
// of input (from the key to its value), or of the whole expression when
// input is not written as an object or does not write key itself.
func inputKeyRange(expr hcl.Expression, key string) hcl.Range {
	if expr == nil {
		return hcl.Range{}
	}
	if obj, ok := expr.(*hclsyntax.ObjectConsExpr); ok {
		for _, item := range obj.Items {
			if hcl.ExprAsKeyword(item.KeyExpr) == key {
				return hcl.RangeBetween(item.KeyExpr.Range(), item.ValueExpr.Range())
			}
			if v, diags := item.KeyExpr.Value(nil); !diags.HasErrors() && v.Type() == cty.String && v.IsKnown() && !v.IsNull() && v.AsString() == key {
				return hcl.RangeBetween(item.KeyExpr.Range(), item.ValueExpr.Range())
			}
		}
	}
	return expr.Range()
}

// providerReason says why a model does not take attribute id.
func (b *bodyBuilder) providerReason(id attrID) string {
	switch attrPlace[id] {
	case placeTop, placeConfig, placeSettings:
		if _, common := schema.CommonIndex(attrNames[id]); !common {
			return "it is a field of the reference service, which a live provider does not have; put the model's own fields in input."
		}
	}
	return fmt.Sprintf("its tables list it for none of %s's general capabilities or this model; set the model's own field in input instead, if it has one.", b.ep.prov.Name)
}

// checkCommon checks a known common attribute against the model's tables.
func (b *bodyBuilder) checkCommon(id attrID, v cty.Value) {
	caps, ep := b.ep.caps, b.ep
	where := fmt.Sprintf("%s model %s", ep.prov.Name, ep.ep.Target())
	switch id {
	case aImageNumber:
		n, ok := wholeNumber(v)
		if !ok || len(caps.ImageNumbers) > 0 && !slices.Contains(caps.ImageNumbers, n) || len(caps.ImageNumbers) == 0 && n != 1 {
			b.refuse(id, b.av.rng(id), fmt.Sprintf("%s makes %s a request; image_number must be %s.%s", where, numbersText(caps.ImageNumbers, 1), oneOfText(caps.ImageNumbers, 1), b.got(id, numberText(v))), "")
		}
	case aDuration:
		n, ok := wholeNumber(v)
		if len(caps.Durations) > 0 && (!ok || !slices.Contains(caps.Durations, n)) {
			b.refuse(id, b.av.rng(id), fmt.Sprintf("%s makes videos of %s seconds; duration must be one of those.%s", where, joinNumbers(caps.Durations), b.got(id, numberText(v))), "")
		}
	case aAspectRatio:
		if s := v.AsString(); len(caps.AspectRatios) > 0 && !slices.Contains(caps.AspectRatios, s) {
			more := didYouMean(s, caps.AspectRatios)
			if b.sensitive(id) {
				more = ""
			}
			b.refuse(id, b.av.rng(id), fmt.Sprintf("%s takes the aspect ratios %s.%s", where, strings.Join(caps.AspectRatios, ", "), b.got(id, strconv.Quote(s))), more)
		}
	case aSourceImages:
		if n := v.LengthInt(); caps.MaxSourceImages > 0 && n > caps.MaxSourceImages {
			what := "key frames"
			if !caps.Makes(addrs.Video) {
				what = "source images" // an image model edits from them
			}
			b.refuse(id, b.av.rng(id), fmt.Sprintf("%s takes at most %d %s; source_images holds %d.", where, caps.MaxSourceImages, what, n), "")
		}
	case aPrompt, aNegativePrompt:
		if why := schema.CheckPrompt(v.AsString()); why != "" {
			b.refuse(id, b.av.rng(id), attrNames[id]+" "+why+".", "")
		}
	}
}

// checkInput reads input, which must be an object, and refuses a key that
// changes how much is made or paid: the common attribute sets it, so the
// estimates stay true.
func (b *bodyBuilder) checkInput(v cty.Value) map[string]any {
	if !v.Type().IsObjectType() && !v.Type().IsMapType() {
		b.bad(aInput, "Invalid input", fmt.Sprintf("input must be an object of the model's own fields, such as { guidance_scale = 3.5 }; got %s.", v.Type().FriendlyName()))
		return nil
	}
	m, _ := JSONValue(v).(map[string]any)
	for _, k := range b.ep.caps.Counted {
		if _, ok := m[k]; !ok {
			continue
		}
		if attr := countedAttr(k); slices.Contains(b.ep.caps.Attrs, attr) {
			b.bad(aInput, "Invalid input", fmt.Sprintf("input.%s changes how much %s model %s makes or charges; set it with the block's %s instead, so that plan counts and prices it.", k, b.ep.prov.Name, b.ep.ep.Target(), attr))
		} else {
			b.bad(aInput, "Invalid input", fmt.Sprintf("input.%s changes how much %s model %s makes or charges, which plan must know to count and price it, and genform's tables do not list this model: it is asked for at its defaults. Leave input.%s out, or use a model the tables list (docs/providers.md).", k, b.ep.prov.Name, b.ep.ep.Target(), k))
		}
	}
	return m
}

// countedAttr is the common attribute that sets a counted input key.
func countedAttr(key string) string {
	if strings.Contains(key, "duration") || strings.Contains(key, "second") || strings.Contains(key, "frames") {
		return schema.Duration
	}
	return schema.ImageNumber
}

func numbersText(ns []int64, def int64) string {
	if len(ns) == 0 {
		return "one image"
	}
	return "from " + strconv.FormatInt(slices.Min(ns), 10) + " to " + strconv.FormatInt(slices.Max(ns), 10) + " images"
}

func oneOfText(ns []int64, def int64) string {
	if len(ns) == 0 {
		return strconv.FormatInt(def, 10)
	}
	return "one of " + joinNumbers(ns)
}

// joinNumbers lists ns as a sentence does a choice: "5 or 10", "1, 2, 3
// or 4".
func joinNumbers(ns []int64) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.FormatInt(n, 10)
	}
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// checkSourceLinks refuses a source image of r, set by attr from the
// resources refs, that r's provider could not be given: the outputs of a
// provider that answers files as bytes (no URL) are passed as data: URIs,
// which a provider taking only URLs refuses.
func (c *Config) checkSourceLinks(r *Resource, attr *hcl.Attribute, refs []addrs.Resource) hcl.Diagnostics {
	to := c.providers.Live(r.Provider())
	if to == nil || !to.SourceURLsOnly {
		return nil
	}
	var diags hcl.Diagnostics
	for _, a := range refs {
		src, ok := c.byAddr[a]
		if !ok {
			continue
		}
		from := c.providers.Live(src.Provider())
		if from == nil || !from.InlineOutputs {
			continue
		}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Source image without a URL",
			Detail: fmt.Sprintf("%s of %s uses %s, made on %s, whose files come back as bytes with no URL; %s takes source images only as URLs, never as data: URIs. Make %s on a provider that hands out URLs, or make %s on one that takes data: URIs (genform providers lists them).",
				attr.Name, r.Addr(), a, from.Title, to.Title, a, r.Addr()),
			Subject: attr.Expr.Range().Ptr(),
		})
	}
	return diags
}

// unknownProvider says that genform speaks no provider name, and which it
// speaks, with the one close to name.
func (c *Config) unknownProvider(name string) string {
	names := c.providers.LiveNames()
	return fmt.Sprintf("genform speaks no provider %q; it speaks %s.", name, strings.Join(names, ", ")) + didYouMean(name, names)
}

// firstOr is the first of names, or none when there is none.
func firstOr(names []string, none string) string {
	if len(names) == 0 {
		return none
	}
	return names[0]
}

// noProviders is the providers of a configuration loaded without any:
// it knows none.
type noProviders struct{}

func (noProviders) Live(string) *schema.Provider             { return nil }
func (noProviders) LiveNames() []string                      { return nil }
func (noProviders) Endpoint(addrs.Endpoint) *schema.Endpoint { return nil }
