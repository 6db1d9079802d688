package runway

import (
	"math"
	"strconv"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/schema"
)

// The models below are those @runwayml/sdk 4.20.1 lists beside the gen4
// and Veo 3.1 models of table.go (src/resources/text-to-image.ts,
// image-to-video.ts and text-to-video.ts, one parameters interface a
// model; read 2026-12-07). Each takes, at each endpoint, the fields its
// interface there gives it: genform maps a common attribute only to a
// field the interface has, and the oracle's type check holds every
// request the table builds to those interfaces.

// tiers are the resolutions a pixel ratio is sorted into, by its pixels:
// the nearest (on a log scale) of 480p, 720p, 1080p, 1440p and 2160p
// frames at 16:9. Runway lists each model's ratios by these tiers (the
// 720p square is 960:960, as many pixels as 1280:720).
var tiers = []int64{480, 720, 1080, 1440, 2160}

// tierOf is the tier of a w by h frame.
func tierOf(w, h int) int64 {
	best, dist := tiers[0], math.Inf(1)
	for _, t := range tiers {
		px := float64(t) * float64(t) * 16 / 9
		if d := math.Abs(math.Log(float64(w) * float64(h) / px)); d < dist {
			best, dist = t, d
		}
	}
	return best
}

// aspects are the aspect ratios genform names a pixel ratio by: the one
// within 3% of its shape.
var aspects = []string{"1:1", "16:9", "9:16", "4:3", "3:4", "3:2", "2:3", "21:9", "9:21", "5:4", "4:5"}

// aspectOf is the aspect ratio of a w by h frame, or "" when it is none
// of aspects (Runway's 2:1 and 1:4 ratios, for instance).
func aspectOf(w, h int) string {
	got := float64(w) / float64(h)
	for _, a := range aspects {
		x, y, _ := schema.SizeOf(a, ":")
		if want := float64(x) / float64(y); math.Abs(got/want-1) <= 0.03 {
			return a
		}
	}
	return ""
}

// pixelRatios sorts the pixel ratios a model's type lists, in the
// client's order, into ratios by tier and aspect ratio (the first listed
// of each), and first, the first listed of each aspect ratio in any
// tier. Values that are no size ("auto", "auto_1k") are left to
// input.ratio.
func pixelRatios(list ...string) (byTier map[int64]map[string]string, first map[string]string) {
	byTier, first = map[int64]map[string]string{}, map[string]string{}
	for _, r := range list {
		w, h, ok := schema.SizeOf(r, ":")
		if !ok {
			continue
		}
		a := aspectOf(w, h)
		if a == "" {
			continue
		}
		t := tierOf(w, h)
		if byTier[t] == nil {
			byTier[t] = map[string]string{}
		}
		if _, seen := byTier[t][a]; !seen {
			byTier[t][a] = r
		}
		if _, seen := first[a]; !seen {
			first[a] = r
		}
	}
	return byTier, first
}

// The forms a model's type gives its size in.
const (
	// ratioPixels: ratio, the frame in pixels ("1280:720").
	ratioPixels = iota
	// ratioAspect: ratio, the aspect ratio itself ("16:9").
	ratioAspect
	// ratioNone: no ratio; the frame follows the source image, or the
	// resolution alone.
	ratioNone
)

// videoModel builds a video model's row: attrs are the common attributes
// its types take; ratios, in the client's order, are its pixel ratios
// (or, for ratioAspect, its aspect ratios).
func videoModel(attrs []string, durations []int64, form int, ratios ...string) runwayModel {
	m := runwayModel{
		caps: schema.Caps{
			Kinds:           []addrs.Kind{addrs.Video},
			Attrs:           attrs,
			Durations:       durations,
			DefaultDuration: 5,
			Counted:         []string{"duration"},
		},
		ratioForm: form,
	}
	if m.caps.Takes(schema.SourceImages) {
		m.caps.MaxSourceImages = 2
	}
	switch form {
	case ratioPixels:
		m.ratios, m.firstRatio = pixelRatios(ratios...)
		m.caps.AspectRatios = aspectsOf(m.ratios)
		m.defaultRes = 720
		if m.ratios[720] == nil {
			w, h, _ := schema.SizeOf(ratios[0], ":")
			m.defaultRes = tierOf(w, h)
		}
	case ratioAspect:
		for _, r := range ratios {
			if _, _, ok := schema.SizeOf(r, ":"); ok {
				m.caps.AspectRatios = append(m.caps.AspectRatios, r)
			}
		}
	}
	return m
}

// imageModel builds an image model's row; counts are the outputCount
// values its type allows (nil: one image a request, unless input's
// outputCount, which the planner counts, asks for more).
func imageModel(attrs []string, counts []int64, ratios ...string) runwayModel {
	m := runwayModel{caps: schema.Caps{Kinds: []addrs.Kind{addrs.Image}, Attrs: attrs}}
	m.ratios, m.firstRatio = pixelRatios(ratios...)
	m.caps.AspectRatios = aspectsOf(m.ratios)
	w, h, _ := schema.SizeOf(ratios[0], ":")
	m.defaultRes = tierOf(w, h)
	if counts != nil {
		m.caps.ImageNumbers, m.caps.DefaultImageNumber = counts, 1
		m.caps.Counted = []string{"outputCount"}
	}
	return m
}

