package rules

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/schema"
)

// TestTable checks that every endpoint has its rules and that each
// default is one of the values it allows, so that a request leaving a
// field out is one that could have written the default.
func TestTable(t *testing.T) {
	for _, ep := range addrs.Endpoints {
		l := For(ep)
		if l == nil || l.Endpoint != ep {
			t.Fatalf("For(%s) = %+v", ep, l)
		}
		check := func(field, why string) {
			if why != "" {
				t.Errorf("%s: default %s refused: %s", ep.Title(), field, why)
			}
		}
		if l.ImageNumbers != nil {
			check("image_number", l.ImageNumber(l.DefaultImageNumber))
		}
		if l.Resolutions != nil {
			check("resolution", l.Resolution(l.DefaultResolution))
		}
		if l.AspectRatios != nil {
			check("aspect_ratio", l.AspectRatio(l.DefaultAspectRatio))
		}
		if l.GenModes != nil {
			check("gen_mode", l.GenMode(l.DefaultGenMode))
		}
		if l.Durations != nil {
			check("duration", l.Duration(l.DefaultDuration))
		}
		if (ep.Kind() == addrs.Video) != (l.Durations != nil) {
			t.Errorf("%s: durations %v for a %s", ep.Title(), l.Durations, ep.Kind())
		}
	}
	if For(addrs.Endpoint{}) != nil || For(addrs.ModelEndpoint("fal", "fal-ai/flux/dev", addrs.Image)) != nil {
		t.Error("For of no endpoint is not nil")
	}
}

// TestChecks gives each rule a value it allows and one it refuses.
func TestChecks(t *testing.T) {
	t2i, i2v, afc, t2v := For(addrs.Text2Image), For(addrs.Image2Video), For(addrs.KeyFrames), For(addrs.Text2Video)
	tests := []struct {
		name string
		why  string // the check's answer
		want string // "" to allow, else a part of the reason
	}{
		{"image_number 1", t2i.ImageNumber(1), ""},
		{"image_number 4", t2i.ImageNumber(4), ""},
		{"image_number 0", t2i.ImageNumber(0), "must be 1, 2, 3 or 4 (images per request)"},
		{"image_number 5", t2i.ImageNumber(5), "must be 1, 2, 3 or 4"},
		{"image_number of a video", t2v.ImageNumber(1), "is not taken by text-to-video"},
		{"resolution 1080", t2i.Resolution(1080), ""},
		{"resolution 480", t2i.Resolution(480), "must be 720 or 1080 (pixels on the short side)"},
		{"resolution of a video", t2v.Resolution(720), "not taken"},
		{"aspect_ratio 21:9", t2i.AspectRatio("21:9"), ""},
		{"aspect_ratio 2:1", t2i.AspectRatio("2:1"), `must be "21:9", "16:9", "9:16", "3:4", "4:3" or "1:1"`},
		{"text-to-video aspect_ratio 1:1", t2v.AspectRatio("1:1"), ""},
		{"text-to-video aspect_ratio 5:4", t2v.AspectRatio("5:4"), `"1:1"`},
		{"image-to-video aspect_ratio", i2v.AspectRatio("16:9"), "is not taken by image-to-video"},
		{"image-to-video gen_mode enhanced", i2v.GenMode("enhanced"), ""},
		{"image-to-video gen_mode standard", i2v.GenMode("standard"), `must be "smooth" or "enhanced"`},
		{"text-to-video gen_mode standard", t2v.GenMode("standard"), ""},
		{"text-to-video gen_mode fast", t2v.GenMode("fast"), `must be "standard", "smooth" or "enhanced"`},
		{"key frames gen_mode", afc.GenMode("smooth"), "is not taken by key-frame conditioning"},
		{"duration 2", i2v.Duration(2), ""},
		{"duration 8", afc.Duration(8), ""},
		{"duration 5", t2v.Duration(5), "must be 2, 4, 6 or 8 (seconds)"},
		{"duration 10", i2v.Duration(10), "2, 4, 6 or 8"},
		{"duration of an image", t2i.Duration(4), "not taken"},
		{"two key frames", afc.SourceImageCount(2), ""},
		{"six key frames", afc.SourceImageCount(6), ""},
		{"one key frame", afc.SourceImageCount(1), "must hold 2 to 6 images, not 1"},
		{"seven key frames", afc.SourceImageCount(7), "must hold 2 to 6 images, not 7"},
		{"one source image", i2v.SourceImageCount(1), ""},
		{"two source images to image-to-video", i2v.SourceImageCount(2), "must hold 1 image, not 2"},
		{"source images to text-to-image", t2i.SourceImageCount(1), "not taken"},
		{"seed -1", schema.CheckSeed(-1), ""},
		{"seed 0", schema.CheckSeed(0), ""},
		{"seed 4294967295", schema.CheckSeed(4294967295), ""},
		{"seed -2", schema.CheckSeed(-2), "must be -1 (random) or from 0 to 4294967295"},
		{"seed 4294967296", schema.CheckSeed(4294967296), "from 0 to 4294967295"},
		{"input side 1", schema.CheckInputSide(1), ""},
		{"input side 8192", schema.CheckInputSide(8192), ""},
		{"input side 0", schema.CheckInputSide(0), "must be a pixel size from 1 to 8192"},
		{"input side 8193", schema.CheckInputSide(8193), "from 1 to 8192"},
		{"prompt of 2048 runes", schema.CheckPrompt(strings.Repeat("é", 2048)), ""},
		{"prompt of 2049 runes", schema.CheckPrompt(strings.Repeat("x", 2049)), "must be at most 2048 characters (Unicode code points) long, not 2049"},
		{"frame index 31 of 4 s", For(addrs.KeyFrames).FrameIndex(31, 4), ""},
		{"frame index 32 of 4 s", For(addrs.KeyFrames).FrameIndex(32, 4), "must be a frame position from 0 to 31 for a 4-second video (8 frames a second)"},
		{"frame index 63 of 8 s", For(addrs.KeyFrames).FrameIndex(63, 8), ""},
		{"frame index 16 of 2 s", For(addrs.KeyFrames).FrameIndex(16, 2), "from 0 to 15"},
		{"frame index -1", For(addrs.KeyFrames).FrameIndex(-1, 4), "from 0 to 31"},
		{"frame index 99, duration unknown", For(addrs.KeyFrames).FrameIndex(99, 0), ""},
		{"frame index -1, duration unknown", For(addrs.KeyFrames).FrameIndex(-1, 0), "zero or more"},
		{"frame indices of equal count", schema.FrameIndexCount(3, 3), ""},
		{"frame indices of another count", schema.FrameIndexCount(3, 2), "must have one entry per source image (2 of them), not 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			switch {
			case tt.want == "" && tt.why != "":
				t.Errorf("refused: %s", tt.why)
			case tt.want != "" && tt.why == "":
				t.Errorf("allowed; want a refusal saying %q", tt.want)
			case !strings.Contains(tt.why, tt.want):
				t.Errorf("reason %q does not say %q", tt.why, tt.want)
			}
		})
	}
}

