package fal

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/schema"
)

// falImageSizes maps aspect_ratio to FLUX's image_size presets on fal
// (the model pages' input schema: square_hd, portrait_4_3,
// portrait_16_9, landscape_4_3, landscape_16_9).
var falImageSizes = map[string]string{
	"1:1":  "square_hd",
	"3:4":  "portrait_4_3",
	"9:16": "portrait_16_9",
	"4:3":  "landscape_4_3",
	"16:9": "landscape_16_9",
}

// falFlux is what fal's FLUX.1 [schnell] and [dev] endpoints take
// (fal.ai/docs Flux Schnell API and Flux Dev API pages, input schema,
// read 2026-12-07): prompt, seed, num_images 1..4 (default 1),
// image_size (default landscape_4_3); no negative prompt. Both are billed
// per megapixel, "rounding up to the nearest megapixel": schnell $0.003,
// dev $0.025 (the same pages, Pricing and Usage).
var falFlux = schema.FluxSchnell("num_images", "1:1", "3:4", "9:16", "4:3", "16:9")

// falFluxPro is FLUX1.1 [pro] (fal-ai/flux-pro/v1.1; fal-js
// libs/client/src/types/endpoints.ts FluxProV11Input, read 2026-12-07):
// prompt, seed, image_size (default landscape_4_3), num_images (default
// 1; the client names no range, so genform asks for one image and input
// may not set more), enhance_prompt, safety_tolerance, output_format.
var falFluxPro = schema.Caps{
	Kinds:              []addrs.Kind{addrs.Image},
	Attrs:              []string{schema.Prompt, schema.Seed, schema.AspectRatio},
	DefaultImageNumber: 1,
	AspectRatios:       falFlux.AspectRatios,
	Counted:            []string{"num_images"},
}

// falKling is Kling 2.1 (standard) image to video on fal: prompt and
// image_url are required, duration is the string "5" or "10" (default
// "5"), negative_prompt and cfg_scale are optional (fal model page
// fal-ai/kling-video/v2.1/standard/image-to-video, input schema; its price
// is per second of video).
var falKling = schema.Kling21

// falKling3Durations are Kling 3's lengths: "3" to "15" seconds, default
// "5" (fal-js endpoints.ts KlingVideoV34kImageToVideoInput and
// KlingVideoV34kTextToVideoInput, which the v3 standard and pro
// endpoints' inputs are, read 2026-12-07).
var falKling3Durations = []int64{3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}

// falKling3Image is Kling 3 image to video (standard and pro):
// start_image_url required (the first frame), end_image_url (the last),
// prompt, negative_prompt, duration, cfg_scale, generate_audio.
var falKling3Image = schema.Caps{
	Kinds:           []addrs.Kind{addrs.Video},
	Attrs:           []string{schema.Prompt, schema.NegativePrompt, schema.SourceImage, schema.SourceImages, schema.Duration},
	Durations:       falKling3Durations,
	DefaultDuration: 5,
	MaxSourceImages: 2,
	Counted:         []string{"duration"},
}

// falKling3Text is Kling 3 text to video (standard and pro): prompt,
// negative_prompt, aspect_ratio 16:9, 9:16 or 1:1 (default 16:9),
// duration, cfg_scale, generate_audio.
var falKling3Text = schema.Caps{
	Kinds:           []addrs.Kind{addrs.Video},
	Attrs:           []string{schema.Prompt, schema.NegativePrompt, schema.AspectRatio, schema.Duration},
	Durations:       falKling3Durations,
	DefaultDuration: 5,
	AspectRatios:    []string{"16:9", "9:16", "1:1"},
	Counted:         []string{"duration"},
}

// falVeo31Text is Veo 3.1 text to video (fal-ai/veo3.1 and
// fal-ai/veo3.1/fast; fal-js endpoints.ts Veo31Input, which
// Veo31FastInput is, read 2026-12-07): prompt required, aspect_ratio
// 16:9 or 9:16 (default 16:9), duration "4s", "6s" or "8s" (default
// "8s"), resolution 720p, 1080p or 4k (default 720p), negative_prompt,
// seed, generate_audio (default true), auto_fix, safety_tolerance.
var falVeo31Text = schema.Caps{
	Kinds:           []addrs.Kind{addrs.Video},
	Attrs:           []string{schema.Prompt, schema.NegativePrompt, schema.Seed, schema.AspectRatio, schema.Resolution, schema.Duration},
	Durations:       []int64{4, 6, 8},
	DefaultDuration: 8,
	AspectRatios:    []string{"16:9", "9:16"},
	Counted:         []string{"duration"},
}

// falVeo31Image is Veo 3.1 image to video (fal-ai/veo3.1/image-to-video
// and its fast/ twin; Veo31ImageToVideoInput): the same, with image_url
// required and aspect_ratio auto (the default), 16:9 or 9:16.
var falVeo31Image = schema.Caps{
	Kinds:           []addrs.Kind{addrs.Video},
	Attrs:           []string{schema.Prompt, schema.NegativePrompt, schema.Seed, schema.AspectRatio, schema.Resolution, schema.Duration, schema.SourceImage},
	Durations:       []int64{4, 6, 8},
	DefaultDuration: 8,
	AspectRatios:    []string{"16:9", "9:16"},
	Counted:         []string{"duration"},
}

