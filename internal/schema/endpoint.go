package schema

import (
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/genform/genform/internal/addrs"
)

// The limits genform keeps to in every request, whichever endpoint.
const (
	// MaxPromptRunes bounds prompt and negative_prompt, counted in Unicode
	// code points. [simulator]
	MaxPromptRunes = 2048

	// RandomSeed asks the service to pick the seed; it is the default.
	// [interface] for text-to-image; the video endpoints leave the seed
	// open, and the simulator reads it the same way. [simulator]
	RandomSeed = -1
	// MaxSeed is the largest seed: seeds are 0 to 2^32-1. [simulator]
	MaxSeed = 1<<32 - 1

	// MinInputSide and MaxInputSide bound key-frame conditioning's
	// input_width and input_height, in pixels. [simulator]
	MinInputSide = 1
	MaxInputSide = 8192

	// MaxSourceImageBytes bounds one source image as written in the
	// request: a URL, or a data: URI with the image inside it. The
	// service names no limit; this one is chosen so that the most source
	// images a request takes (six, for key frames) fit in the simulator's
	// largest request (64 MiB) with room for everything else. A data URI
	// of 10 MiB holds an image of 7.5 MiB. [simulator]
	MaxSourceImageBytes = 10 << 20
)

// NotWhole is the reason a number with a fractional part is refused where
// the service counts something: images, pixels, seconds, frames, or a
// seed. [simulator] (4.0 and 4e0 are whole and read as 4.)
const NotWhole = "must be a whole number"

// Endpoint is what one endpoint of the reference service accepts: an
// API whose request fields are the language's own attributes (the
// service block's service, docs/service.md), checked by the
// configuration before anything is sent and by its simulator when a
// request arrives. A nil list means the
// endpoint takes no such field. The lists are shared: callers must not
// modify them.
type Endpoint struct {
	Endpoint addrs.Endpoint

	// PromptRequired says the endpoint needs a prompt that is not Blank.
	PromptRequired bool

	// ImageNumbers are the values of config.image_number: how many
	// images one request makes.
	ImageNumbers       []int64
	DefaultImageNumber int64

	// Resolutions are the values of settings.resolution, the short side
	// of an image in pixels.
	Resolutions       []int64
	DefaultResolution int64

	// AspectRatios are the values of settings.aspect_ratio.
	AspectRatios       []string
	DefaultAspectRatio string

	// GenModes are the values of gen_mode.
	GenModes       []string
	DefaultGenMode string

	// Durations are the values of settings.duration, in seconds.
	Durations       []int64
	DefaultDuration int64

	// MinSourceImages and MaxSourceImages bound how many source images
	// a request takes (config.source_image counts as one). Both are 0
	// for an endpoint that takes none.
	MinSourceImages, MaxSourceImages int

	// KeyFrames says the request places its source images in the video
	// with config.frame_indices, one per image, and may give their pixel
	// size with config.input_width and config.input_height.
	KeyFrames bool
	// FPS is the frame rate of its videos: a key frame's index counts
	// frames at this rate.
	FPS int64
}

// ImageNumber checks config.image_number.
func (l *Endpoint) ImageNumber(n int64) string {
	return oneOfNumbers(l, n, l.ImageNumbers, " (images per request)")
}

// Resolution checks settings.resolution.
func (l *Endpoint) Resolution(n int64) string {
	return oneOfNumbers(l, n, l.Resolutions, " (pixels on the short side)")
}

// Duration checks settings.duration.
func (l *Endpoint) Duration(n int64) string {
	return oneOfNumbers(l, n, l.Durations, " (seconds)")
}

// AspectRatio checks settings.aspect_ratio.
func (l *Endpoint) AspectRatio(s string) string { return oneOfStrings(l, s, l.AspectRatios) }

// GenMode checks gen_mode.
func (l *Endpoint) GenMode(s string) string { return oneOfStrings(l, s, l.GenModes) }

// SourceImageCount checks how many source images a request holds.
func (l *Endpoint) SourceImageCount(n int) string {
	switch {
	case l.MaxSourceImages == 0:
		return notTaken(l)
	case n >= l.MinSourceImages && n <= l.MaxSourceImages:
		return ""
	case l.MinSourceImages == l.MaxSourceImages:
		return fmt.Sprintf("must hold %d image, not %d", l.MinSourceImages, n)
	}
	return fmt.Sprintf("must hold %d to %d images, not %d", l.MinSourceImages, l.MaxSourceImages, n)
}

