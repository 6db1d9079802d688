package luma

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/schema"
)

// lumaAspectRatios are the aspect ratios of Luma's images and videos
// (Dream Machine OpenAPI reference, AspectRatio; lumaai-python
// types/generations/image_create_params.py and video_create_params.py).
var lumaAspectRatios = []string{"1:1", "16:9", "9:16", "4:3", "3:4", "21:9", "9:21"}

// lumaPhoton is what Luma's image models take (POST /generations/image:
// model photon-1 or photon-flash-1, prompt, aspect_ratio; OpenAPI
// ImageGenerationRequest, lumaai-node resources/generations/image.ts).
// One image a generation; no seed and no negative prompt.
var lumaPhoton = schema.Caps{
	Kinds:              []addrs.Kind{addrs.Image},
	Attrs:              []string{schema.Prompt, schema.AspectRatio},
	DefaultImageNumber: 1,
	AspectRatios:       lumaAspectRatios,
}

// lumaRay is what Luma's video models take (POST /generations/video:
// model ray-2 or ray-flash-2, prompt, aspect_ratio, resolution 540p,
// 720p, 1080p or 4k, duration "5s" or "9s", loop, keyframes frame0 and
// frame1; OpenAPI GenerationRequest, lumaai-node
// resources/generations/generations.ts). The reference names no default
// duration; genform counts an unset one as 5 seconds, the shorter of the
// two it lists. No seed and no negative prompt.
var lumaRay = schema.Caps{
	Kinds:           []addrs.Kind{addrs.Video},
	Attrs:           []string{schema.Prompt, schema.AspectRatio, schema.Resolution, schema.Duration, schema.SourceImage, schema.SourceImages},
	Durations:       []int64{5, 9},
	DefaultDuration: 5,
	AspectRatios:    lumaAspectRatios,
	MaxSourceImages: 2,
	Counted:         []string{"duration"},
}

// Table is the provider's capability table, which the one list of
// providers (package provider/all) registers.
var Table = &schema.Provider{
	Name:  "luma",
	Title: "Luma",
	// Both official clients read LUMAAI_API_KEY (lumaai-python
	// _client.py, lumaai-node index.ts).
	KeyEnv:  "LUMAAI_API_KEY",
	BaseURL: "https://api.lumalabs.ai/dream-machine/v1",
	// GET /generations lists the account's generations (limit, offset),
	// each with its request and created_at (OpenAPI listGenerations,
	// Generation).
	Recovery: schema.RecoverByListing,
	// DELETE /generations/{id} "removes" a generation (OpenAPI
	// deleteGeneration, 204); the reference says nothing of stopping
	// or refunding a running one, so it is not taken for a cancel.
	Cancel: false,
	// The reference names no lifetime for the asset URLs.
	URLLifetime: "not documented",
	// A key frame is an image URL or a generation id, never image
	// bytes (OpenAPI Keyframe, ImageReference).
	SourceURLsOnly: true,
	// Build tier: Ray (video) 10 concurrent generations and 20 create
	// requests a minute; Photon (images) 40 and 80 (docs.lumalabs.ai,
	// Rate Limits). genform's one budget per provider takes the
	// tighter family's.
	Limits:  schema.Limits{Parallelism: 10, RequestsPerMinute: 20},
	General: schema.PromptOnly([]addrs.Kind{addrs.Image, addrs.Video}, "duration"),
	// The models the newest official client lists (lumaai 1.19.1 of
	// 2026-01-17, the newest on npm on 2026-12-07: ImageCreateParams and
	// GenerationCreateParams); Luma announces no retirement of them.
	// Luma's newer models (ray-3.2, uni-1, uni-1-max) are on its Agents
	// API, a provider of its own (package provider/lumaagents).
	Models: map[string]schema.Caps{
		"photon-1":       lumaPhoton,
		"photon-flash-1": lumaPhoton,
		"ray-2":          lumaRay,
		"ray-flash-2":    lumaRay,
	},
	Body:   lumaBody,
	Pixels: lumaPixels,
}