// falModel is how fal's body of a listed model is written: the field of
// each source image, how a duration is written, whether a video needs a
// source image, and the resolutions it takes.
type falModel struct {
	caps schema.Caps
	// image is the field of source_image (and of source_images' first
	// frame); last the field of source_images' last frame.
	image, last string
	// seconds writes a duration as the model takes it: "5" or "8s".
	seconds func(n int64) string
	// needsImage: the model makes videos from an image only.
	needsImage bool
	// resolutions are the resolutions it takes, by lines ("4k" for 2160),
	// and defaultRes the one it makes unset; nil when it takes none.
	resolutions map[int64]string
	defaultRes  int64
	// imageSize: its images are sized by image_size (FLUX), default
	// landscape_4_3.
	imageSize bool
}

func plainSeconds(n int64) string { return fmt.Sprint(n) }
func sSeconds(n int64) string     { return fmt.Sprintf("%ds", n) }

var falVeoResolutions = map[int64]string{720: "720p", 1080: "1080p", 2160: "4k"}

var falVeoText = falModel{caps: falVeo31Text, seconds: sSeconds, resolutions: falVeoResolutions, defaultRes: 720}
var falVeoImage = falModel{caps: falVeo31Image, image: "image_url", seconds: sSeconds, needsImage: true, resolutions: falVeoResolutions, defaultRes: 720}
var falKling3I2V = falModel{caps: falKling3Image, image: "start_image_url", last: "end_image_url", seconds: plainSeconds, needsImage: true}
var falKling3T2V = falModel{caps: falKling3Text, seconds: plainSeconds}

// falModels are the models the tables list, from fal's model pages and
// the official client's endpoint types (fal-js
// libs/client/src/types/endpoints.ts, read 2026-12-07). Every video
// request is sent with its duration (the default when duration is
// unset), so that what plan counts is what fal makes.
var falModels = map[string]falModel{
	"fal-ai/flux/schnell":                             {caps: falFlux, imageSize: true},
	"fal-ai/flux/dev":                                 {caps: falFlux, imageSize: true},
	"fal-ai/flux-pro/v1.1":                            {caps: falFluxPro, imageSize: true},
	"fal-ai/kling-video/v2.1/standard/image-to-video": {caps: falKling, image: "image_url", seconds: plainSeconds, needsImage: true},
	"fal-ai/kling-video/v3/standard/image-to-video":   falKling3I2V,
	"fal-ai/kling-video/v3/pro/image-to-video":        falKling3I2V,
	"fal-ai/kling-video/v3/standard/text-to-video":    falKling3T2V,
	"fal-ai/kling-video/v3/pro/text-to-video":         falKling3T2V,
	"fal-ai/veo3.1":                                   falVeoText,
	"fal-ai/veo3.1/fast":                              falVeoText,
	"fal-ai/veo3.1/image-to-video":                    falVeoImage,
	"fal-ai/veo3.1/fast/image-to-video":               falVeoImage,
}

// tableModels are the models of the table, by id.
func tableModels() map[string]schema.Caps {
	models := make(map[string]schema.Caps, len(falModels))
	for id, m := range falModels {
		models[id] = m.caps
	}
	return models
}

// Table is the provider's capability table, which the one list of
// providers (package provider/all) registers.
var Table = &schema.Provider{
	Name:   "fal",
	Title:  "fal",
	KeyEnv: "FAL_KEY",
	// The queue API (docs.fal.ai, Model APIs > Queue).
	BaseURL: "https://queue.fal.run",
	// fal lists no requests: a lost submit cannot be found again.
	Recovery: schema.RecoverNone,
	// PUT cancel_url removes a queued request; a running one is only
	// signalled (docs.fal.ai, Queue > Cancel).
	Cancel: true,
	// The result document is kept a short time (fetched as soon as the
	// status is COMPLETED); media stay on fal's CDN at least 7 days
	// (docs.fal.ai FAQ, Data Retention).
	URLLifetime: "at least 7 days (the result document only a short time)",
	// New accounts run 2 requests at once, rising with credit to 40;
	// past it requests wait in the queue (docs.fal.ai FAQ, Concurrency
	// Limits). fal documents no request rate.
	Limits:  schema.Limits{Parallelism: 2, MaxParallelism: 40},
	General: schema.PromptOnly([]addrs.Kind{addrs.Image, addrs.Video}, "duration"),
	Models:  tableModels(),
	Body:    falBody,
	Pixels:  falPixels,
}

// falImageSizePixels are the sizes of fal's image_size presets (the
// FLUX pages' ImageSize enum; the simulator draws them).
var falImageSizePixels = map[string][2]int{
	"square_hd":      {1024, 1024},
	"square":         {512, 512},
	"portrait_4_3":   {768, 1024},
	"portrait_16_9":  {576, 1024},
	"landscape_4_3":  {1024, 768},
	"landscape_16_9": {1024, 576},
}