func TestFrameIndices(t *testing.T) {
	tests := []struct {
		indices  []int64
		duration int64
		at       int
		want     string
	}{
		{[]int64{0, 31}, 4, -1, ""},
		{[]int64{0, 1, 2, 3, 4, 63}, 8, -1, ""},
		{[]int64{5, 5}, 4, 1, "must be more than the index before it (5): frame indices are strictly increasing"},
		{[]int64{0, 9, 3}, 4, 2, "strictly increasing"},
		{[]int64{0, 32}, 4, 1, "from 0 to 31"},
		{[]int64{0, 16}, 2, 1, "from 0 to 15"},
		{[]int64{0, 40}, 0, -1, ""}, // duration not known: no upper bound
		{[]int64{3, 2}, 0, 1, "strictly increasing"},
	}
	for _, tt := range tests {
		at, why := For(addrs.KeyFrames).FrameIndices(tt.indices, tt.duration)
		if at != tt.at || !strings.Contains(why, tt.want) || (tt.want == "") != (why == "") {
			t.Errorf("For(addrs.KeyFrames).FrameIndices(%v, %d) = %d, %q; want %d, %q", tt.indices, tt.duration, at, why, tt.at, tt.want)
		}
	}
}

func TestSourceImage(t *testing.T) {
	png := "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n"))
	tests := []struct {
		name, src, want string
	}{
		{"https URL", "https://example.com/a.png?x=1&y=%20", ""},
		{"http URL", "http://127.0.0.1:8080/media/a/b.png", ""},
		{"upper-case scheme", "HTTPS://example.com/a.png", ""},
		{"data URI", png, ""},
		{"svg data URI", "data:image/svg+xml;base64,PHN2Zy8+", ""},
		{"data URI at the cap", "data:image/png;base64," + strings.Repeat("A", (schema.MaxSourceImageBytes-len("data:image/png;base64,"))/4*4), ""},
		{"a path", "frame.png", "must be an http(s) URL or a data:image/<type>;base64,<data> URI"},
		{"ftp URL", "ftp://example.com/a.png", "http(s) URL"},
		{"URL without host", "https:///a.png", "http(s) URL"},
		{"URL with a space", "https://example.com/a b.png", `percent-encoded (' ' at byte 21 is not)`},
		{"URL with a quote", `https://example.com/a".png`, "percent-encoded"},
		{"URL with a backslash", `https://example.com/a\b.png`, "percent-encoded"},
		{"URL not in ASCII", "https://example.com/café.png", `('é' at byte 23 is not)`},
		{"data URI of text", "data:text/plain;base64,aGk=", "must be a data:image/<type>;base64,<data> URI"},
		{"data URI not base64", "data:image/png,abc", "data:image/<type>;base64"},
		{"data URI without a comma", "data:image/png;base64", "data:image/<type>;base64"},
		{"data URI of no type", "data:image/;base64,aGk=", "data:image/<type>;base64"},
		{"data URI of an odd type", `data:image/p"g;base64,aGk=`, "data:image/<type>;base64"},
		{"empty data URI", "data:image/png;base64,", "empty"},
		{"data URI of bad base64", "data:image/png;base64,!!!", "must hold valid base64"},
		{"data URI of unpadded base64", "data:image/png;base64,aGk", "base64"},
		{"data URI past the cap", "data:image/png;base64," + strings.Repeat("A", schema.MaxSourceImageBytes), "must be at most 10485760 bytes (10 MiB) long, not 10485782"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			why := schema.CheckSourceImage(tt.src)
			switch {
			case tt.want == "" && why != "":
				t.Errorf("refused: %s", why)
			case tt.want != "" && !strings.Contains(why, tt.want):
				t.Errorf("reason %q does not say %q", why, tt.want)
			}
		})
	}
}

