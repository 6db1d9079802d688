package openai

import (
	"fmt"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/schema"
)

// openaiSizes maps aspect_ratio to the sizes every GPT image model makes
// (Images API reference, createImage, size: "The standard sizes
// 1024x1024, 1536x1024, and 1024x1536 are supported by the GPT image
// models"). Other sizes, which some models take, are set in input.
var openaiSizes = map[string]string{
	"1:1": "1024x1024",
	"3:2": "1536x1024",
	"2:3": "1024x1536",
}

// openaiImage is what a GPT image model takes on POST
// /v1/images/generations (Images API reference, createImage): prompt; n,
// from 1 to 10 (default 1); size. It takes no seed and no negative
// prompt. quality, background, output_format and the rest pass through
// input. With source_image or source_images it starts from those images,
// on POST /v1/images/edits: every GPT image model edits ("This endpoint
// supports GPT Image models", createImageEdit), from "up to 16 images",
// each "a png, webp, or jpg file less than 50MB" (CreateImageEditRequest,
// image; openai-python api_reference/openapi.transformed.yml and
// openai-node src/resources/images.ts, read 2026-12-07).
var openaiImage = schema.Caps{
	Kinds:              []addrs.Kind{addrs.Image},
	Attrs:              []string{schema.Prompt, schema.AspectRatio, schema.ImageNumber, schema.SourceImage, schema.SourceImages},
	ImageNumbers:       []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
	DefaultImageNumber: 1,
	AspectRatios:       []string{"1:1", "3:2", "2:3"},
	MaxSourceImages:    maxSourceImages,
	Counted:            []string{"n"},
}

// maxSourceImages is how many images an edit starts from: "You can
// provide up to 16 images" (CreateImageEditRequest, image).
const maxSourceImages = 16

// openaiModels are the GPT image models OpenAI serves on the Images API,
// each with its dated snapshots, which take what their model takes
// (Provider.Caps), future ones too:
//
//   - gpt-image-2 and gpt-image-2-2026-04-21 (the Images API reference's
//     model list, openai-node src/resources/images.ts ImageModel, read
//     2026-12-07; the model page names the snapshot its default);
//   - gpt-image-2.5-sunburst and gpt-image-2.5-flare, each with its
//     2026-09-08 snapshot (their model pages);
//   - gpt-image-2.6-sunburst (its model page,
//     developers.openai.com/api/docs/models/gpt-image-2.6-sunburst, read
//     2026-12-07: image generation and editing on v1/images/generations
//     and v1/images/edits, one snapshot of the same name) and
//     gpt-image-2.6-flare (named beside it as the replacement of the
//     models shut down on 2026-12-01, deprecations page, read 2026-12-07).
var openaiModels = []string{
	"gpt-image-2",
	"gpt-image-2.5-sunburst",
	"gpt-image-2.5-flare",
	"gpt-image-2.6-sunburst",
	"gpt-image-2.6-flare",
}

// openaiRetired are the GPT image models OpenAI has retired or announced
// the retirement of, with their dates and the replacement it names, from
// its deprecations page (developers.openai.com/api/docs/deprecations, the
// table of upcoming deprecations, read 2026-12-07): gpt-image-1.5 (with
// its snapshot gpt-image-1.5-2025-12-16), gpt-image-1-mini and
// chatgpt-image-latest, notice 2026-06-02, shutdown 2026-12-01,
// recommended replacement "gpt-image-2.6-sunburst or
// gpt-image-2.6-flare". gpt-image-1 shut down on 2026-10-23 (its model
// page, as this table said before); the pages read name no successor of
// it that OpenAI still serves, so none is given. They stay listed so
// that validate names the date (and the successor) instead of taking
// them for unknown models; OpenAI answers a request with a model it shut
// down 404 model_not_found (as it answers any model it does not serve),
// a refusal that makes nothing.
var openaiRetired = map[string]struct {
	deprecated, shutDown schema.Date
	successor            string
}{
	"gpt-image-1.5":        {"2026-06-02", "2026-12-01", "gpt-image-2.6-sunburst or gpt-image-2.6-flare"},
	"gpt-image-1-mini":     {"2026-06-02", "2026-12-01", "gpt-image-2.6-sunburst or gpt-image-2.6-flare"},
	"chatgpt-image-latest": {"2026-06-02", "2026-12-01", "gpt-image-2.6-sunburst or gpt-image-2.6-flare"},
	"gpt-image-1":          {"", "2026-10-23", ""},
}

// tableModels are the models of the table, by id.
func tableModels() map[string]schema.Caps {
	models := make(map[string]schema.Caps, len(openaiModels)+len(openaiRetired))
	for _, m := range openaiModels {
		models[m] = openaiImage
	}
	for m, r := range openaiRetired {
		c := openaiImage
		c.Deprecated, c.ShutDown, c.Successor = r.deprecated, r.shutDown, r.successor
		models[m] = c
	}
	return models
}