// falPixels is the size of what a request of a listed model makes: a
// FLUX image's image_size (a preset, or {width, height}; landscape_4_3
// when unset), a Veo frame's resolution in the shape of its aspect
// ratio. A Kling video's size is its model's own, not told.
func falPixels(model string, kind addrs.Kind, body map[string]any) (int, int, bool) {
	m, ok := falModels[model]
	switch {
	case !ok:
		return 0, 0, false
	case m.imageSize:
		switch v := body["image_size"].(type) {
		case nil:
			wh := falImageSizePixels["landscape_4_3"]
			return wh[0], wh[1], true
		case string:
			wh, ok := falImageSizePixels[v]
			return wh[0], wh[1], ok
		case map[string]any:
			w, okW := v["width"].(float64)
			h, okH := v["height"].(float64)
			return int(w), int(h), okW && okH && w > 0 && h > 0
		}
	case m.resolutions != nil:
		lines := int(m.defaultRes)
		if r, ok := body["resolution"].(string); ok {
			if lines, ok = schema.LinesOf(r); !ok {
				return 0, 0, false
			}
		}
		aspect, _ := body["aspect_ratio"].(string)
		if aspect == "" || aspect == "auto" {
			// The shape is the source image's; the lines, which the
			// price follows, are the resolution's.
			aspect = "16:9"
		}
		return schema.FrameOf(lines, aspect)
	}
	return 0, 0, false
}

// falBody maps the common attributes to fal's fields: prompt, seed and
// negative_prompt as they are, image_number to num_images, aspect_ratio
// to image_size for an image (as it is for a video), duration as the
// model writes it ("5", "8s"), resolution to "720p" and the like,
// source_image to the model's image field and source_images to its first
// and last frames. A listed video model is sent its duration unset too
// (its default), so that plan counts what it makes. It refuses sync_mode
// set to anything but false: with it fal answers the media inline, as
// data: URIs in the result, instead of URLs of files on its CDN (the
// model pages' input schema), and an answer that size is more than
// genform reads of one; genform follows the queue and downloads the
// files.
func falBody(model string, kind addrs.Kind, common, input map[string]any) (map[string]any, error) {
	if v, ok := input["sync_mode"]; ok && v != nil && v != false {
		return nil, &schema.InputError{Key: "sync_mode", Reason: "input sets sync_mode, with which fal returns the media inline as data URIs instead of file URLs, which genform does not keep; remove it: genform uses fal's queue and downloads the files"}
	}
	m, listed := falModels[model]
	mapped := maps.Clone(common)
	delete(mapped, schema.SourceImages)
	body, err := schema.MapBody("fal", model, mapped, input, func(name string, v any) (string, any, error) {
		switch name {
		case schema.Prompt, schema.Seed, schema.NegativePrompt:
			return name, v, nil
		case schema.Duration:
			if n, whole := schema.WholeValue(v); whole && m.seconds != nil {
				return name, m.seconds(n), nil
			}
			return name, v, nil
		case schema.Resolution:
			n, _ := schema.WholeValue(v)
			r, ok := m.resolutions[n]
			if !ok {
				return "", nil, fmt.Errorf("fal model %s makes videos of %s lines; resolution %v is none of those", model, linesText(m.resolutions), v)
			}
			return name, r, nil
		case schema.SourceImage:
			if m.image != "" {
				return m.image, v, nil
			}
			return "image_url", v, nil
		case schema.ImageNumber:
			return "num_images", v, nil
		case schema.AspectRatio:
			if kind == addrs.Video {
				return name, v, nil
			}
			s, _ := v.(string)
			size, known := falImageSizes[s]
			if !known {
				return "", nil, fmt.Errorf("fal model %s has no image_size for aspect_ratio %v", model, v)
			}
			return "image_size", size, nil
		}
		return "", nil, nil
	})
	if err != nil {
		return nil, err
	}
	if frames, ok := common[schema.SourceImages].([]any); ok {
		if m.image == "" || m.last == "" || len(frames) == 0 || len(frames) > 2 {
			return nil, fmt.Errorf("fal model %s takes no first and last frames; set source_image, or the model's own fields in input", model)
		}
		if err := schema.SetOnce(body, m.image, schema.SourceImages, frames[0]); err != nil {
			return nil, err
		}
		if len(frames) == 2 {
			if err := schema.SetOnce(body, m.last, schema.SourceImages, frames[1]); err != nil {
				return nil, err
			}
		}
	}
	if !listed || kind != addrs.Video {
		return body, nil
	}
	if m.needsImage && body[m.image] == nil {
		return nil, fmt.Errorf("fal model %s makes videos from an image: set source_image", model)
	}
	if _, ok := body["duration"]; !ok && m.caps.DefaultDuration > 0 && m.seconds != nil {
		body["duration"] = m.seconds(m.caps.DefaultDuration)
	}
	return body, nil
}

// linesText lists the resolutions of a model by lines: "720, 1080 or
// 2160".
func linesText(res map[int64]string) string {
	ns := slices.Sorted(maps.Keys(res))
	if len(ns) == 0 {
		return "its own"
	}
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprint(n)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}