// lumaPixels is the frame of a video request of a listed model: its
// resolution in the shape of its aspect ratio (taken as 16:9 when
// unset: the price follows the lines, not the shape). The reference
// names no default resolution, so a request without one is not told;
// nor is an image's size.
func lumaPixels(model string, kind addrs.Kind, body map[string]any) (int, int, bool) {
	r, _ := body["resolution"].(string)
	lines, ok := schema.LinesOf(r)
	if kind != addrs.Video || !ok {
		return 0, 0, false
	}
	aspect, _ := body["aspect_ratio"].(string)
	if aspect == "" {
		aspect = "16:9"
	}
	return schema.FrameOf(lines, aspect)
}

// lumaResolutions maps resolution, in lines, to Luma's values (OpenAPI
// VideoModelOutputResolution: 540p, 720p, 1080p, 4k; 4k read as 2160
// lines).
var lumaResolutions = map[int64]string{540: "540p", 720: "720p", 1080: "1080p", 2160: "4k"}

// lumaBody maps the common attributes to Luma's fields: prompt and
// aspect_ratio as they are, duration to "5s" or "9s", resolution to
// "720p" and the like, and source_image (frame0) or source_images
// (frame0, frame1) to keyframes. The body is the request without its
// model, which the adapter adds from the target.
func lumaBody(model string, kind addrs.Kind, common, input map[string]any) (map[string]any, error) {
	if _, one := common[schema.SourceImage]; one {
		if _, many := common[schema.SourceImages]; many {
			return nil, errors.New("source_image and source_images both set Luma's keyframes; set one")
		}
	}
	if _, ok := input["model"]; ok {
		return nil, errors.New(`input sets "model", which the block's model sets; set it once`)
	}
	return schema.MapBody("Luma", model, common, input, func(name string, v any) (string, any, error) {
		switch name {
		case schema.Prompt, schema.AspectRatio:
			return name, v, nil
		case schema.Duration:
			n, ok := schema.WholeValue(v)
			if !ok {
				return "", nil, fmt.Errorf("duration %v is not a whole number of seconds", v)
			}
			return name, fmt.Sprintf("%ds", n), nil
		case schema.Resolution:
			n, ok := schema.WholeValue(v)
			r, known := lumaResolutions[n]
			if !ok || !known {
				return "", nil, fmt.Errorf("model %s makes videos of 540, 720, 1080 or 2160 (4k) lines; resolution %v is none of those", model, v)
			}
			return name, r, nil
		case schema.SourceImage:
			f, err := lumaKeyframe(schema.SourceImage, v)
			if err != nil {
				return "", nil, err
			}
			return "keyframes", map[string]any{"frame0": f}, nil
		case schema.SourceImages:
			list, _ := v.([]any)
			if len(list) == 0 || len(list) > 2 {
				return "", nil, fmt.Errorf("model %s takes one or two key frames (frame0, frame1); source_images holds %d", model, len(list))
			}
			frames := map[string]any{}
			for i, e := range list {
				f, err := lumaKeyframe(fmt.Sprintf("%s[%d]", schema.SourceImages, i), e)
				if err != nil {
					return "", nil, err
				}
				frames[fmt.Sprintf("frame%d", i)] = f
			}
			return "keyframes", frames, nil
		}
		return "", nil, nil
	})
}

// lumaGenerationID is a Luma generation id: a UUID (OpenAPI
// GenerationReference.id, format uuid).
var lumaGenerationID = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// lumaKeyframe is the keyframe of a source image: an http(s) URL is an
// image Luma fetches ({type: image, url}); a generation id (an earlier
// Luma generation's generation_id) is that generation ({type:
// generation, id}): the reference's examples name video generations
// there (extend, interpolate), so a Luma image is best given by its
// output's media_url. Luma takes no image bytes inline (OpenAPI
// ImageReference has only a url), so anything else, a data: URI above
// all, is refused here, at validate when the value is known.
func lumaKeyframe(attr string, v any) (map[string]any, error) {
	s, _ := v.(string)
	if lumaGenerationID.MatchString(s) {
		return map[string]any{"type": "generation", "id": s}, nil
	}
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(s)), "data:") {
		return nil, fmt.Errorf("%s is a data: URI, and Luma takes key frames only as http(s) URLs it fetches or the ids of its own generations; use the URL of an image, such as an output's media_url", attr)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s is neither an http(s) URL nor the generation_id of a Luma generation", attr)
	}
	return map[string]any{"type": "image", "url": s}, nil
}
