package lumaagents

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/schema"
)

// The aspect ratios of the image models (GenerationCreateParams
// aspect_ratio, luma-agents-typescript src/resources/generations.ts) and
// the subset ray-3.2 makes ("ray-3.2 video models support the subset
// 9:16, 3:4, 1:1, 4:3, 16:9, 21:9", the API reference's aspect_ratio).
var (
	imageAspectRatios = []string{"3:1", "2:1", "21:9", "16:9", "3:2", "4:3", "1:1", "3:4", "2:3", "9:16", "1:2", "1:3"}
	videoAspectRatios = []string{"9:16", "3:4", "1:1", "4:3", "16:9", "21:9"}
)

// uni is what the image models take (uni-1 and uni-1-max share "the same
// wire format and parameter set", Models): prompt, aspect_ratio, and a
// source image, which makes the request an image_edit. One image a
// generation; no seed and no negative prompt. Prices, per image at 2K,
// from docs.agents.lumalabs.ai, Pricing (pay-as-you-go, read
// 2026-12-07): uni-1 $0.0404 text to image, $0.0434 an edit or one
// reference image, $0.0030 more for each further reference (up to
// $0.0674 for nine); uni-1-max $0.1000 text to image, $0.1030 an edit or
// one reference image.
var uni = schema.Caps{
	Kinds:              []addrs.Kind{addrs.Image},
	Attrs:              []string{schema.Prompt, schema.AspectRatio, schema.SourceImage},
	DefaultImageNumber: 1,
	AspectRatios:       imageAspectRatios,
}

// ray32 is what ray-3.2 takes (type video; VideoOptions: duration "5s"
// or "10s", resolution 540p, 720p or 1080p, start_frame and end_frame):
// prompt, aspect_ratio, resolution, duration, and one or two key frames
// (source_image is the start frame; source_images the start and end
// frames). The reference names no default duration; genform counts an
// unset one as 5 seconds, the shorter of the two. Luma prices a video by
// request type, resolution, dynamic range and duration (Pricing, read
// 2026-12-07); its per-video table for ray-3.2 was not in reach of this
// repository's sources, so none is quoted here.
var ray32 = schema.Caps{
	Kinds:           []addrs.Kind{addrs.Video},
	Attrs:           []string{schema.Prompt, schema.AspectRatio, schema.Resolution, schema.Duration, schema.SourceImage, schema.SourceImages},
	Durations:       []int64{5, 10},
	DefaultDuration: 5,
	AspectRatios:    videoAspectRatios,
	MaxSourceImages: 2,
}

// Table is the provider's capability table, which the one list of
// providers (package provider/all) registers.
var Table = &schema.Provider{
	Name:  "luma_agents",
	Title: "Luma Agents",
	// Both official clients read LUMA_AGENTS_API_KEY (luma-agents-
	// typescript src/client.ts, luma-agents-python _client.py).
	KeyEnv:  "LUMA_AGENTS_API_KEY",
	BaseURL: PublicURL,
	// The API has two endpoints, create and get (the clients' api.md):
	// no list to find a lost create in, no cancel.
	Recovery: schema.RecoverNone,
	Cancel:   false,
	// GenerationOutput.url: "Presigned URL (1hr expiry)".
	URLLifetime: "1 hour (a new read of the generation gives fresh URLs)",
	// Both limits, requests a minute and concurrent jobs, depend on the
	// plan and are shown only in Luma's dashboard (Rate limits): none is
	// documented.
	Limits:  schema.Limits{},
	General: schema.PromptOnly([]addrs.Kind{addrs.Image, addrs.Video}),
	Models: map[string]schema.Caps{
		"uni-1":     uni,
		"uni-1-max": uni,
		"ray-3.2":   ray32,
	},
	Body:   body,
	Pixels: pixels,
}

// pixels is the frame of a video request of a listed model: its
// resolution (video.resolution) in the shape of its aspect ratio (16:9
// when unset). The reference names no default resolution, so a request
// without one is not told; nor is an image's size.
func pixels(model string, kind addrs.Kind, b map[string]any) (int, int, bool) {
	v, _ := b["video"].(map[string]any)
	r, _ := v["resolution"].(string)
	lines, ok := schema.LinesOf(r)
	if kind != addrs.Video || !ok {
		return 0, 0, false
	}
	aspect, _ := b["aspect_ratio"].(string)
	if aspect == "" {
		aspect = "16:9"
	}
	return schema.FrameOf(lines, aspect)
}

// resolutions maps resolution, in lines, to Luma's values (VideoResolution).
var resolutions = map[int64]string{540: "540p", 720: "720p", 1080: "1080p"}

