package replicate

import (
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/schema"
)

// replicateFluxSchnell is what black-forest-labs/flux-schnell takes
// (replicate.com/black-forest-labs/flux-schnell/api, its input schema):
// prompt, seed, num_outputs 1..4 (default 1), aspect_ratio (default 1:1).
var replicateFluxSchnell = schema.FluxSchnell("num_outputs",
	"1:1", "16:9", "21:9", "3:2", "2:3", "4:5", "5:4", "3:4", "4:3", "9:16", "9:21")

// replicateFluxDev is what black-forest-labs/flux-dev takes: prompt,
// seed, aspect_ratio (default 1:1, the same eleven ratios as schnell),
// num_outputs 1..4 (default 1), megapixels "1" or "0.25", guidance,
// go_fast (a prediction's page on replicate.com shows its input fields;
// the ranges as a reproduction of its API schema gives them,
// cinemasetfree.com/guides/generators/black-forest-labs/flux-dev; read
// 2026-12-07).
var replicateFluxDev = schema.FluxSchnell("num_outputs",
	"1:1", "16:9", "21:9", "3:2", "2:3", "4:5", "5:4", "3:4", "4:3", "9:16", "9:21")

// replicateVeo3Fast is google/veo-3-fast (replicate.com, its API page's
// input schema, read 2026-12-07): prompt, aspect_ratio (default 16:9),
// duration (default 8), image (the first frame), negative_prompt,
// resolution (default 720p), generate_audio (default true), seed. The
// page names no durations or resolutions but the defaults, so genform
// checks none, sends the duration it counts, and leaves resolution to
// input.
var replicateVeo3Fast = schema.Caps{
	Kinds:           []addrs.Kind{addrs.Video},
	Attrs:           []string{schema.Prompt, schema.NegativePrompt, schema.Seed, schema.AspectRatio, schema.Duration, schema.SourceImage},
	DefaultDuration: 8,
	Counted:         []string{"duration"},
}

// replicateImageField is the input field of a listed model's source
// image: Kling's start_image, Veo's image.
var replicateImageField = map[string]string{
	"kwaivgi/kling-v2.1": "start_image",
	"google/veo-3-fast":  "image",
}

// replicateKling is Kling v2.1 on Replicate: start_image is required
// (the first frame), duration is 5 or 10 seconds (default 5), mode
// "standard" (720p) or "pro" (1080p, which end_image needs), and
// negative_prompt is optional (replicate.com/kwaivgi/kling-v2.1, API
// input schema).
var replicateKling = schema.Kling21

// Table is the provider's capability table, which the one list of
// providers (package provider/all) registers.
var Table = &schema.Provider{
	Name:    "replicate",
	Title:   "Replicate",
	KeyEnv:  "REPLICATE_API_TOKEN",
	BaseURL: "https://api.replicate.com",
	// GET /v1/predictions lists the account's predictions, newest
	// first, filtered by created_after and created_before (HTTP API
	// reference, predictions.list).
	Recovery: schema.RecoverByListing,
	// POST /v1/predictions/{id}/cancel (HTTP API reference).
	Cancel: true,
	// Inputs, outputs and their files of API predictions are removed
	// after an hour (HTTP API reference, predictions.get).
	URLLifetime: "1 hour",
	// 600 prediction creates a minute; Replicate documents no
	// concurrency limit (docs: Rate limits).
	Limits:  schema.Limits{RequestsPerMinute: 600},
	General: schema.PromptOnly([]addrs.Kind{addrs.Image, addrs.Video}, "duration"),
	Models: map[string]schema.Caps{
		"black-forest-labs/flux-schnell": replicateFluxSchnell,
		"black-forest-labs/flux-dev":     replicateFluxDev,
		"kwaivgi/kling-v2.1":             replicateKling,
		"google/veo-3-fast":              replicateVeo3Fast,
	},
	Body: replicateBody,
}

// replicateBody maps the common attributes to the model's input fields:
// prompt, seed and aspect_ratio as they are, image_number to
// num_outputs. The body is the model's input; the adapter wraps it in
// the create request.
func replicateBody(model string, kind addrs.Kind, common, input map[string]any) (map[string]any, error) {
	body, err := schema.MapBody("Replicate", model, common, input, func(name string, v any) (string, any, error) {
		switch name {
		case schema.Prompt, schema.Seed, schema.AspectRatio, schema.NegativePrompt, schema.Duration:
			return name, v, nil
		case schema.SourceImage:
			if f, ok := replicateImageField[model]; ok {
				return f, v, nil
			}
			return "start_image", v, nil
		case schema.ImageNumber:
			return "num_outputs", v, nil
		}
		return "", nil, nil
	})
	if err != nil {
		return nil, err
	}
	// Veo's duration is sent when unset too, so that plan counts what
	// it makes.
	if model == "google/veo-3-fast" {
		if _, set := body["duration"]; !set {
			body["duration"] = float64(replicateVeo3Fast.DefaultDuration)
		}
	}
	return body, nil
}
