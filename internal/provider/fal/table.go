package fal

import (
	"fmt"

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

// falFlux is what fal's FLUX endpoints take (fal.ai/models/fal-ai/flux/dev/api
// and .../flux/schnell/api): prompt, seed, num_images 1..4 (default 1),
// image_size; no negative prompt.
var falFlux = schema.FluxSchnell("num_images", "1:1", "3:4", "9:16", "4:3", "16:9")

// falKling is Kling 2.1 (standard) image to video on fal: prompt and
// image_url are required, duration is the string "5" or "10" (default
// "5"), negative_prompt and cfg_scale are optional (fal model page
// fal-ai/kling-video/v2.1/standard/image-to-video, input schema; its price
// is per second of video).
var falKling = schema.Kling21

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
	Models: map[string]schema.Caps{
		"fal-ai/flux/schnell": falFlux,
		"fal-ai/flux/dev":     falFlux,
		"fal-ai/kling-video/v2.1/standard/image-to-video": falKling,
	},
	Body: falBody,
}

// falBody maps the common attributes to fal's fields: prompt and seed as
// they are, image_number to num_images, aspect_ratio to image_size. It
// refuses sync_mode set to anything but false: with it fal answers the
// media inline, as data: URIs in the result, instead of URLs of files on
// its CDN (the model pages' input schema), and an answer that size is
// more than genform reads of one; genform follows the queue and
// downloads the files.
func falBody(model string, kind addrs.Kind, common, input map[string]any) (map[string]any, error) {
	if v, ok := input["sync_mode"]; ok && v != nil && v != false {
		return nil, &schema.InputError{Key: "sync_mode", Reason: "input sets sync_mode, with which fal returns the media inline as data URIs instead of file URLs, which genform does not keep; remove it: genform uses fal's queue and downloads the files"}
	}
	return schema.MapBody("fal", model, common, input, func(name string, v any) (string, any, error) {
		switch name {
		case schema.Prompt, schema.Seed, schema.NegativePrompt:
			return name, v, nil
		case schema.Duration:
			// Kling's duration is an enum of strings ("5", "10").
			if model == "fal-ai/kling-video/v2.1/standard/image-to-video" {
				return name, fmt.Sprint(v), nil
			}
			return name, v, nil
		case schema.SourceImage:
			return "image_url", v, nil
		case schema.ImageNumber:
			return "num_images", v, nil
		case schema.AspectRatio:
			s, _ := v.(string)
			size, known := falImageSizes[s]
			if !known {
				return "", nil, fmt.Errorf("fal model %s has no image_size for aspect_ratio %v", model, v)
			}
			return "image_size", size, nil
		}
		return "", nil, nil
	})
}