// Frames is how many frames a video of the given duration has, the
// number of key-frame positions in it.
func (l *Endpoint) Frames(duration int64) int64 { return duration * l.FPS }

// FrameIndex checks one of config.frame_indices for a video of the given
// duration. A duration the endpoints do not take (0 when it is not known)
// checks only that the index is zero or more.
func (l *Endpoint) FrameIndex(n, duration int64) string {
	if !slices.Contains(l.Durations, duration) {
		if n < 0 {
			return "must be a frame position, zero or more"
		}
		return ""
	}
	if n < 0 || n >= l.Frames(duration) {
		return fmt.Sprintf("must be a frame position from 0 to %d for a %d-second video (%d frames a second)", l.Frames(duration)-1, duration, l.FPS)
	}
	return ""
}

// FrameIndices checks config.frame_indices for a video of the given
// duration: each index as FrameIndex does, and each more than the one
// before it. It returns the position of the first index refused and why,
// or -1 and "".
func (l *Endpoint) FrameIndices(indices []int64, duration int64) (int, string) {
	for i, n := range indices {
		if why := l.FrameIndex(n, duration); why != "" {
			return i, why
		}
		if i > 0 && n <= indices[i-1] {
			return i, fmt.Sprintf("must be more than the index before it (%d): frame indices are strictly increasing", indices[i-1])
		}
	}
	return -1, ""
}

// FrameIndexCount checks that config.frame_indices has one entry per
// source image: indices entries for images images.
func FrameIndexCount(indices, images int) string {
	if indices == images {
		return ""
	}
	return fmt.Sprintf("must have one entry per source image (%d of them), not %d", images, indices)
}

// CheckSeed checks settings.seed.
func CheckSeed(n int64) string {
	if n == RandomSeed || n >= 0 && n <= MaxSeed {
		return ""
	}
	return fmt.Sprintf("must be %d (random) or from 0 to %d", RandomSeed, MaxSeed)
}

// CheckInputSide checks config.input_width and config.input_height.
func CheckInputSide(n int64) string {
	if n >= MinInputSide && n <= MaxInputSide {
		return ""
	}
	return fmt.Sprintf("must be a pixel size from %d to %d", MinInputSide, MaxInputSide)
}

// CheckPrompt checks the length of prompt and negative_prompt.
func CheckPrompt(s string) string {
	if len(s) <= MaxPromptRunes {
		return "" // no more bytes than the limit, so no more runes
	}
	if n := utf8.RuneCountInString(s); n > MaxPromptRunes {
		return fmt.Sprintf("must be at most %d characters (Unicode code points) long, not %d", MaxPromptRunes, n)
	}
	return ""
}

// Blank reports whether a prompt says nothing: empty, or only white
// space. An endpoint whose PromptRequired is set refuses it.
func Blank(s string) bool { return strings.TrimSpace(s) == "" }

// Whole returns f as an int64 when it is a whole number. A whole number
// beyond int64's range comes back as the nearest int64, so that a range
// check refuses it for its size rather than its form.
func Whole(f *big.Float) (int64, bool) {
	if !f.IsInt() {
		return 0, false
	}
	n, _ := f.Int64()
	return n, true
}

func notTaken(l *Endpoint) string {
	return "is not taken by " + l.Endpoint.Title()
}

func oneOfNumbers(l *Endpoint, n int64, allowed []int64, unit string) string {
	if allowed == nil {
		return notTaken(l)
	}
	if slices.Contains(allowed, n) {
		return ""
	}
	words := make([]string, len(allowed))
	for i, a := range allowed {
		words[i] = strconv.FormatInt(a, 10)
	}
	return "must be " + or(words) + unit
}

func oneOfStrings(l *Endpoint, s string, allowed []string) string {
	if allowed == nil {
		return notTaken(l)
	}
	if slices.Contains(allowed, s) {
		return ""
	}
	words := make([]string, len(allowed))
	for i, a := range allowed {
		words[i] = strconv.Quote(a)
	}
	return "must be " + or(words)
}

// or joins words as a sentence does: "a, b or c".
func or(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
