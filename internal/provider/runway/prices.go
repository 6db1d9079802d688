package runway

import (
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/schema"
)

// CreditPrice is the dollar price of one of Runway's credits: "$0.01 per
// credit" (docs.dev.runwayml.com/guides/setup, read 2026-12-07).
const CreditPrice = 0.01

// listPrice is what Runway charges for a model, in credits, as a source
// read gives it: by the image (at each resolution where the price
// follows it), or by the second of video, one price or a range (low to
// high) where the source gives only a range.
type listPrice struct {
	// image is the credits of one image; imageAt by resolution, the
	// short side of the image's tier (tierOf), where it differs.
	image   int
	imageAt map[int64]int
	// second is the credits of one second of video; secondMax, when set,
	// the top of the range the source gives (the price follows options
	// the table does not map, such as Veo's audio).
	second, secondMax int
	// source says where the price was read, and when.
	source string
}

// runwaySkills is Runway's own reference for agents, which lists
// credits per model: runwayml/skills, skills/rw-api-reference/SKILL.md
// (read 2026-12-07). Runway's pricing page itself was not reachable.
const runwaySkills = "runwayml/skills skills/rw-api-reference/SKILL.md, read 2026-12-07"

// listPrices are the prices read, by model. The models not here have no
// price genform could read from Runway (the pricing page lists them;
// set yours in the provider block's prices).
var listPrices = map[string]listPrice{
	"gen4_image":       {image: 8, imageAt: map[int64]int{720: 5, 1080: 8}, source: runwaySkills},
	"gen4_image_turbo": {image: 2, source: runwaySkills},
	"gemini_2.5_flash": {image: 5, source: runwaySkills},
	// "Each image costs 1 credit." (@runwayml/sdk 4.20.1,
	// text-to-image.ts MuseImage.outputCount).
	"muse_image":  {image: 1, source: "@runwayml/sdk 4.20.1 text-to-image.ts (MuseImage.outputCount), read 2026-12-07"},
	"gen4.5":      {second: 12, source: runwaySkills},
	"gen4_turbo":  {second: 5, source: runwaySkills},
	"veo3.1":      {second: 20, secondMax: 40, source: runwaySkills},
	"veo3.1_fast": {second: 10, secondMax: 15, source: runwaySkills},
}

// Credits is what a request of model costs on Runway in credits, at the
// price read (listPrices), for the body genform sends: an image model's
// price times outputCount (1 when unset), at the tier of its ratio; a
// video model's price a second times its duration, the low end of a
// range. ok is false for a model whose price genform has not read, or a
// body it cannot count (a duration "auto").
func Credits(model string, kind addrs.Kind, body map[string]any) (credits int, ok bool) {
	p := runwayModels[model].price
	switch kind {
	case addrs.Image:
		if p.image == 0 {
			return 0, false
		}
		each := p.image
		if at, found := p.imageAt[resolutionOf(model, body)]; found {
			each = at
		}
		n := int64(1)
		if v, set := body["outputCount"]; set {
			if n, ok = schema.WholeValue(v); !ok || n < 1 {
				return 0, false
			}
		}
		return each * int(n), true
	case addrs.Video:
		d, whole := schema.WholeValue(body["duration"])
		if p.second == 0 || !whole || d < 1 {
			return 0, false
		}
		return p.second * int(d), true
	}
	return 0, false
}

// resolutionOf is the resolution of the ratio body asks model for: the
// one the model's table files it under, else its tier (0 when body has
// no pixel ratio).
func resolutionOf(model string, body map[string]any) int64 {
	ratio, _ := body["ratio"].(string)
	for res, byAspect := range runwayModels[model].ratios {
		for _, r := range byAspect {
			if r == ratio {
				return res
			}
		}
	}
	if w, h, ok := schema.SizeOf(ratio, ":"); ok {
		return tierOf(w, h)
	}
	return 0
}
