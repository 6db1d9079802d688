package config

import (
	"fmt"
	"math/big"
	"sort"
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

// placement says where in the request body an attribute goes.
type placement int

const (
	placeTop      placement = iota // a top-level field
	placeConfig                    // a field of "config"
	placeSettings                  // a field of "settings"
	placeLocal                     // not sent: used by genform itself
	placeProvider                  // a live provider's model and input, which its request is built from
)

var attrPlace = [numAttrs]placement{
	aPrompt:         placeTop,
	aNegativePrompt: placeTop,
	aIsPublic:       placeTop,
	aSeed:           placeSettings,
	aImageNumber:    placeConfig,
	aAspectRatio:    placeSettings,
	aResolution:     placeSettings,
	aSourceImage:    placeConfig,
	aSourceImages:   placeConfig,
	aFrameIndices:   placeConfig,
	aInputWidth:     placeConfig,
	aInputHeight:    placeConfig,
	aPromptEnhancer: placeTop,
	aGenMode:        placeTop,
	aDuration:       placeSettings,
	aWatermarkFree:  placeLocal,
	aDir:            placeLocal,
	aModel:          placeProvider,
	aInput:          placeProvider,
}

var attrType = [numAttrs]cty.Type{
	aPrompt:         cty.String,
	aNegativePrompt: cty.String,
	aIsPublic:       cty.Bool,
	aSeed:           cty.Number,
	aImageNumber:    cty.Number,
	aAspectRatio:    cty.String,
	aResolution:     cty.Number,
	aSourceImage:    cty.String,
	aSourceImages:   cty.List(cty.String),
	aFrameIndices:   cty.List(cty.Number),
	aInputWidth:     cty.Number,
	aInputHeight:    cty.Number,
	aPromptEnhancer: cty.Bool,
	aGenMode:        cty.String,
	aDuration:       cty.Number,
	aWatermarkFree:  cty.Bool,
	aDir:            cty.String,
	aModel:          cty.String,
	aInput:          cty.DynamicPseudoType,
}

// endpointSpec is what one endpoint takes (docs/service.md); the values
// each field may have are the reference service's, which the caller hands
// in (Providers.Endpoint).
type endpointSpec struct {
	ep  addrs.Endpoint
	lim *schema.Endpoint
	// what chose the endpoint, for messages: "An image", "A video with
	// source_image"
	chosenBy string
	takes    [numAttrs]bool
	required []attrID
	// defaults are the documented defaults, filled in so that writing a
	// default out changes nothing. Fields without a documented default are
	// sent only when set. is_public defaults to false everywhere: that is
	// genform's choice, so nothing is published unless asked.
	defaults map[attrID]cty.Value
	fields   []jsonField // body keys in canonical order
	// configFields and settingsFields are the fields of the config and
	// settings objects, in canonical order.
	configFields, settingsFields []jsonField
	// prov and caps are a live provider's model's: its request is the
	// model's input, built by the provider's tables (buildProvider).
	prov *schema.Provider
	caps schema.Caps
}

func takes(ids ...attrID) [numAttrs]bool {
	var t [numAttrs]bool
	for _, id := range ids {
		t[id] = true
	}
	t[aDir] = true
	return t
}

// refSpecs are the specs of the reference service's four endpoints:
// which attributes each takes, in which shape its body carries them, and
// the values each field may have.
type refSpecs struct {
	text2Image, image2Video, keyFrames, text2Video *endpointSpec
}

// refSpecsCache holds the refSpecs made for each set of the reference
// service's rules (in practice one): loading makes them once.
var refSpecsCache sync.Map // [4]*schema.Endpoint -> *refSpecs

// newRefSpecs are the specs of the reference service's endpoints as p
// gives their rules; nil when p does not know one of them.
func newRefSpecs(p Providers) *refSpecs {
	key := [4]*schema.Endpoint{p.Endpoint(addrs.Text2Image), p.Endpoint(addrs.Image2Video), p.Endpoint(addrs.KeyFrames), p.Endpoint(addrs.Text2Video)}
	for _, l := range key {
		if l == nil {
			return nil
		}
	}
	if s, ok := refSpecsCache.Load(key); ok {
		return s.(*refSpecs)
	}
	t2i, kf := key[0], key[2]
	s := &refSpecs{
		text2Image: &endpointSpec{
			ep:       addrs.Text2Image,
			lim:      t2i,
			chosenBy: "An image",
			takes:    takes(aPrompt, aNegativePrompt, aIsPublic, aSeed, aImageNumber, aAspectRatio, aResolution),
			required: []attrID{aPrompt},
			defaults: map[attrID]cty.Value{
				aIsPublic:    cty.False,
				aImageNumber: cty.NumberIntVal(t2i.DefaultImageNumber),
				aSeed:        cty.NumberIntVal(schema.RandomSeed),
				aAspectRatio: cty.StringVal(t2i.DefaultAspectRatio),
				aResolution:  cty.NumberIntVal(t2i.DefaultResolution),
			},
		},
		image2Video: videoSpec(key[1], "A video with source_image", aSourceImage, aSourceImage),
		keyFrames: &endpointSpec{
			ep:       addrs.KeyFrames,
			lim:      kf,
			chosenBy: "A video with source_images",
			takes:    takes(aPrompt, aNegativePrompt, aIsPublic, aSeed, aDuration, aSourceImages, aFrameIndices, aInputWidth, aInputHeight, aWatermarkFree),
			required: []attrID{aSourceImages, aFrameIndices, aInputWidth, aInputHeight},
			defaults: map[attrID]cty.Value{
				aIsPublic: cty.False,
			},
		},
		text2Video: videoSpec(key[3], "A video with neither source_image nor source_images", aAspectRatio, aPrompt),
	}
	for _, ep := range []*endpointSpec{s.text2Image, s.image2Video, s.keyFrames, s.text2Video} {
		ep.fields = ep.layout()
		for _, f := range ep.fields {
			switch f.name {
			case "config":
				ep.configFields = f.group
			case "settings":
				ep.settingsFields = f.group
			}
		}
	}
	got, _ := refSpecsCache.LoadOrStore(key, s)
	return got.(*refSpecs)
}

// videoSpec is the spec of a video endpoint with a prompt enhancer and a
// generation mode (image2video, text2video): they take the same fields
// but one, own (source_image, aspect_ratio), require one (source_image,
// prompt), and have the same defaults, the mode's the endpoint's own.
func videoSpec(lim *schema.Endpoint, chosenBy string, own, required attrID) *endpointSpec {
	return &endpointSpec{
		ep:       lim.Endpoint,
		lim:      lim,
		chosenBy: chosenBy,
		takes:    takes(aPrompt, aNegativePrompt, aIsPublic, aSeed, aDuration, own, aPromptEnhancer, aGenMode, aWatermarkFree),
		required: []attrID{required},
		defaults: map[attrID]cty.Value{
			aIsPublic:       cty.False,
			aPromptEnhancer: cty.True,
			aGenMode:        cty.StringVal(lim.DefaultGenMode),
		},
	}
}

// bodyBuilder turns one instance's attribute values into its request.
type bodyBuilder struct {
	c     *Config
	r     *Resource
	av    *attrValues
	ep    *endpointSpec
	sc    *scratch
	diags hcl.Diagnostics
}

func (b *bodyBuilder) bad(id attrID, summary, detail string) {
	b.diags = append(b.diags, errorAt(b.av.rng(id).Ptr(), summary,
		detail))
}

// endpoint chooses the endpoint from the inputs a block sets.
func (b *bodyBuilder) endpoint() {
	if b.r.live != nil {
		b.ep = b.providerEndpoint()
		return
	}
	ref := b.c.ref
	if b.r.Kind == addrs.Image {
		b.ep = ref.text2Image
		return
	}
	img, imgs := b.av.set[aSourceImage], b.av.set[aSourceImages]
	switch {
	case img && imgs:
		b.bad(aSourceImage, "Conflicting video inputs",
			"A video takes either source_image (one image to animate, sent to image-to-video) or source_images (key frames, sent to key-frame conditioning), not both. Remove one of them.")
		b.ep = ref.keyFrames
	case imgs:
		b.ep = ref.keyFrames
	case img:
		b.ep = ref.image2Video
	default:
		b.ep = ref.text2Video
	}
}

// reason says why the chosen endpoint does not take attribute id.
func (b *bodyBuilder) reason(id attrID) string {
	image := b.r.Kind == addrs.Image
	switch id {
	case aWatermarkFree:
		return "watermark-free downloads exist for videos only."
	case aImageNumber:
		return "a video generation has exactly one output; image_number applies to images."
	case aResolution:
		return "the video endpoints take no resolution; it applies to images."
	case aAspectRatio:
		if b.ep == b.c.ref.image2Video {
			return "image-to-video takes its frame from the source image."
		}
		return "key-frame conditioning takes its frame size from input_width and input_height."
	case aSourceImage, aSourceImages, aFrameIndices, aInputWidth, aInputHeight:
		if image {
			return "images are generated from the prompt alone; to animate an image, declare a video block with source_image or source_images."
		}
		return "it belongs to key-frame conditioning, which a video uses when source_images is set."
	case aPromptEnhancer, aGenMode, aDuration:
		if image {
			return "it is a setting of the video endpoints."
		}
		return "key-frame conditioning has no such setting."
	case aModel, aInput:
		return "model and input choose and feed a live provider's model; set provider = NAME in the block too (genform providers lists them)."
	}
	return "the service does not document it for this endpoint."
}

// build validates the attributes against the endpoint and records the
// request in d: its endpoint, values, JSON and watermark_free.
func (b *bodyBuilder) build(d *instData) {
	if b.ep == nil {
		// A provider or model that cannot be had, already reported.
		d.ep = specNone
		return
	}
	if b.ep.prov != nil {
		b.buildProvider(d)
		return
	}
	ep, av := b.ep, b.av
	var vals [numAttrs]cty.Value
	for _, ra := range b.r.attrs {
		id := ra.id
		if !av.set[id] {
			continue
		}
		name := attrNames[id]
		if !ep.takes[id] {
			b.bad(id, "Unsupported argument",
				fmt.Sprintf("%s sends its request to %s (%s), which does not take %s: %s Remove %s.", ep.chosenBy, ep.ep.Title(), ep.ep.Path(), name, b.reason(id), name))
			continue
		}
		v, err := convert.Convert(av.val[id], attrType[id])
		if err != nil {
			b.diags = append(b.diags, typeDiag(id, err, av.rng(id))...)
			vals[id] = cty.UnknownVal(attrType[id])
			continue
		}
		if v.IsNull() {
			continue
		}
		vals[id] = v
		b.check(id, v)
	}
	for _, id := range ep.required {
		if vals[id] == cty.NilVal && !av.set[id] {
			what := "the request"
			if id == aPrompt {
				what = "the prompt"
			}
			b.diags = append(b.diags, errorAt(b.r.DeclRange.Ptr(), "Missing required argument",
				fmt.Sprintf("The argument %q is required, but no definition was found. %s sends its request to %s (%s), which needs %s.", attrNames[id], ep.chosenBy, ep.ep.Title(), ep.ep.Path(), requiredWhy(id, what))))
		}
	}
	if ep == b.c.ref.keyFrames {
		b.checkKeyFrames(vals[aSourceImages], vals[aFrameIndices], vals[aDuration])
	}

	d.keep(ep, &vals)
	known := true
	for id := attrID(0); id < numAttrs; id++ {
		if vals[id] == cty.NilVal && ep.takes[id] && attrPlace[id] != placeLocal {
			vals[id] = ep.defaults[id] // cty.NilVal when there is none
		}
		if v := vals[id]; v != cty.NilVal && !v.IsWhollyKnown() {
			known = false
			break
		}
	}
	// A refused value is never sent, and may not encode (a seed of 1/0).
	if known && !b.diags.HasErrors() {
		req := ep.appendJSON(b.sc.buf[:0], &vals)
		b.sc.buf = req
		d.request = append([]byte(nil), req...)
	}
	if ep.takes[aWatermarkFree] && av.set[aWatermarkFree] {
		if v, err := convert.Convert(av.val[aWatermarkFree], cty.Bool); err == nil && v.IsKnown() && !v.IsNull() {
			d.watermarkFree = v.True()
		}
	}
}

func requiredWhy(id attrID, what string) string {
	switch id {
	case aSourceImages:
		return "the key frames"
	case aFrameIndices:
		return "the position in the video of each key frame"
	case aInputWidth, aInputHeight:
		return "the pixel size of the source images (input_width and input_height)"
	}
	return what
}

// check validates a known value against the service's rules (package
// rules), before anything is sent: a value known only at apply is checked
// then, when Expand runs again with it. Rules that tie several fields
// together are checkKeyFrames'.
func (b *bodyBuilder) check(id attrID, v cty.Value) {
	if !v.IsKnown() {
		return
	}
	lim := b.ep.lim
	switch id {
	case aPrompt, aNegativePrompt:
		s := v.AsString()
		if id == aPrompt && lim.PromptRequired && schema.Blank(s) {
			b.bad(id, "Empty prompt", fmt.Sprintf("%s sends its request to %s, which needs a prompt describing what to generate; this one is empty.", b.ep.chosenBy, b.ep.ep.Title()))
			return
		}
		if why := schema.CheckPrompt(s); why != "" {
			b.refuse(id, b.av.rng(id), attrNames[id]+" "+why+".", "")
		}
	case aSeed:
		b.number(id, v, schema.CheckSeed, " A seed of -1 asks the service to pick one.")
	case aImageNumber:
		b.number(id, v, lim.ImageNumber, "")
	case aResolution:
		b.number(id, v, lim.Resolution, "")
	case aDuration:
		b.number(id, v, lim.Duration, "")
	case aInputWidth, aInputHeight:
		b.number(id, v, schema.CheckInputSide, " It is the size of the source images, which shapes the video.")
	case aAspectRatio:
		b.oneOf(id, v.AsString(), lim.AspectRatio, lim.AspectRatios)
	case aGenMode:
		b.oneOf(id, v.AsString(), lim.GenMode, lim.GenModes)
	case aSourceImage:
		b.sourceImage(id, -1, v.AsString())
	case aSourceImages:
		i := 0
		for it := v.ElementIterator(); it.Next(); i++ {
			_, e := it.Element()
			if e.IsKnown() && !e.IsNull() && b.sourceImage(id, i, e.AsString()) {
				return
			}
		}
	case aFrameIndices:
		i := 0
		for it := v.ElementIterator(); it.Next(); i++ {
			_, e := it.Element()
			if !e.IsKnown() {
				continue
			}
			if _, ok := wholeNumber(e); e.IsNull() || !ok {
				got := "null"
				if !e.IsNull() {
					got = numberText(e)
				}
				b.refuse(id, b.elemRange(id, i), fmt.Sprintf("frame_indices[%d] %s.%s", i, schema.NotWhole, b.got(id, got)), " Each is the position of its key frame in the video, counted in frames.")
				return
			}
		}
	}
}

// sensitive reports whether attribute id's value derives from a
// sensitive variable: a diagnostic then does not quote it.
func (b *bodyBuilder) sensitive(id attrID) bool { return b.av.sensitive&(1<<id) != 0 }

// got is the sentence quoting a refused value, or, for a sensitive one,
// the sentence saying it is not shown.
func (b *bodyBuilder) got(id attrID, value string) string {
	if b.sensitive(id) {
		return " (The value is made from a sensitive variable, so it is not shown.)"
	}
	return " Got " + value + "."
}

// refuse reports a value the service's rules refuse: detail says what was
// refused and why, more what to do.
func (b *bodyBuilder) refuse(id attrID, rng hcl.Range, detail, more string) {
	b.diags = append(b.diags, errorAt(rng.Ptr(), "Invalid "+attrNames[id],
		detail+more))
}

// number checks a number attribute: whole, then allowed by rule.
func (b *bodyBuilder) number(id attrID, v cty.Value, rule func(int64) string, more string) {
	n, ok := wholeNumber(v)
	why := schema.NotWhole
	if ok {
		why = rule(n)
	}
	if why != "" {
		b.refuse(id, b.av.rng(id), fmt.Sprintf("%s %s.%s", attrNames[id], why, b.got(id, numberText(v))), more)
	}
}

// oneOf checks a string attribute whose values the endpoint lists.
func (b *bodyBuilder) oneOf(id attrID, s string, rule func(string) string, allowed []string) {
	if why := rule(s); why != "" {
		more := didYouMean(s, allowed)
		if b.sensitive(id) {
			more = ""
		}
		b.refuse(id, b.av.rng(id), fmt.Sprintf("%s sends its request to %s, where %s %s.%s", b.ep.chosenBy, b.ep.ep.Title(), attrNames[id], why, b.got(id, strconv.Quote(s))), more)
	}
}

// sourceImage checks source_image, or element i of source_images, and
// reports whether it refused it.
func (b *bodyBuilder) sourceImage(id attrID, i int, s string) bool {
	why := schema.CheckSourceImage(s)
	if why == "" {
		return false
	}
	name := attrNames[id]
	if i >= 0 {
		name = fmt.Sprintf("%s[%d]", name, i)
	}
	if b.sensitive(id) {
		// Why may quote a character of it.
		why = "must be an http(s) URL or a data:image/<type>;base64,<data> URI, and this one, made from a sensitive value, is not (how it fails is not shown)"
	}
	more := ""
	if !strings.Contains(s, "://") && !strings.HasPrefix(s, "data:") {
		more = ` file_data_uri("frame.png") makes a data: URI from a local file.`
	}
	b.refuse(id, b.elemRange(id, i), name+" "+why+".", more)
	return true
}

// elemRange is the source range of element i of attribute id's list when
// the list is written out element by element, and the attribute's range
// otherwise (or for i < 0).
func (b *bodyBuilder) elemRange(id attrID, i int) hcl.Range {
	if t, ok := b.av.expr[id].(*hclsyntax.TupleConsExpr); ok && i >= 0 && i < len(t.Exprs) {
		return t.Exprs[i].Range()
	}
	return b.av.rng(id)
}

// checkKeyFrames checks the rules that tie key-frame conditioning's
// fields together: as many frame_indices as source_images, 2 to 6 of
// them, and frame positions inside a video of the request's duration,
// strictly increasing. What is not known yet is checked when it is.
func (b *bodyBuilder) checkKeyFrames(images, indices, duration cty.Value) {
	lim := b.ep.lim
	n := -1
	if images != cty.NilVal && images.IsKnown() {
		n = images.LengthInt()
		if why := lim.SourceImageCount(n); why != "" {
			b.refuse(aSourceImages, b.av.rng(aSourceImages), fmt.Sprintf("source_images %s: each is a key frame of the video.", why), "")
			return
		}
	}
	if indices == cty.NilVal || !indices.IsKnown() {
		return
	}
	m := indices.LengthInt()
	if n >= 0 {
		if why := schema.FrameIndexCount(m, n); why != "" {
			b.bad(aFrameIndices, "Mismatched frame_indices", fmt.Sprintf("frame_indices %s: each gives the position in the video of the source image at its place in source_images.", why))
			return
		}
	} else if m < lim.MinSourceImages || m > lim.MaxSourceImages {
		b.refuse(aFrameIndices, b.av.rng(aFrameIndices), fmt.Sprintf("frame_indices must have one entry per source image, and %s takes %d to %d of them; got %d.", lim.Endpoint.Title(), lim.MinSourceImages, lim.MaxSourceImages, m), "")
		return
	}

	// The frame positions depend on the duration: the default when none
	// is set, no upper bound while it is not known or not allowed (its
	// own diagnostic says so).
	seconds, more := lim.DefaultDuration, fmt.Sprintf(" The video lasts %d seconds unless duration says otherwise.", lim.DefaultDuration)
	if duration != cty.NilVal {
		more = ""
		seconds = 0
		if duration.IsKnown() {
			if d, ok := wholeNumber(duration); ok && lim.Duration(d) == "" {
				seconds = d
			}
		}
	}
	known := make([]int64, 0, m)
	all := true
	i := 0
	for it := indices.ElementIterator(); it.Next(); i++ {
		_, e := it.Element()
		if !e.IsKnown() || e.IsNull() {
			all = false
			continue
		}
		f, ok := wholeNumber(e)
		if !ok {
			return // check has refused it
		}
		if why := lim.FrameIndex(f, seconds); why != "" {
			b.refuse(aFrameIndices, b.elemRange(aFrameIndices, i), fmt.Sprintf("frame_indices[%d] %s.%s", i, why, b.got(aFrameIndices, strconv.FormatInt(f, 10))), more)
			return
		}
		known = append(known, f)
	}
	if all {
		if at, why := lim.FrameIndices(known, seconds); why != "" {
			b.refuse(aFrameIndices, b.elemRange(aFrameIndices, at), fmt.Sprintf("frame_indices[%d] %s.%s", at, why, b.got(aFrameIndices, strconv.FormatInt(known[at], 10))), "")
		}
	}
}

func wholeNumber(v cty.Value) (int64, bool) { return schema.Whole(v.AsBigFloat()) }

// numberText is a number as a message shows it: whole numbers in full,
// others in their shortest form.
func numberText(v cty.Value) string {
	f := v.AsBigFloat()
	if i, acc := f.Int64(); acc == big.Exact {
		return strconv.FormatInt(i, 10)
	}
	return f.Text('g', -1)
}

// jsonField is one key of a request body in canonical (sorted) order: an
// attribute, or the config or settings object with its own fields.
type jsonField struct {
	name  string
	id    attrID
	group []jsonField
}

// layout lists the endpoint's body fields in sorted key order, computed once
// so that encoding a request does not sort anything.
func (ep *endpointSpec) layout() []jsonField {
	var top, config, settings []jsonField
	for id := attrID(0); id < numAttrs; id++ {
		if !ep.takes[id] {
			continue
		}
		f := jsonField{name: attrNames[id], id: id}
		switch attrPlace[id] {
		case placeTop:
			top = append(top, f)
		case placeConfig:
			config = append(config, f)
		case placeSettings:
			settings = append(settings, f)
		}
	}
	byName := func(fs []jsonField) {
		sort.Slice(fs, func(i, j int) bool { return fs[i].name < fs[j].name })
	}
	byName(config)
	byName(settings)
	if len(config) > 0 {
		top = append(top, jsonField{name: "config", group: config})
	}
	if len(settings) > 0 {
		top = append(top, jsonField{name: "settings", group: settings})
	}
	byName(top)
	return top
}

// appendJSON encodes the body given by vals (final values by attribute,
// cty.NilVal for fields not sent) as canonical JSON: the same bytes as
// JSON(ep.body(vals)), without building the cty object first.
func (ep *endpointSpec) appendJSON(b []byte, vals *[numAttrs]cty.Value) []byte {
	return appendFields(b, ep.fields, vals)
}

func appendFields(b []byte, fields []jsonField, vals *[numAttrs]cty.Value) []byte {
	b = append(b, '{')
	first := true
	for _, f := range fields {
		if f.group != nil {
			if !anySet(f.group, vals) {
				continue
			}
		} else if vals[f.id] == cty.NilVal {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendJSONString(b, f.name)
		b = append(b, ':')
		if f.group != nil {
			b = appendFields(b, f.group, vals)
			continue
		}
		var err error
		b, err = appendJSON(b, vals[f.id], false)
		if err != nil {
			// Only wholly known values reach here, and every attribute
			// type encodes.
			panic(fmt.Sprintf("config: encoding %s: %v", f.name, err))
		}
	}
	return append(b, '}')
}

func anySet(fields []jsonField, vals *[numAttrs]cty.Value) bool {
	for _, f := range fields {
		if vals[f.id] != cty.NilVal {
			return true
		}
	}
	return false
}

// bodyValue builds the request body object from the final values. config
// and settings are left out when empty.
func (ep *endpointSpec) bodyValue(vals *[numAttrs]cty.Value, sc *scratch) cty.Value {
	var shape uint32
	for id, v := range vals {
		if v != cty.NilVal {
			shape |= 1 << id
		}
	}
	top, config, settings := reuse(&sc.top), reuse(&sc.config), reuse(&sc.settings)
	for id := attrID(0); id < numAttrs; id++ {
		v := vals[id]
		if v == cty.NilVal {
			continue
		}
		name := attrNames[id]
		switch attrPlace[id] {
		case placeTop:
			top[name] = v
		case placeConfig:
			config[name] = v
		case placeSettings:
			settings[name] = v
		}
	}
	if len(config) > 0 {
		top["config"] = sc.group(ep.configFields, vals, config)
	}
	if len(settings) > 0 {
		top["settings"] = sc.group(ep.settingsFields, vals, settings)
	}
	return sharedType(shape, cty.ObjectVal(top))
}

// maxGroups bounds the config and settings objects a scratch remembers.
const maxGroups = 64

// group returns the config or settings object of a body, fields being the
// group's fields and m its values by name: the object made for an earlier
// body when the values are equal, as they mostly are (defaults, settings
// a for_each's instances share), so that bodies share it.
func (sc *scratch) group(fields []jsonField, vals *[numAttrs]cty.Value, m map[string]cty.Value) cty.Value {
	key, ok := appendGroupKey(sc.key[:0], fields, vals)
	sc.key = key
	if !ok {
		return cty.ObjectVal(m)
	}
	if v, ok := sc.groups[string(key)]; ok {
		return v
	}
	if sc.groups == nil || len(sc.groups) >= maxGroups {
		sc.groups = make(map[string]cty.Value, maxGroups)
	}
	v := cty.ObjectVal(m)
	sc.groups[string(key)] = v
	return v
}

// appendGroupKey appends to b a text that tells the values of fields
// apart exactly: each present field's id and value. It reports false when
// a value is not a known string, bool or int64 (a fraction's text need
// not tell it from a nearby number of another precision).
func appendGroupKey(b []byte, fields []jsonField, vals *[numAttrs]cty.Value) ([]byte, bool) {
	for _, f := range fields {
		v := vals[f.id]
		if v == cty.NilVal {
			continue
		}
		if !v.IsKnown() || v.IsNull() {
			return b, false
		}
		b = append(b, byte(f.id))
		switch v.Type() {
		case cty.String:
			b = appendJSONString(b, v.AsString())
		case cty.Bool:
			b = strconv.AppendBool(b, v.True())
		case cty.Number:
			i, acc := v.AsBigFloat().Int64()
			if acc != big.Exact {
				return b, false
			}
			b = strconv.AppendInt(b, i, 10)
		default:
			return b, false
		}
	}
	return b, true
}

// bodyTypes holds, by shape (the set of attributes present), one unknown
// value of the type of every request body of that shape. Every field has
// a fixed type (attrType), so the shape decides the body's type.
var bodyTypes sync.Map // uint32 → cty.Value

// sharedType returns body with the type all bodies of its shape share.
func sharedType(shape uint32, body cty.Value) cty.Value {
	p, ok := bodyTypes.Load(shape)
	if !ok {
		p, _ = bodyTypes.LoadOrStore(shape, cty.UnknownVal(body.Type()))
	}
	return withType(p.(cty.Value), body)
}

// listIndex1 indexes the second element of a list.
var listIndex1 = cty.NumberIntVal(1)

// withType returns v with the type of proto, which must be equal to v's.
// cty.ObjectVal gives every object a type of its own, maps as large as
// the object's own: for a request body or an instance's value, about a
// third of its memory. The elements of a list all have the list's element
// type, so v taken back out of a list that starts with proto has proto's
// type, which many values can then share.
//
// cty.ListVal compares the two types, and panics if they differ, which
// the callers' fixed field types rule out; comparing them first as well
// took an eighth of the time of building a body.
func withType(proto, v cty.Value) (shared cty.Value) {
	defer func() {
		if recover() != nil {
			shared = v // not expected: v keeps a type of its own
		}
	}()
	return cty.ListVal([]cty.Value{proto, v}).Index(listIndex1)
}

// specNone stands for the endpoint of a block whose provider or model
// could not be had: it takes nothing and sends nothing.
var specNone = &endpointSpec{defaults: map[attrID]cty.Value{}}