// body maps the common attributes to Luma's fields: prompt and
// aspect_ratio as they are; on an image model source_image to source
// (an edit); on ray-3.2 duration and resolution to video.duration ("5s")
// and video.resolution ("720p"), and source_image (start) or
// source_images (start, end) to video.start_frame and video.end_frame.
// Input passes through; its video object is merged with the one the
// common attributes make, a key set by both refused. The body is the
// request without its model and type, which the adapter adds.
func body(model string, kind addrs.Kind, common, input map[string]any) (map[string]any, error) {
	if _, one := common[schema.SourceImage]; one {
		if _, many := common[schema.SourceImages]; many {
			return nil, errors.New("source_image and source_images both set Luma's key frames; set one")
		}
	}
	if _, ok := input["model"]; ok {
		return nil, errors.New(`input sets "model", which the block's model sets; set it once`)
	}
	video := map[string]any{}
	if v, ok := input["video"]; ok {
		m, isObject := v.(map[string]any)
		if !isObject {
			return nil, &schema.InputError{Key: "video", Reason: "input.video is Luma's video options, an object"}
		}
		if _, ok := m["duration"]; ok {
			return nil, &schema.InputError{Key: "video", Reason: "input.video.duration sets the length Luma charges for, which the plan counts from the block's duration; set duration instead"}
		}
		for k, x := range m {
			video[k] = x
		}
	}
	b, err := schema.MapBody("Luma", model, common, input, func(name string, v any) (string, any, error) {
		switch name {
		case schema.Prompt, schema.AspectRatio:
			return name, v, nil
		case schema.Duration:
			n, ok := schema.WholeValue(v)
			if !ok {
				return "", nil, fmt.Errorf("duration %v is not a whole number of seconds", v)
			}
			return videoKey + "duration", fmt.Sprintf("%ds", n), nil
		case schema.Resolution:
			n, ok := schema.WholeValue(v)
			r, known := resolutions[n]
			if !ok || !known {
				return "", nil, fmt.Errorf("model %s makes videos of 540, 720 or 1080 lines; resolution %v is none of those", model, v)
			}
			return videoKey + "resolution", r, nil
		case schema.SourceImage:
			f, err := mediaRef(schema.SourceImage, v)
			if err != nil {
				return "", nil, err
			}
			if kind == addrs.Video {
				return videoKey + "start_frame", f, nil
			}
			return "source", f, nil
		case schema.SourceImages:
			list, _ := v.([]any)
			if len(list) == 0 || len(list) > 2 {
				return "", nil, fmt.Errorf("model %s takes one or two key frames (start, end); source_images holds %d", model, len(list))
			}
			frames := map[string]any{}
			for i, e := range list {
				f, err := mediaRef(fmt.Sprintf("%s[%d]", schema.SourceImages, i), e)
				if err != nil {
					return "", nil, err
				}
				frames[[]string{"start_frame", "end_frame"}[i]] = f
			}
			return videoKey + "frames", frames, nil
		}
		return "", nil, nil
	})
	if err != nil {
		return nil, err
	}
	// The video options the common attributes set go into input's video
	// object, each once.
	for k, x := range b {
		sub, ok := strings.CutPrefix(k, videoKey)
		if !ok {
			continue
		}
		delete(b, k)
		set := map[string]any{sub: x}
		if sub == "frames" {
			set = x.(map[string]any)
		}
		for key, val := range set {
			if _, ok := video[key]; ok {
				return nil, fmt.Errorf("input sets video.%s, which a common attribute sets too; set it once", key)
			}
			video[key] = val
		}
	}
	if len(video) > 0 {
		b["video"] = video
	}
	return b, nil
}

// videoKey marks, in the body MapBody builds, a field of the video
// options, moved there once it is built.
const videoKey = "\x00video."

// generationID is a Luma generation id: a UUID (ImageRef.generation_id,
// "UUID of a prior generation owned by the same caller").
var generationID = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// mediaRef is the media reference of a source image (ImageRef: exactly
// one of url, data and generation_id): a generation id chains from that
// generation; a data: URI is sent inline, base64 with its media_type
// ("Required with data"); an http(s) URL is one Luma fetches.
func mediaRef(attr string, v any) (map[string]any, error) {
	s, _ := v.(string)
	if generationID.MatchString(s) {
		return map[string]any{"generation_id": s}, nil
	}
	if rest, ok := strings.CutPrefix(s, "data:"); ok {
		meta, data, found := strings.Cut(rest, ",")
		mediaType, isBase64 := strings.CutSuffix(meta, ";base64")
		if !found || !isBase64 || mediaType == "" || data == "" {
			return nil, fmt.Errorf("%s is a data: URI that is not base64 with its media type, which Luma needs", attr)
		}
		return map[string]any{"data": data, "media_type": mediaType}, nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s is neither an http(s) URL, a data: URI nor the generation_id of a Luma generation", attr)
	}
	return map[string]any{"url": s}, nil
}
