package runway

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/schema"
)

// runwayModel is a model of Runway's as its create endpoints take it (the
// official Node client's request types, src/resources/text-to-image.ts,
// image-to-video.ts and text-to-video.ts).
type runwayModel struct {
	caps schema.Caps
	// ratios maps a resolution (the short side) and an aspect_ratio to
	// the pixel ratio Runway takes ("1920:1080"); defaultRes is the
	// resolution used when resolution is unset.
	ratios     map[int64]map[string]string
	defaultRes int64
	// textRatios are the aspect ratios the model takes without an image
	// (text_to_video), when fewer than with one; nil when the same.
	textRatios []string
	// firstRatio is, by aspect ratio, the first pixel ratio the client
	// lists in any resolution: the one sent when resolution is unset and
	// the default resolution has none of that shape (nil: none).
	firstRatio map[string]string
	// needsImage: the model makes videos from an image only
	// (image_to_video); needsReferences: it needs input.referenceImages.
	needsImage, needsReferences bool
	// ratioForm is how the model's type gives its size (ratioPixels,
	// ratioAspect, ratioNone); ratioOptional: its types do not require
	// ratio; imageNoRatio: from a source image its type has no ratio (the
	// video takes the image's shape).
	ratioForm                   int
	ratioOptional, imageNoRatio bool
	// resolutionField maps resolution to the value of the model's own
	// resolution field, sent always (resolutionAlways) or from a source
	// image only; elsewhere resolution picks the ratio.
	resolutionField  map[int64]string
	resolutionAlways bool
	// price is Runway's price of the model, where a source read gives it.
	price listPrice
}

// runwayImageRatios are gen4_image's resolutions: 1080p, and 720p.
var runwayImageRatios = map[int64]map[string]string{
	1080: {"1:1": "1080:1080", "16:9": "1920:1080", "9:16": "1080:1920", "4:3": "1440:1080", "3:4": "1080:1440", "21:9": "2112:912"},
	720:  {"1:1": "720:720", "16:9": "1280:720", "9:16": "720:1280", "4:3": "960:720", "3:4": "720:960", "21:9": "1680:720"},
}

// runwayGen4VideoRatios are the resolutions of gen4.5 and gen4_turbo
// (720p); gen4.5 without an image takes 16:9 and 9:16 only.
var runwayGen4VideoRatios = map[int64]map[string]string{
	720: {"16:9": "1280:720", "9:16": "720:1280", "4:3": "1104:832", "1:1": "960:960", "3:4": "832:1104", "21:9": "1584:672"},
}

// runwayVeoRatios are Veo 3 and 3.1's, at 720p and 1080p.
var runwayVeoRatios = map[int64]map[string]string{
	720:  {"16:9": "1280:720", "9:16": "720:1280"},
	1080: {"16:9": "1920:1080", "9:16": "1080:1920"},
}