// resolutionValues maps a resolution in lines to the value a model's
// resolution field takes.
func resolutionValues(lines ...int64) map[int64]string {
	out := map[int64]string{}
	for _, l := range lines {
		out[l] = strconv.FormatInt(l, 10) + "p"
	}
	return out
}

func seconds(from, to int64) []int64 {
	var out []int64
	for s := from; s <= to; s++ {
		out = append(out, s)
	}
	return out
}

var (
	// imageAttrs are what every image model takes; gen4 adds seed.
	imageAttrs = []string{schema.Prompt, schema.AspectRatio}
	countAttrs = []string{schema.Prompt, schema.AspectRatio, schema.ImageNumber}
	// frameAttrs: a video from text, a first frame, or a first and a
	// last frame.
	frameAttrs = []string{schema.Prompt, schema.AspectRatio, schema.Resolution, schema.Duration, schema.SourceImage, schema.SourceImages}
	seedFrame  = []string{schema.Prompt, schema.Seed, schema.AspectRatio, schema.Resolution, schema.Duration, schema.SourceImage, schema.SourceImages}
)

// gptImageRatios are gpt_image_2's and GPT Image 2.5's ratios.
var gptImageRatios = []string{"2048:880", "1920:1088", "1920:1280", "1920:1440", "1920:1536", "1920:1920", "1536:1920", "1440:1920", "1280:1920", "1088:1920", "2912:1248", "2560:1440", "2560:1712", "2560:1920", "2560:2048", "2560:2560", "2048:2560", "1920:2560", "1712:2560", "1440:2560", "3840:1648", "3840:2160", "3504:2336", "3264:2448", "3200:2560", "2880:2880", "2560:3200", "2448:3264", "2336:3504", "2160:3840"}

// geminiImageRatios are gemini_image3_pro's (gemini_2.5_flash takes the
// first ten, its 1K tier).
var geminiImageRatios = []string{"1344:768", "768:1344", "1024:1024", "1184:864", "864:1184", "1536:672", "832:1248", "1248:832", "896:1152", "1152:896", "2048:2048", "1696:2528", "2528:1696", "1792:2400", "2400:1792", "1856:2304", "2304:1856", "1536:2752", "2752:1536", "3168:1344", "4096:4096", "3392:5056", "5056:3392", "3584:4800", "4800:3584", "3712:4608", "4608:3712", "3072:5504", "5504:3072", "6336:2688"}

var seedanceLiteRatios = []string{"992:432", "864:496", "752:560", "640:640", "560:752", "496:864", "1470:630", "1280:720", "1112:834", "960:960", "834:1112", "720:1280"}

var wanRatios = []string{"832:480", "720:544", "624:624", "544:720", "480:832", "1280:720", "1104:832", "960:960", "832:1104", "720:1280", "1920:1080", "1648:1248", "1440:1440", "1248:1648", "1080:1920"}

