package schema

import (
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/genform/genform/internal/addrs"
)

// The common attributes: the names an image or video block uses for what
// every provider takes in some form, the reference service's names. A
// provider maps each it takes to its own field (Provider.Body).
const (
	Prompt         = "prompt"
	NegativePrompt = "negative_prompt"
	Seed           = "seed"
	AspectRatio    = "aspect_ratio"
	Resolution     = "resolution"
	ImageNumber    = "image_number"
	Duration       = "duration"
	SourceImage    = "source_image"
	SourceImages   = "source_images"
)

// CommonAttributes lists the common attributes, in the order blocks show
// them.
var CommonAttributes = []string{Prompt, NegativePrompt, Seed, AspectRatio, Resolution, ImageNumber, Duration, SourceImage, SourceImages}

// CommonIndex is the place of name among the common attributes, and
// whether it is one.
func CommonIndex(name string) (int, bool) {
	i := slices.Index(CommonAttributes, name)
	return i, i >= 0
}

// Recovery says whether, and how, a provider can find again a job whose
// create answer was lost.
type Recovery int

const (
	// RecoverNone: the job cannot be looked up; it stays possibly paid.
	RecoverNone Recovery = iota
	// RecoverByListing: the provider lists recent jobs, and the one sent
	// with the same model and input in the same window is taken up.
	RecoverByListing
	// RecoverExact: the job can be looked up by an id genform chose.
	RecoverExact
)

// String says how, in a few words.
func (r Recovery) String() string {
	switch r {
	case RecoverByListing:
		return "by listing recent jobs"
	case RecoverExact:
		return "exactly, by an id genform chooses"
	}
	return "not at all"
}

// Caps is what a model takes and makes.
type Caps struct {
	// Kinds are what it makes.
	Kinds []addrs.Kind
	// Attrs are the common attributes it takes; any other is refused by
	// validate, naming the provider, the model and the attribute.
	Attrs []string
	// ImageNumbers are the counts image_number may take (nil: the model
	// makes one image a request); DefaultImageNumber is how many it
	// makes when image_number is unset.
	ImageNumbers       []int64
	DefaultImageNumber int64
	// Durations are the lengths a video may have, in seconds;
	// DefaultDuration its length when duration is unset.
	Durations       []int64
	DefaultDuration int64
	// AspectRatios are the values aspect_ratio may take.
	AspectRatios []string
	// MaxSourceImages is how many source_images it takes (key frames);
	// 0 when it takes none.
	MaxSourceImages int
	// Counted are the input keys that change how much is made or paid
	// (a count, a length) which a common attribute sets instead, or which
	// the planner cannot count: input may not set them, so that estimates
	// stay true. A count field the model's row does not map is counted
	// from input instead (CountKeys).
	Counted []string
	// Deprecated is the day the provider announced the model's
	// retirement and ShutDown the day from which it no longer serves it,
	// as its deprecation page gives them ("" when none is announced);
	// Successor is what that page names in its place. validate refuses
	// a model shut down, plan warns of a shutdown within 30 days and
	// refuses to generate with a model shut down (outputs already made
	// with it are kept), and genform providers shows them.
	Deprecated, ShutDown Date
	Successor            string
}

// Takes reports whether the model takes the common attribute name.
func (c Caps) Takes(name string) bool { return slices.Contains(c.Attrs, name) }

// Makes reports whether the model makes kind.
func (c Caps) Makes(kind addrs.Kind) bool { return slices.Contains(c.Kinds, kind) }

// MostImages is the most images one request makes.
func (c Caps) MostImages() int64 {
	if len(c.ImageNumbers) == 0 {
		return max(c.DefaultImageNumber, 1)
	}
	return slices.Max(c.ImageNumbers)
}

// MostSeconds is the longest video a request makes.
func (c Caps) MostSeconds() int64 {
	if len(c.Durations) == 0 {
		return c.DefaultDuration
	}
	return slices.Max(c.Durations)
}

// Limits are a provider's documented limits on an account.
type Limits struct {
	// Parallelism is how many jobs a new account may run at once, and
	// MaxParallelism how many the top tier may.
	Parallelism, MaxParallelism int
	// RequestsPerMinute is the documented request rate.
	RequestsPerMinute int
}