// Table is the provider's capability table, which the one list of
// providers (package provider/all) registers.
var Table = &schema.Provider{
	Name:   "openai",
	Title:  "OpenAI",
	KeyEnv: "OPENAI_API_KEY",
	// The API's public address; its paths start with /v1 (Images API
	// reference, createImage: POST https://api.openai.com/v1/images/generations).
	BaseURL: "https://api.openai.com",
	// The Images API answers with the images and keeps no job: there
	// is nothing to look up, or to list.
	Recovery: schema.RecoverNone,
	// The request is synchronous: nothing runs on after its answer.
	Cancel: false,
	// GPT image models answer the images inline, base64-encoded
	// (Images API reference: response_format "isn't supported for the
	// GPT image models, which always return base64-encoded images").
	URLLifetime: "none: the images come inline in the answer",
	// POST /v1/images/generations answers with the images once they
	// are made (no job to follow): high quality can take minutes.
	Synchronous:   true,
	InlineOutputs: true,
	// 5 images a minute at tier 1, up to 250 at tier 5 (the model
	// pages' rate limits: gpt-image-2, gpt-image-2.5-flare). Every
	// request is a create but the key's check, so tier 1's images a
	// minute is the request rate; a higher tier sets
	// requests_per_minute in the provider block. OpenAI documents no
	// concurrency limit.
	Limits:  schema.Limits{RequestsPerMinute: 5},
	General: schema.PromptOnly([]addrs.Kind{addrs.Image}),
	Models:  tableModels(),
	Body:    openaiBody,
	Pixels:  openaiPixels,
}

// openaiPixels is the size a request asks for: its size, WIDTHxHEIGHT;
// not told for "auto" (the default), which the model picks.
func openaiPixels(model string, kind addrs.Kind, body map[string]any) (int, int, bool) {
	s, _ := body["size"].(string)
	return schema.SizeOf(s, "x")
}

// openaiBody maps the common attributes to the fields of POST
// /v1/images/generations: prompt as it is, image_number to n,
// aspect_ratio to size; and source_image (one image) or source_images
// (a list of up to 16) to image, the field of POST /v1/images/edits,
// where the adapter sends a request that has one, each image as a file
// (an http(s) URL, or a data: URI such as file_data_uri() or an OpenAI
// image's output make). The adapter adds the model. It refuses, in input,
// model (the block's model is sent), and stream and partial_images: the
// answer is read whole, as JSON, not as a stream of events.
func openaiBody(model string, kind addrs.Kind, common, input map[string]any) (map[string]any, error) {
	if kind != addrs.Image {
		return nil, fmt.Errorf("OpenAI's Images API makes images, not %s", kind)
	}
	if _, ok := input["model"]; ok {
		return nil, &schema.InputError{Key: "model", Reason: "input sets model, which the block's model sets; leave it out of input"}
	}
	if v, ok := input["stream"]; ok && v != false {
		return nil, &schema.InputError{Key: "stream", Reason: "input sets stream: genform reads the images from the whole answer, not from a stream of events; leave it out of input"}
	}
	if _, ok := input["partial_images"]; ok {
		return nil, &schema.InputError{Key: "partial_images", Reason: "input sets partial_images, which only a streamed answer has; leave it out of input"}
	}
	_, one := common[schema.SourceImage]
	_, many := common[schema.SourceImages]
	if one && many {
		return nil, fmt.Errorf("OpenAI model %s starts an edit from source_image or from source_images; set one of them", model)
	}
	return schema.MapBody("OpenAI", model, common, input, func(name string, v any) (string, any, error) {
		switch name {
		case schema.Prompt:
			return "prompt", v, nil
		case schema.ImageNumber:
			return "n", v, nil
		case schema.AspectRatio:
			s, _ := v.(string)
			size, known := openaiSizes[s]
			if !known {
				return "", nil, fmt.Errorf("OpenAI model %s has no standard size for aspect_ratio %v; set size in input", model, v)
			}
			return "size", size, nil
		case schema.SourceImage:
			if why := sourceImage(v); why != "" {
				return "", nil, fmt.Errorf("source_image %s", why)
			}
			return "image", v, nil
		case schema.SourceImages:
			list, _ := v.([]any)
			if len(list) == 0 || len(list) > maxSourceImages {
				return "", nil, fmt.Errorf("OpenAI model %s edits 1 to %d source_images, not %d", model, maxSourceImages, len(list))
			}
			for i, e := range list {
				if why := sourceImage(e); why != "" {
					return "", nil, fmt.Errorf("source_images[%d] %s", i, why)
				}
			}
			return "image", list, nil
		}
		return "", nil, nil
	})
}

// sourceImage says why v cannot be an image an edit starts from, or "":
// an http(s) URL, which the adapter fetches, or a data:image/…;base64 URI.
func sourceImage(v any) string {
	s, ok := v.(string)
	if !ok {
		return "must be a string: an http(s) URL or a data:image/<type>;base64,<data> URI"
	}
	return schema.CheckSourceImage(s)
}