// newModels are the rows of the models the client lists beside gen4 and
// Veo 3.1. Where the client's types name no lengths (duration typed as a
// number), genform takes any whole number of seconds and sends 5 when
// duration is unset: the client names no default.
func newModels() map[string]runwayModel {
	out := map[string]runwayModel{
		// Images: promptText and ratio required; referenceImages
		// optional (input.referenceImages); no seed.
		"gpt_image_2":            imageModel(countAttrs, seconds(1, 10), gptImageRatios...),
		"gpt_image_2_5_flare":    imageModel(countAttrs, seconds(1, 10), gptImageRatios...),
		"gpt_image_2_5_sunburst": imageModel(countAttrs, seconds(1, 10), gptImageRatios...),
		"gemini_image3_pro":      imageModel(countAttrs, []int64{1, 4}, geminiImageRatios...),
		"gemini_image3.1_flash": imageModel(countAttrs, []int64{1, 4}, "512:512", "416:624", "624:416", "432:592", "592:432", "448:576", "576:448", "384:672", "672:384", "768:336",
			"1024:1024", "832:1248", "1248:832", "864:1184", "1184:864", "896:1152", "1152:896", "768:1344", "1344:768", "1536:672",
			"2048:2048", "1696:2528", "2528:1696", "1792:2400", "2400:1792", "1856:2304", "2304:1856", "1536:2752", "2752:1536", "3168:1344",
			"4096:4096", "3392:5056", "5056:3392", "3584:4800", "4800:3584", "3712:4608", "4608:3712", "3072:5504", "5504:3072", "6336:2688"),
		"gemini_2.5_flash": imageModel(imageAttrs, nil, geminiImageRatios[:10]...),
		// muse_image, seedream5 and grok_imagine_image_2 take an
		// outputCount the client gives no range for: input.outputCount,
		// which the planner counts.
		"muse_image":           imageModel(imageAttrs, nil, "2352:1008", "2016:1152", "1920:1280", "1792:1344", "1600:1600", "1344:1792", "1280:1920", "1152:2016"),
		"seedream5_pro":        imageModel(imageAttrs, nil, "1024:1024", "1184:896", "896:1184", "1376:768", "768:1376", "1296:864", "864:1296", "2048:2048", "2304:1728", "1728:2304", "2720:1530", "1530:2720", "2496:1664", "1664:2496"),
		"seedream5_lite":       imageModel(imageAttrs, nil, "2048:2048", "2304:1728", "1728:2304", "2496:1664", "1664:2496", "2848:1600", "1600:2848", "3136:1344", "3072:3072", "3456:2592", "2592:3456", "4096:2304", "2304:4096", "3744:2496", "2496:3744", "4704:2016"),
		"grok_imagine_image_2": imageModel(imageAttrs, nil, "1024:1024", "1280:720", "720:1280", "1152:864", "864:1152", "1248:832", "832:1248", "2048:2048", "2816:1584", "1584:2816", "2368:1776", "1776:2368", "2496:1664", "1664:2496"),

		// Seedance 2: text, a first (and a last) frame, or reference
		// images (input.promptImage); seed; the same ratios both ways.
		"seedance2":      videoModel(seedFrame, nil, ratioPixels, append(append([]string{}, seedanceLiteRatios...), "2206:946", "1920:1080", "1664:1248", "1440:1440", "1248:1664", "1080:1920", "3840:1646", "3840:2160", "3840:2880", "3840:3840", "2880:3840", "2160:3840")...),
		"seedance2_fast": videoModel(seedFrame, nil, ratioPixels, seedanceLiteRatios...),
		"seedance2_mini": videoModel(seedFrame, nil, ratioPixels, seedanceLiteRatios...),
		"seedance2_5":    videoModel(seedFrame, nil, ratioPixels, "992:432", "854:480", "752:560", "640:640", "560:752", "480:854", "1470:630", "1280:720", "1112:834", "960:960", "834:1112", "720:1280", "2206:946", "1920:1080", "1664:1248", "1440:1440", "1248:1664", "1080:1920"),
		// Wan 3: promptText required; no seed.
		"wan3":       videoModel(frameAttrs, nil, ratioPixels, wanRatios...),
		"wan3_prime": videoModel(frameAttrs, nil, ratioPixels, wanRatios...),
		// gemini_omni_flash_1.1: promptText required; 3 to 10 seconds; a
		// first frame and an optional last one.
		"gemini_omni_flash_1.1": videoModel(frameAttrs, seconds(3, 10), ratioPixels, "640:360", "360:640", "1280:720", "720:1280", "1920:1080", "1080:1920", "3840:2160", "2160:3840"),
	}
	// Hailuo 3: promptText required; ratio is the aspect ratio itself
	// (or "adaptive"), resolution "768p" or "2k".
	hailuo := videoModel([]string{schema.Prompt, schema.AspectRatio, schema.Resolution, schema.Duration, schema.SourceImage, schema.SourceImages}, nil, ratioAspect, "21:9", "16:9", "4:3", "1:1", "3:4", "9:16")
	hailuo.resolutionField, hailuo.resolutionAlways = map[int64]string{768: "768p", 1440: "2k"}, true
	out["hailuo3"] = hailuo
	// HappyHorse 1.0: from text, a pixel ratio; from an image, no ratio
	// (the frame follows the image) but resolution "720p" or "1080p".
	horse := videoModel([]string{schema.Prompt, schema.AspectRatio, schema.Resolution, schema.Duration, schema.SourceImage}, nil, ratioPixels, "1280:720", "720:1280", "960:960", "1108:832", "832:1108", "1920:1080", "1080:1920", "1440:1440", "1662:1248", "1248:1662")
	horse.imageNoRatio, horse.resolutionField = true, resolutionValues(720, 1080)
	out["happyhorse_1_0"] = horse
	// Grok Imagine 1.5: from text, ratio as the aspect ratio; from an
	// image, none; resolution "480p", "720p" or "1080p" both ways.
	grok := videoModel([]string{schema.Prompt, schema.AspectRatio, schema.Resolution, schema.Duration, schema.SourceImage}, nil, ratioAspect, "1:1", "16:9", "9:16", "4:3", "3:4", "3:2", "2:3")
	grok.imageNoRatio, grok.resolutionField, grok.resolutionAlways = true, resolutionValues(480, 720, 1080), true
	out["grok_imagine_1_5"] = grok
	// MiniMax H3 Max: no ratio; resolution "480p" or "768p"; seed;
	// promptText required.
	h3 := videoModel([]string{schema.Prompt, schema.Seed, schema.Resolution, schema.Duration, schema.SourceImage, schema.SourceImages}, nil, ratioNone)
	h3.resolutionField, h3.resolutionAlways = resolutionValues(480, 768), true
	out["h3_max"] = h3
	return out
}