// Provider is one generation API genform speaks, as tables.
type Provider struct {
	// Name is what provider blocks and provider = NAME say.
	Name string
	// Service marks the reference service: the service block configures
	// it, a block that names no provider is made by it, and genform
	// providers lists the live providers only.
	Service bool
	// Title names it in messages.
	Title string
	// KeyEnv is the environment variable its own tools read the key from.
	KeyEnv string
	// BaseURL is its public address.
	BaseURL string
	// Recovery says how a lost create is found again.
	Recovery Recovery
	// Cancel says whether a job can be cancelled.
	Cancel bool
	// URLLifetime says how long its output URLs live.
	URLLifetime string
	// Synchronous: its create is answered only once the work is done (the
	// files in the answer), so it may take as long as a generation.
	Synchronous bool
	// InlineOutputs: its answers carry the files as bytes, with no URL
	// (OpenAI's images); a block that makes its source image from one is
	// passed the file as a data: URI.
	InlineOutputs bool
	// SourceURLsOnly: its models take source images only as URLs, never
	// as data: URIs (Luma), so they cannot be made from InlineOutputs.
	SourceURLsOnly bool
	// Limits are its default limits.
	Limits Limits
	// General is what a model the tables do not list is taken to accept.
	General Caps
	// Models are the models the tables list, by id.
	Models map[string]Caps
	// Endpoints are what each of its endpoints takes, for the reference
	// service, whose request fields are the language's own attributes
	// (the configuration builds its bodies); nil for a live provider,
	// whose Body builds them.
	Endpoints map[addrs.Endpoint]*Endpoint
	// Body builds the request body of a model from the common attributes
	// the block sets (JSON-shaped values, by common name) and its input,
	// which it passes through unchanged. It refuses what the model cannot
	// take in a way validate cannot see from the tables alone.
	Body func(model string, kind addrs.Kind, common map[string]any, input map[string]any) (map[string]any, error)
	// Pixels is the size of each image, or video frame, a request of
	// model makes, read from the body Body built (the request as sent);
	// ok is false where the tables cannot tell (a model they do not list,
	// a size left to the model). The prices by the megapixel and by the
	// resolution follow it. nil when the provider's tables tell no size.
	Pixels func(model string, kind addrs.Kind, body map[string]any) (width, height int, ok bool)
}

// Caps is what model takes: its row of the tables, or the provider's
// general capabilities.
func (p *Provider) Caps(model string) Caps {
	if c, ok := p.Models[model]; ok {
		return c
	}
	if i := strings.IndexByte(model, ':'); i > 0 {
		// A pinned version takes what its model takes.
		if c, ok := p.Models[model[:i]]; ok {
			return c
		}
	}
	if base, ok := snapshotOf(model); ok {
		// A dated snapshot ("gpt-image-2-2026-04-21") takes what its
		// model takes, a snapshot released after the tables too.
		if c, ok := p.Models[base]; ok {
			return c
		}
	}
	return p.General
}

// snapshotOf is the model a dated snapshot id names: "gpt-image-2" of
// "gpt-image-2-2026-04-21".
func snapshotOf(model string) (string, bool) {
	const date = len("-2006-01-02")
	if len(model) <= date {
		return "", false
	}
	if _, err := time.Parse("-2006-01-02", model[len(model)-date:]); err != nil {
		return "", false
	}
	return model[:len(model)-date], true
}

// Listed reports whether the tables list model (a pinned version or a
// dated snapshot of a listed model counts).
func (p *Provider) Listed(model string) bool {
	if _, ok := p.Models[model]; ok {
		return true
	}
	if base, ok := snapshotOf(model); ok {
		if _, ok := p.Models[base]; ok {
			return true
		}
	}
	i := strings.IndexByte(model, ':')
	_, ok := p.Models[model[:max(i, 0)]]
	return i > 0 && ok
}

// ModelIDs lists the models the tables list, sorted.
func (p *Provider) ModelIDs() []string {
	ids := make([]string, 0, len(p.Models))
	for id := range p.Models {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// InputError is Body's refusal of one key of input: a field the provider
// takes that genform cannot follow (an answer it would not read, media
// it would not keep). validate shows it on that key of the block's input.
type InputError struct {
	// Key is the input key refused.
	Key string
	// Reason says why, and what to do.
	Reason string
}

func (e *InputError) Error() string { return e.Reason }