// TestBodyFits checks the arithmetic schema.MaxSourceImageBytes stands on: a
// request holding the most source images any endpoint takes, each as long
// as allowed, and both prompts as long as allowed in the characters JSON
// spells longest, is within MaxRequestBytes. A source image SourceImage
// allows is spelled in JSON as itself between quotes.
func TestBodyFits(t *testing.T) {
	most := 0
	for _, ep := range addrs.Endpoints {
		most = max(most, For(ep).MaxSourceImages)
	}
	const otherFields = 4 << 10 // keys, numbers, booleans, gen_mode, aspect_ratio
	worstPrompt := len(`"` + strings.Repeat(`\u0001`, schema.MaxPromptRunes) + `"`)
	worst := most*(schema.MaxSourceImageBytes+len(`"",`)) + 2*worstPrompt + otherFields
	if worst > MaxRequestBytes {
		t.Errorf("a request of %d source images may be %d bytes, more than MaxRequestBytes (%d)", most, worst, MaxRequestBytes)
	}

	for _, src := range []string{
		"https://example.com/a.png?x=1&y=%20#f<>{}|^`",
		"data:image/svg+xml;base64,PHN2Zy8+",
	} {
		if why := schema.CheckSourceImage(src); why != "" {
			t.Fatalf("%s refused: %s", src, why)
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(src); err != nil {
			t.Fatal(err)
		}
		if n := b.Len() - len("\"\"\n"); n != len(src) {
			t.Errorf("%s is %d bytes as JSON, not %d", src, n, len(src))
		}
	}
}

func TestWhole(t *testing.T) {
	tests := []struct {
		text  string
		n     int64
		whole bool
	}{
		{"4", 4, true},
		{"4.0", 4, true},
		{"4e0", 4, true},
		{"-1", -1, true},
		{"1.5", 0, false},
		{"4294967295.0000000000001", 0, false},
		{"1e30", 1<<63 - 1, true}, // whole, refused for its size by the range checks
	}
	for _, tt := range tests {
		f, _, err := big.ParseFloat(tt.text, 10, 512, big.ToNearestEven)
		if err != nil {
			t.Fatal(err)
		}
		n, whole := schema.Whole(f)
		if n != tt.n || whole != tt.whole {
			t.Errorf("schema.Whole(%s) = %d, %v; want %d, %v", tt.text, n, whole, tt.n, tt.whole)
		}
	}
}
