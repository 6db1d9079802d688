package runway

// spec is what one model takes at one create endpoint, as the official
// Node client's request types give it (@runwayml/sdk 4.20.1,
// src/resources/text-to-image.ts, image-to-video.ts, text-to-video.ts
// and video-to-video.ts: one parameters interface a model; read
// 2026-12-07): the fields it requires, those it may take, the values of
// ratio where the type lists them (nil where it takes any string), the
// durations where the type lists them, whether duration may be "auto",
// and the values of its other fields typed as a list of strings.
type spec struct {
	required, optional []string
	ratios             []string
	durations          []int64
	durationAuto       bool
	enums              map[string][]string
}

// route is a create endpoint and a model.
type route struct{ path, model string }

// specOrder are the models each create endpoint takes, in the order the
// client lists them, with what each takes there. veo3, which the client
// no longer lists, is not among them.
var specOrder = []struct {
	route
	spec
}{
	{route{"/v1/text_to_image", "gen4_image_turbo"}, spec{
		required: []string{"promptText", "ratio", "referenceImages"},
		optional: []string{"contentModeration", "seed"},
		ratios:   []string{"1024:1024", "1080:1080", "1168:880", "1360:768", "1440:1080", "1080:1440", "1808:768", "1920:1080", "1080:1920", "2112:912", "1280:720", "720:1280", "720:720", "960:720", "720:960", "1680:720"},
	}},
	{route{"/v1/text_to_image", "gen4_image"}, spec{
		required: []string{"promptText", "ratio"},
		optional: []string{"contentModeration", "referenceImages", "seed"},
		ratios:   []string{"1024:1024", "1080:1080", "1168:880", "1360:768", "1440:1080", "1080:1440", "1808:768", "1920:1080", "1080:1920", "2112:912", "1280:720", "720:1280", "720:720", "960:720", "720:960", "1680:720"},
	}},
	{route{"/v1/text_to_image", "gpt_image_2"}, spec{
		required: []string{"promptText", "ratio"},
		optional: []string{"background", "outputCount", "quality", "referenceImages"},
		ratios:   []string{"2048:880", "1920:1088", "1920:1280", "1920:1440", "1920:1536", "1920:1920", "1536:1920", "1440:1920", "1280:1920", "1088:1920", "2912:1248", "2560:1440", "2560:1712", "2560:1920", "2560:2048", "2560:2560", "2048:2560", "1920:2560", "1712:2560", "1440:2560", "3840:1648", "3840:2160", "3504:2336", "3264:2448", "3200:2560", "2880:2880", "2560:3200", "2448:3264", "2336:3504", "2160:3840", "auto"},
		enums:    map[string][]string{"background": {"transparent", "opaque", "auto"}, "quality": {"low", "medium", "high", "auto"}},
	}},
	{route{"/v1/text_to_image", "gemini_image3.1_flash"}, spec{
		required: []string{"promptText", "ratio"},
		optional: []string{"outputCount", "referenceImages"},
		ratios:   []string{"512:512", "416:624", "624:416", "432:592", "592:432", "448:576", "576:448", "384:672", "672:384", "768:336", "256:1024", "1024:256", "176:1408", "1408:176", "1024:1024", "832:1248", "1248:832", "864:1184", "1184:864", "896:1152", "1152:896", "768:1344", "1344:768", "1536:672", "512:2048", "2048:512", "352:2816", "2816:352", "2048:2048", "1696:2528", "2528:1696", "1792:2400", "2400:1792", "1856:2304", "2304:1856", "1536:2752", "2752:1536", "3168:1344", "1024:4096", "4096:1024", "704:5632", "5632:704", "4096:4096", "3392:5056", "5056:3392", "3584:4800", "4800:3584", "3712:4608", "4608:3712", "3072:5504", "5504:3072", "6336:2688", "2048:8192", "8192:2048", "1408:11264", "11264:1408"},
	}},
	{route{"/v1/text_to_image", "muse_image"}, spec{
		required: []string{"promptText", "ratio"},
		optional: []string{"outputCount", "outputFormat", "referenceImages"},
		ratios:   []string{"2352:1008", "2016:1152", "1920:1280", "1792:1344", "1600:1600", "1344:1792", "1280:1920", "1152:2016", "auto"},
		enums:    map[string][]string{"outputFormat": {"webp", "png", "jpeg"}},
	}},
	{route{"/v1/text_to_image", "seedream5_pro"}, spec{
		required: []string{"promptText", "ratio"},
		optional: []string{"grounding", "outputCount", "outputFormat", "referenceImages"},
		ratios:   []string{"1024:1024", "1184:896", "896:1184", "1376:768", "768:1376", "1296:864", "864:1296", "2048:2048", "2304:1728", "1728:2304", "2720:1530", "1530:2720", "2496:1664", "1664:2496", "auto_1k", "auto_2k"},
		enums:    map[string][]string{"outputFormat": {"png", "jpeg"}},
	}},
	{route{"/v1/text_to_image", "seedream5_lite"}, spec{
		required: []string{"promptText", "ratio"},
		optional: []string{"grounding", "outputCount", "outputFormat", "referenceImages"},
		enums:    map[string][]string{"outputFormat": {"png", "jpeg"}},
	}},
	{route{"/v1/text_to_image", "grok_imagine_image_2"}, spec{
		required: []string{"promptText", "ratio"},
		optional: []string{"edit", "outputCount", "quality", "referenceImages"},
		ratios:   []string{"1024:1024", "1280:720", "720:1280", "1152:864", "864:1152", "1248:832", "832:1248", "1248:576", "576:1248", "1280:576", "576:1280", "1408:704", "704:1408", "2048:2048", "2816:1584", "1584:2816", "2368:1776", "1776:2368", "2496:1664", "1664:2496", "2912:1344", "1344:2912", "3200:1440", "1440:3200", "2912:1456", "1456:2912", "auto_1k", "auto_2k"},
		enums:    map[string][]string{"quality": {"low", "medium"}},
	}},
	{route{"/v1/text_to_image", "gemini_image3_pro"}, spec{
		required: []string{"promptText", "ratio"},
		optional: []string{"outputCount", "referenceImages"},
		ratios:   []string{"1344:768", "768:1344", "1024:1024", "1184:864", "864:1184", "1536:672", "832:1248", "1248:832", "896:1152", "1152:896", "2048:2048", "1696:2528", "2528:1696", "1792:2400", "2400:1792", "1856:2304", "2304:1856", "1536:2752", "2752:1536", "3168:1344", "4096:4096", "3392:5056", "5056:3392", "3584:4800", "4800:3584", "3712:4608", "4608:3712", "3072:5504", "5504:3072", "6336:2688"},
	}},
	{route{"/v1/text_to_image", "gpt_image_2_5_flare"}, spec{
		required: []string{"promptText", "ratio"},
		optional: []string{"background", "outputCount", "quality", "referenceImages"},
		ratios:   []string{"2048:880", "1920:1088", "1920:1280", "1920:1440", "1920:1536", "1920:1920", "1536:1920", "1440:1920", "1280:1920", "1088:1920", "2912:1248", "2560:1440", "2560:1712", "2560:1920", "2560:2048", "2560:2560", "2048:2560", "1920:2560", "1712:2560", "1440:2560", "3840:1648", "3840:2160", "3504:2336", "3264:2448", "3200:2560", "2880:2880", "2560:3200", "2448:3264", "2336:3504", "2160:3840", "auto"},
		enums:    map[string][]string{"background": {"opaque", "auto"}, "quality": {"low", "medium", "high", "xhigh", "max"}},
	}},
	{route{"/v1/text_to_image", "gpt_image_2_5_sunburst"}, spec{
		required: []string{"promptText", "ratio"},
		optional: []string{"background", "outputCount", "quality", "referenceImages"},
		ratios:   []string{"2048:880", "1920:1088", "1920:1280", "1920:1440", "1920:1536", "1920:1920", "1536:1920", "1440:1920", "1280:1920", "1088:1920", "2912:1248", "2560:1440", "2560:1712", "2560:1920", "2560:2048", "2560:2560", "2048:2560", "1920:2560", "1712:2560", "1440:2560", "3840:1648", "3840:2160", "3504:2336", "3264:2448", "3200:2560", "2880:2880", "2560:3200", "2448:3264", "2336:3504", "2160:3840", "auto"},
		enums:    map[string][]string{"background": {"transparent", "opaque", "auto"}, "quality": {"low", "medium", "high", "xhigh", "max"}},
	}},
	{route{"/v1/text_to_image", "gemini_2.5_flash"}, spec{
		required: []string{"promptText", "ratio"},
		optional: []string{"referenceImages"},
		ratios:   []string{"1344:768", "768:1344", "1024:1024", "1184:864", "864:1184", "1536:672", "832:1248", "1248:832", "896:1152", "1152:896"},
	}},
	{route{"/v1/image_to_video", "gen4.5"}, spec{
		required: []string{"duration", "promptImage", "promptText", "ratio"},
		optional: []string{"contentModeration", "outputFormat", "proresProfile", "seed"},
		ratios:   []string{"1280:720", "720:1280", "1104:832", "960:960", "832:1104", "1584:672"},
		enums:    map[string][]string{"outputFormat": {"mp4", "prores", "png_sequence", "hdr10", "hlg", "sdr_rec709_10bit", "hdr_pq_12bit_master", "hdr_prores", "hdr_png_sequence", "hdr_exr_sequence", "hdr_exr_acescg_sequence_1_3", "hdr_exr_acescg_sequence_2_0"}, "proresProfile": {"422", "4444", "422 Proxy", "422 LT", "422 HQ", "4444 XQ"}},
	}},
	{route{"/v1/image_to_video", "gen4_turbo"}, spec{
		required: []string{"promptImage", "ratio"},
		optional: []string{"contentModeration", "duration", "promptText", "seed"},
		ratios:   []string{"1280:720", "720:1280", "1104:832", "832:1104", "960:960", "1584:672"},
	}},
	{route{"/v1/image_to_video", "veo3.1"}, spec{
		required:  []string{"promptImage", "ratio"},
		optional:  []string{"audio", "duration", "negativePrompt", "promptText", "seed"},
		ratios:    []string{"1280:720", "720:1280", "1080:1920", "1920:1080"},
		durations: []int64{4, 6, 8},
	}},
	{route{"/v1/image_to_video", "veo3.1_fast"}, spec{
		required:  []string{"promptImage", "ratio"},
		optional:  []string{"audio", "duration", "negativePrompt", "promptText", "seed"},
		ratios:    []string{"1280:720", "720:1280", "1080:1920", "1920:1080"},
		durations: []int64{4, 6, 8},
	}},
	{route{"/v1/image_to_video", "hailuo3"}, spec{
		required: []string{"promptImage", "promptText"},
		optional: []string{"duration", "ratio", "referenceAudio", "resolution"},
		ratios:   []string{"adaptive", "21:9", "16:9", "4:3", "1:1", "3:4", "9:16"},
		enums:    map[string][]string{"resolution": {"768p", "2k", "768P", "2K"}},
	}},
	{route{"/v1/image_to_video", "happyhorse_1_0"}, spec{
		required: []string{"promptImage"},
		optional: []string{"duration", "promptText", "resolution"},
		enums:    map[string][]string{"resolution": {"720p", "1080p", "720P", "1080P"}},
	}},
	{route{"/v1/image_to_video", "seedance2"}, spec{
		required:     []string{"promptImage"},
		optional:     []string{"audio", "duration", "promptText", "ratio", "referenceAudio", "seed"},
		ratios:       []string{"992:432", "864:496", "752:560", "640:640", "560:752", "496:864", "1470:630", "1280:720", "1112:834", "960:960", "834:1112", "720:1280", "2206:946", "1920:1080", "1664:1248", "1440:1440", "1248:1664", "1080:1920", "3840:1646", "3840:2160", "3840:2880", "3840:3840", "2880:3840", "2160:3840"},
		durationAuto: true,
	}},
	{route{"/v1/image_to_video", "seedance2_fast"}, spec{
		required:     []string{"promptImage"},
		optional:     []string{"audio", "duration", "promptText", "ratio", "referenceAudio", "seed"},
		ratios:       []string{"992:432", "864:496", "752:560", "640:640", "560:752", "496:864", "1470:630", "1280:720", "1112:834", "960:960", "834:1112", "720:1280"},
		durationAuto: true,
	}},
	{route{"/v1/image_to_video", "seedance2_mini"}, spec{
		required:     []string{"promptImage"},
		optional:     []string{"audio", "duration", "promptText", "ratio", "referenceAudio", "seed"},
		ratios:       []string{"992:432", "864:496", "752:560", "640:640", "560:752", "496:864", "1470:630", "1280:720", "1112:834", "960:960", "834:1112", "720:1280"},
		durationAuto: true,
	}},
	{route{"/v1/image_to_video", "gemini_omni_flash"}, spec{
		required: []string{"promptImage"},
		optional: []string{"duration", "promptText", "ratio"},
		ratios:   []string{"1280:720", "720:1280"},
	}},
	{route{"/v1/image_to_video", "seedance2_5"}, spec{
		required:     []string{"promptImage"},
		optional:     []string{"audio", "duration", "promptText", "ratio", "referenceAudio", "seed"},
		ratios:       []string{"992:432", "854:480", "752:560", "640:640", "560:752", "480:854", "1470:630", "1280:720", "1112:834", "960:960", "834:1112", "720:1280", "2206:946", "1920:1080", "1664:1248", "1440:1440", "1248:1664", "1080:1920"},
		durationAuto: true,
	}},
	{route{"/v1/image_to_video", "grok_imagine_1_5"}, spec{
		required: []string{"promptImage"},
		optional: []string{"duration", "promptText", "resolution"},
		enums:    map[string][]string{"resolution": {"480p", "720p", "1080p"}},
	}},
	{route{"/v1/image_to_video", "wan3"}, spec{
		required: []string{"promptImage", "promptText"},
		optional: []string{"audio", "duration", "ratio", "referenceAudio", "referenceVideos"},
		ratios:   []string{"832:480", "720:544", "624:624", "544:720", "480:832", "1280:720", "1104:832", "960:960", "832:1104", "720:1280", "1920:1080", "1648:1248", "1440:1440", "1248:1648", "1080:1920", "auto_480p", "auto_720p", "auto_1080p"},
	}},
	{route{"/v1/image_to_video", "gemini_omni_flash_1.1"}, spec{
		required:     []string{"promptImage", "promptText"},
		optional:     []string{"duration", "ratio"},
		ratios:       []string{"640:360", "360:640", "1280:720", "720:1280", "1920:1080", "1080:1920", "3840:2160", "2160:3840"},
		durationAuto: true,
	}},
	{route{"/v1/image_to_video", "wan3_prime"}, spec{
		required: []string{"promptImage", "promptText"},
		optional: []string{"audio", "duration", "ratio", "referenceAudio", "referenceVideos"},
		ratios:   []string{"832:480", "720:544", "624:624", "544:720", "480:832", "1280:720", "1104:832", "960:960", "832:1104", "720:1280", "1920:1080", "1648:1248", "1440:1440", "1248:1648", "1080:1920", "auto_480p", "auto_720p", "auto_1080p"},
	}},
	{route{"/v1/image_to_video", "h3_max"}, spec{
		required: []string{"promptImage", "promptText"},
		optional: []string{"duration", "promptExpansionMode", "resolution", "seed"},
		enums:    map[string][]string{"promptExpansionMode": {"disabled", "balanced", "quality"}, "resolution": {"480p", "768p"}},
	}},
	{route{"/v1/text_to_video", "gen4.5"}, spec{
		required: []string{"duration", "promptText", "ratio"},
		optional: []string{"contentModeration", "outputFormat", "proresProfile", "seed"},
		ratios:   []string{"1280:720", "720:1280"},
		enums:    map[string][]string{"outputFormat": {"mp4", "prores", "png_sequence", "hdr10", "hlg", "sdr_rec709_10bit", "hdr_pq_12bit_master", "hdr_prores", "hdr_png_sequence", "hdr_exr_sequence", "hdr_exr_acescg_sequence_1_3", "hdr_exr_acescg_sequence_2_0"}, "proresProfile": {"422", "4444", "422 Proxy", "422 LT", "422 HQ", "4444 XQ"}},
	}},
	{route{"/v1/text_to_video", "veo3.1"}, spec{
		required:  []string{"promptText", "ratio"},
		optional:  []string{"audio", "duration", "negativePrompt", "seed"},
		ratios:    []string{"1280:720", "720:1280", "1080:1920", "1920:1080"},
		durations: []int64{4, 6, 8},
	}},
	{route{"/v1/text_to_video", "veo3.1_fast"}, spec{
		required:  []string{"promptText", "ratio"},
		optional:  []string{"audio", "duration", "negativePrompt", "seed"},
		ratios:    []string{"1280:720", "720:1280", "1080:1920", "1920:1080"},
		durations: []int64{4, 6, 8},
	}},
	{route{"/v1/text_to_video", "hailuo3"}, spec{
		required: []string{"promptText"},
		optional: []string{"duration", "ratio", "referenceAudio", "referenceVideos", "references", "resolution"},
		ratios:   []string{"adaptive", "21:9", "16:9", "4:3", "1:1", "3:4", "9:16"},
		enums:    map[string][]string{"resolution": {"768p", "2k", "768P", "2K"}},
	}},
	{route{"/v1/text_to_video", "happyhorse_1_0"}, spec{
		required: []string{"promptText"},
		optional: []string{"duration", "ratio"},
		ratios:   []string{"1280:720", "720:1280", "960:960", "1108:832", "832:1108", "1920:1080", "1080:1920", "1440:1440", "1662:1248", "1248:1662"},
	}},
	{route{"/v1/text_to_video", "seedance2"}, spec{
		required:     []string{"promptText"},
		optional:     []string{"audio", "duration", "ratio", "referenceAudio", "referenceVideos", "references", "seed"},
		ratios:       []string{"992:432", "864:496", "752:560", "640:640", "560:752", "496:864", "1470:630", "1280:720", "1112:834", "960:960", "834:1112", "720:1280", "2206:946", "1920:1080", "1664:1248", "1440:1440", "1248:1664", "1080:1920", "3840:1646", "3840:2160", "3840:2880", "3840:3840", "2880:3840", "2160:3840"},
		durationAuto: true,
	}},
	{route{"/v1/text_to_video", "seedance2_fast"}, spec{
		required:     []string{"promptText"},
		optional:     []string{"audio", "duration", "ratio", "referenceAudio", "referenceVideos", "references", "seed"},
		ratios:       []string{"992:432", "864:496", "752:560", "640:640", "560:752", "496:864", "1470:630", "1280:720", "1112:834", "960:960", "834:1112", "720:1280"},
		durationAuto: true,
	}},
	{route{"/v1/text_to_video", "seedance2_mini"}, spec{
		required:     []string{"promptText"},
		optional:     []string{"audio", "duration", "ratio", "referenceAudio", "referenceVideos", "references", "seed"},
		ratios:       []string{"992:432", "864:496", "752:560", "640:640", "560:752", "496:864", "1470:630", "1280:720", "1112:834", "960:960", "834:1112", "720:1280"},
		durationAuto: true,
	}},
	{route{"/v1/text_to_video", "gemini_omni_flash"}, spec{
		required: []string{"promptText"},
		optional: []string{"duration", "ratio"},
		ratios:   []string{"1280:720", "720:1280"},
	}},
	{route{"/v1/text_to_video", "seedance2_5"}, spec{
		required:     []string{},
		optional:     []string{"audio", "duration", "promptText", "ratio", "referenceAudio", "referenceVideos", "references", "seed"},
		ratios:       []string{"992:432", "854:480", "752:560", "640:640", "560:752", "480:854", "1470:630", "1280:720", "1112:834", "960:960", "834:1112", "720:1280", "2206:946", "1920:1080", "1664:1248", "1440:1440", "1248:1664", "1080:1920"},
		durationAuto: true,
	}},
	{route{"/v1/text_to_video", "grok_imagine_1_5"}, spec{
		required: []string{"promptText"},
		optional: []string{"duration", "ratio", "referenceAudio", "references", "resolution"},
		ratios:   []string{"1:1", "16:9", "9:16", "4:3", "3:4", "3:2", "2:3"},
		enums:    map[string][]string{"resolution": {"480p", "720p", "1080p"}},
	}},
	{route{"/v1/text_to_video", "wan3"}, spec{
		required: []string{"promptText"},
		optional: []string{"audio", "duration", "ratio", "referenceAudio", "referenceVideos", "references"},
		ratios:   []string{"832:480", "720:544", "624:624", "544:720", "480:832", "1280:720", "1104:832", "960:960", "832:1104", "720:1280", "1920:1080", "1648:1248", "1440:1440", "1248:1648", "1080:1920", "auto_480p", "auto_720p", "auto_1080p"},
	}},
	{route{"/v1/text_to_video", "gemini_omni_flash_1.1"}, spec{
		required:     []string{"promptText"},
		optional:     []string{"duration", "ratio", "referenceVideos", "references"},
		ratios:       []string{"640:360", "360:640", "1280:720", "720:1280", "1920:1080", "1080:1920", "3840:2160", "2160:3840"},
		durationAuto: true,
	}},
	{route{"/v1/text_to_video", "wan3_prime"}, spec{
		required: []string{"promptText"},
		optional: []string{"audio", "duration", "ratio", "referenceAudio", "referenceVideos", "references"},
		ratios:   []string{"832:480", "720:544", "624:624", "544:720", "480:832", "1280:720", "1104:832", "960:960", "832:1104", "720:1280", "1920:1080", "1648:1248", "1440:1440", "1248:1648", "1080:1920", "auto_480p", "auto_720p", "auto_1080p"},
	}},
	{route{"/v1/text_to_video", "h3_max"}, spec{
		required: []string{"promptText"},
		optional: []string{"duration", "promptExpansionMode", "resolution", "seed"},
		enums:    map[string][]string{"promptExpansionMode": {"disabled", "balanced", "quality"}, "resolution": {"480p", "768p"}},
	}},
	{route{"/v1/video_to_video", "aleph2"}, spec{
		required: []string{"videoUri"},
		optional: []string{"contentModeration", "keyframes", "outputFormat", "promptText", "proresProfile", "ratio", "seed", "targetAspectRatio"},
		enums:    map[string][]string{"outputFormat": {"mp4", "prores", "png_sequence", "sdr_rec709_10bit"}, "proresProfile": {"422", "4444", "422 Proxy", "422 LT", "422 HQ", "4444 XQ"}, "targetAspectRatio": {"16:9", "4:3", "3:2", "1:1", "2:3", "3:4", "9:16", "21:9"}},
	}},
	{route{"/v1/video_to_video", "hailuo3"}, spec{
		required: []string{"promptText", "promptVideo"},
		optional: []string{"duration", "ratio", "referenceAudio", "referenceVideos", "references", "resolution"},
		ratios:   []string{"adaptive", "21:9", "16:9", "4:3", "1:1", "3:4", "9:16"},
		enums:    map[string][]string{"resolution": {"768p", "2k", "768P", "2K"}},
	}},
	{route{"/v1/video_to_video", "seedance2"}, spec{
		required:     []string{"promptVideo"},
		optional:     []string{"audio", "duration", "promptText", "ratio", "referenceAudio", "referenceVideos", "references", "seed"},
		ratios:       []string{"992:432", "864:496", "752:560", "640:640", "560:752", "496:864", "1470:630", "1280:720", "1112:834", "960:960", "834:1112", "720:1280", "2206:946", "1920:1080", "1664:1248", "1440:1440", "1248:1664", "1080:1920", "3840:1646", "3840:2160", "3840:2880", "3840:3840", "2880:3840", "2160:3840"},
		durationAuto: true,
	}},
	{route{"/v1/video_to_video", "seedance2_fast"}, spec{
		required:     []string{"promptVideo"},
		optional:     []string{"audio", "duration", "promptText", "ratio", "referenceAudio", "referenceVideos", "references", "seed"},
		ratios:       []string{"992:432", "864:496", "752:560", "640:640", "560:752", "496:864", "1470:630", "1280:720", "1112:834", "960:960", "834:1112", "720:1280"},
		durationAuto: true,
	}},
	{route{"/v1/video_to_video", "seedance2_mini"}, spec{
		required:     []string{"promptVideo"},
		optional:     []string{"audio", "duration", "promptText", "ratio", "referenceAudio", "referenceVideos", "references", "seed"},
		ratios:       []string{"992:432", "864:496", "752:560", "640:640", "560:752", "496:864", "1470:630", "1280:720", "1112:834", "960:960", "834:1112", "720:1280"},
		durationAuto: true,
	}},
	{route{"/v1/video_to_video", "gemini_omni_flash"}, spec{
		required: []string{"promptText", "videoUri"},
		optional: []string{"references"},
	}},
	{route{"/v1/video_to_video", "seedance2_5"}, spec{
		required:     []string{"promptVideo"},
		optional:     []string{"audio", "duration", "mode", "promptText", "ratio", "referenceAudio", "referenceVideos", "references", "seed"},
		ratios:       []string{"992:432", "854:480", "752:560", "640:640", "560:752", "480:854", "1470:630", "1280:720", "1112:834", "960:960", "834:1112", "720:1280", "2206:946", "1920:1080", "1664:1248", "1440:1440", "1248:1664", "1080:1920"},
		durationAuto: true,
		enums:        map[string][]string{"mode": {"reference", "extend", "edit"}},
	}},
	{route{"/v1/video_to_video", "gemini_omni_flash_1.1"}, spec{
		required:     []string{"promptText", "videoUri"},
		optional:     []string{"duration", "mode", "ratio", "references"},
		ratios:       []string{"640:360", "360:640", "1280:720", "720:1280", "1920:1080", "1080:1920", "3840:2160", "2160:3840"},
		durationAuto: true,
		enums:        map[string][]string{"mode": {"reference", "extend", "edit"}},
	}},
}

// specs are specOrder by route.
var specs = func() map[route]spec {
	out := make(map[route]spec, len(specOrder))
	for _, r := range specOrder {
		out[r.route] = r.spec
	}
	return out
}()