func aspectsOf(ratios map[int64]map[string]string) []string {
	var out []string
	for _, byAspect := range ratios {
		for a := range byAspect {
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	sort.Strings(out)
	return out
}

// baseModels are the gen4 models, Veo 3.1 and gemini_omni_flash. Every
// video request is sent with its duration (the default below when
// duration is unset), so that what plan counts is what Runway makes.
var baseModels = map[string]runwayModel{
	// gen4_image: promptText and ratio required; seed; up to three
	// referenceImages, optional.
	"gen4_image": {
		caps: schema.Caps{
			Kinds:        []addrs.Kind{addrs.Image},
			Attrs:        []string{schema.Prompt, schema.Seed, schema.AspectRatio, schema.Resolution},
			AspectRatios: aspectsOf(runwayImageRatios),
		},
		ratios: runwayImageRatios, defaultRes: 1080,
	},
	// gen4_image_turbo: the same, with one to three referenceImages
	// required.
	"gen4_image_turbo": {
		caps: schema.Caps{
			Kinds:        []addrs.Kind{addrs.Image},
			Attrs:        []string{schema.Prompt, schema.Seed, schema.AspectRatio, schema.Resolution},
			AspectRatios: aspectsOf(runwayImageRatios),
		},
		ratios: runwayImageRatios, defaultRes: 1080, needsReferences: true,
	},
	// gen4.5: text or a first frame; promptText, ratio and duration (2 to
	// 10 seconds) required; seed.
	"gen4.5": {
		caps: schema.Caps{
			Kinds:           []addrs.Kind{addrs.Video},
			Attrs:           []string{schema.Prompt, schema.Seed, schema.AspectRatio, schema.Duration, schema.SourceImage},
			Durations:       []int64{2, 3, 4, 5, 6, 7, 8, 9, 10},
			DefaultDuration: 5,
			AspectRatios:    aspectsOf(runwayGen4VideoRatios),
			Counted:         []string{"duration"},
		},
		ratios: runwayGen4VideoRatios, defaultRes: 720, textRatios: []string{"16:9", "9:16"},
	},
	// gen4_turbo: a first frame required (image_to_video only); ratio
	// required; duration 5 or 10; seed.
	"gen4_turbo": {
		caps: schema.Caps{
			Kinds:           []addrs.Kind{addrs.Video},
			Attrs:           []string{schema.Prompt, schema.Seed, schema.AspectRatio, schema.Duration, schema.SourceImage},
			Durations:       []int64{5, 10},
			DefaultDuration: 5,
			AspectRatios:    aspectsOf(runwayGen4VideoRatios),
			Counted:         []string{"duration"},
		},
		ratios: runwayGen4VideoRatios, defaultRes: 720, needsImage: true,
	},
	// veo3.1 and veo3.1_fast: text, a first frame, or a first and a last
	// frame; ratio required; duration 4, 6 or 8; negativePrompt; seed
	// (@runwayml/sdk 4.20.1). veo3, which that client no longer lists for
	// any endpoint (Google retired Veo 3 on 2026-06-30), is not listed.
	"veo3.1":      runwayVeo31,
	"veo3.1_fast": runwayVeo31,
	// gemini_omni_flash: see runwayOmniFlash.
	"gemini_omni_flash": runwayOmniFlash,
}

// runwayOmniRatios are gemini_omni_flash's: 720p, landscape or portrait.
var runwayOmniRatios = map[int64]map[string]string{
	720: {"16:9": "1280:720", "9:16": "720:1280"},
}

// runwayOmniFlash is gemini_omni_flash (sdk-node 4.20.1,
// src/resources/text-to-video.ts and image-to-video.ts GeminiOmniFlash,
// read 2026-12-07): text, or a first frame only (promptImage, with
// promptText optional); duration a whole number from 3 to 10 seconds;
// ratio, optional, 1280:720 or 720:1280. No seed, no negative prompt.
// The client names no default duration: genform sends 5 when duration
// is unset.
var runwayOmniFlash = runwayModel{
	caps: schema.Caps{
		Kinds:           []addrs.Kind{addrs.Video},
		Attrs:           []string{schema.Prompt, schema.AspectRatio, schema.Duration, schema.SourceImage},
		Durations:       []int64{3, 4, 5, 6, 7, 8, 9, 10},
		DefaultDuration: 5,
		AspectRatios:    aspectsOf(runwayOmniRatios),
		Counted:         []string{"duration"},
	},
	ratios: runwayOmniRatios, defaultRes: 720, ratioOptional: true,
}

var runwayVeo31 = runwayModel{
	caps: schema.Caps{
		Kinds:           []addrs.Kind{addrs.Video},
		Attrs:           []string{schema.Prompt, schema.NegativePrompt, schema.Seed, schema.AspectRatio, schema.Resolution, schema.Duration, schema.SourceImage, schema.SourceImages},
		Durations:       []int64{4, 6, 8},
		DefaultDuration: 8,
		AspectRatios:    aspectsOf(runwayVeoRatios),
		MaxSourceImages: 2,
		Counted:         []string{"duration"},
	},
	ratios: runwayVeoRatios, defaultRes: 720,
}

// runwayModels are the models the tables list: gen4, Veo 3.1 and
// gemini_omni_flash (baseModels), the others the client lists
// (newModels), each with its price where one was read (listPrices).
var runwayModels = func() map[string]runwayModel {
	out := maps.Clone(baseModels)
	for id, m := range newModels() {
		// Their video types all leave ratio optional.
		m.ratioOptional = m.caps.Makes(addrs.Video)
		out[id] = m
	}
	for id, p := range listPrices {
		m := out[id]
		m.price = p
		out[id] = m
	}
	return out
}()

// tableModels are the models of the table, by id.
func tableModels() map[string]schema.Caps {
	models := make(map[string]schema.Caps, len(runwayModels))
	for id, m := range runwayModels {
		models[id] = m.caps
	}
	return models
}

// Table is the provider's capability table, which the one list of
// providers (package provider/all) registers.
var Table = &schema.Provider{
	Name:  "runway",
	Title: "Runway",
	// The official clients read the key from RUNWAYML_API_SECRET
	// (runwayml/sdk-node src/client.ts).
	KeyEnv:  "RUNWAYML_API_SECRET",
	BaseURL: "https://api.dev.runwayml.com",
	// Runway lists no tasks: a lost create cannot be found again.
	Recovery: schema.RecoverNone,
	// DELETE /v1/tasks/{id} cancels a pending, throttled or running
	// task (sdk-node src/resources/tasks.ts).
	Cancel: true,
	// Output URLs expire within 24 to 48 hours; fetching the task
	// again gives fresh ones (sdk-node src/resources/tasks.ts).
	URLLifetime: "24 to 48 hours (a new read of the task gives fresh URLs)",
	// Tier 1 runs one generation of a model at once (two for some
	// modalities), tier 5 twenty; past it tasks are THROTTLED, not
	// refused. No request rate is documented, only daily generations
	// (docs.dev.runwayml.com/usage/tiers).
	Limits: schema.Limits{Parallelism: 1, MaxParallelism: 20},
	General: schema.Caps{
		Kinds:   []addrs.Kind{addrs.Image, addrs.Video},
		Attrs:   []string{schema.Prompt},
		Counted: []string{"duration"},
	},
	Models: tableModels(),
	Body:   runwayBody,
	Pixels: runwayPixels,
}

// runwayPixels is the size a request asks for: its ratio, in pixels
// ("1920:1080").
func runwayPixels(model string, kind addrs.Kind, body map[string]any) (int, int, bool) {
	s, _ := body["ratio"].(string)
	return schema.SizeOf(s, ":")
}

// runwayBody maps the common attributes to Runway's fields: prompt to
// promptText, negative_prompt to negativePrompt, seed and duration as
// they are, aspect_ratio (with resolution) to the model's pixel ratio,
// source_image to promptImage, and source_images (a first and a last
// frame) to promptImage as a list of {uri, position}. Images may be
// HTTPS URLs or data URIs (docs.dev.runwayml.com/assets/inputs). The
// adapter adds "model" and picks the endpoint.
func runwayBody(model string, kind addrs.Kind, common, input map[string]any) (map[string]any, error) {
	m, listed := runwayModels[model]
	_, hasImage := common[schema.SourceImage]
	_, hasImages := common[schema.SourceImages]
	_, inputImage := input["promptImage"]
	withImage := hasImage || hasImages || inputImage
	// resolution is a field of the model's own (resolutionField), or
	// picks the ratio.
	resField := m.resolutionField != nil && (m.resolutionAlways || withImage)
	res, resSet := m.defaultRes, false
	if r, ok := common[schema.Resolution]; ok {
		// A json.Number as the configuration hands it, or a float64.
		n, whole := schema.WholeValue(r)
		switch {
		case resField && whole && m.resolutionField[n] != "":
		case !resField && listed && whole && m.ratios[n] != nil:
		case resField:
			return nil, fmt.Errorf("takes the resolutions %s, not %v", resolutionsText(m.resolutionField), r)
		default:
			return nil, fmt.Errorf("takes the resolutions %s, not %v", resolutionsText(m.ratios), r)
		}
		res, resSet = n, true
	}
	mapped := maps.Clone(common)
	delete(mapped, schema.Resolution)
	body, err := schema.MapBody("Runway", model, mapped, input, func(name string, v any) (string, any, error) {
		switch name {
		case schema.Prompt:
			return "promptText", v, nil
		case schema.NegativePrompt:
			return "negativePrompt", v, nil
		case schema.Seed, schema.Duration:
			return name, v, nil
		case schema.ImageNumber:
			return "outputCount", v, nil
		case schema.AspectRatio:
			s, _ := v.(string)
			if withImage && m.imageNoRatio {
				return "", nil, fmt.Errorf("takes no aspect_ratio with a source image: the video has the image's shape")
			}
			if m.ratioForm == ratioAspect {
				return "ratio", s, nil
			}
			if !withImage && m.textRatios != nil && !slices.Contains(m.textRatios, s) {
				return "", nil, fmt.Errorf("takes the aspect ratios %s without a source image, not %s", strings.Join(m.textRatios, ", "), s)
			}
			pixels, ok := m.ratios[res][s]
			if !ok && !resSet {
				pixels, ok = m.firstRatio[s]
			}
			if !ok {
				return "", nil, fmt.Errorf("has no %dp ratio for aspect_ratio %s", res, s)
			}
			return "ratio", pixels, nil
		case schema.SourceImage:
			return "promptImage", v, nil
		case schema.SourceImages:
			frames, _ := v.([]any)
			if len(frames) == 0 || len(frames) > 2 {
				return "", nil, fmt.Errorf("takes one or two source_images (a first and a last frame), not %d", len(frames))
			}
			list := make([]any, len(frames))
			for i, f := range frames {
				list[i] = map[string]any{"uri": f, "position": [...]string{"first", "last"}[i]}
			}
			return "promptImage", list, nil
		}
		return "", nil, nil
	})
	if err != nil || !listed {
		return body, err
	}
	if resSet && resField {
		if _, ok := body["resolution"]; ok {
			return nil, fmt.Errorf("sets resolution twice: in resolution and in input.resolution; set it once")
		}
		body["resolution"] = m.resolutionField[res]
	}
	if resSet && !resField && common[schema.AspectRatio] == nil {
		return nil, fmt.Errorf("resolution needs aspect_ratio: together they make Runway's ratio")
	}
	if _, ok := body["ratio"]; !ok && !m.ratioOptional {
		return nil, fmt.Errorf("needs a ratio: set aspect_ratio (%s), or input.ratio", strings.Join(m.caps.AspectRatios, ", "))
	}
	if m.needsImage && !withImage {
		return nil, fmt.Errorf("makes videos from an image: set source_image")
	}
	if m.needsReferences {
		if refs, _ := input["referenceImages"].([]any); len(refs) == 0 {
			return nil, fmt.Errorf("needs one to three reference images: set input.referenceImages to a list of { uri = ... }")
		}
	}
	if kind == addrs.Video {
		if _, ok := body["duration"]; !ok && m.caps.DefaultDuration > 0 {
			body["duration"] = float64(m.caps.DefaultDuration)
		}
	}
	return body, nil
}

func resolutionsText[V any](ratios map[int64]V) string {
	var rs []string
	for r := range ratios {
		rs = append(rs, fmt.Sprint(r))
	}
	if len(rs) == 0 {
		return "its documentation lists (genform maps none for this model)"
	}
	sort.Strings(rs)
	return strings.Join(rs, " and ")
}
