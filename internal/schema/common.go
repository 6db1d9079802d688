package schema

import (
	"fmt"
	"maps"

	"github.com/genform/genform/internal/addrs"
)

// PromptOnly is what a model a provider's tables do not list is taken to
// accept (Provider.General): it makes kinds, takes the prompt alone, and
// one image a request unless a count field of its input (CountKeys) says
// more, which the planner counts; counted are the provider's input keys
// that change how much is paid in a way the planner cannot count (a
// video's length), which input may not set.
func PromptOnly(kinds []addrs.Kind, counted ...string) Caps {
	return Caps{Kinds: kinds, Attrs: []string{Prompt}, DefaultImageNumber: 1, Counted: counted}
}

// FluxSchnell is FLUX.1 [schnell], which fal and Replicate both serve:
// prompt, seed, an image count of 1 to 4 (default 1) under the host's
// counted key, and the aspect ratios the host maps.
func FluxSchnell(counted string, ratios ...string) Caps {
	return Caps{
		Kinds:              []addrs.Kind{addrs.Image},
		Attrs:              []string{Prompt, Seed, AspectRatio, ImageNumber},
		ImageNumbers:       []int64{1, 2, 3, 4},
		DefaultImageNumber: 1,
		AspectRatios:       ratios,
		Counted:            []string{counted},
	}
}

// Kling21 is Kling 2.1 image to video, which fal and Replicate both
// serve with the same input: prompt and a source image (the first
// frame) required, a duration of 5 or 10 seconds (default 5), and an
// optional negative prompt.
var Kling21 = Caps{
	Kinds:           []addrs.Kind{addrs.Video},
	Attrs:           []string{Prompt, NegativePrompt, SourceImage, Duration},
	Durations:       []int64{5, 10},
	DefaultDuration: 5,
	Counted:         []string{"duration"},
}

// PassInput copies input into a new body, which the common attributes
// are then added to: input passes through unchanged, and a common
// attribute cannot be set twice (validate refuses it in input).
func PassInput(input map[string]any) map[string]any {
	body := make(map[string]any, len(input)+4)
	maps.Copy(body, input)
	return body
}

// MapBody builds the body of a model of provider: input as it is, and
// each common attribute the block sets under the field field names for
// it, with the value it gives ("" refuses the attribute: genform does not
// map it for this model).
func MapBody(provider, model string, common, input map[string]any, field func(name string, v any) (string, any, error)) (map[string]any, error) {
	body := PassInput(input)
	for _, name := range CommonAttributes {
		v, ok := common[name]
		if !ok {
			continue
		}
		key, value, err := field(name, v)
		if err != nil {
			return nil, err
		}
		if key == "" {
			return nil, fmt.Errorf("genform does not map %s to a field of %s model %s; set the model's own field in input", name, provider, model)
		}
		if err := SetOnce(body, key, name, value); err != nil {
			return nil, err
		}
	}
	return body, nil
}

// SetOnce sets body[key] to v, refusing a key input already set.
func SetOnce(body map[string]any, key, attr string, v any) error {
	if _, ok := body[key]; ok {
		return fmt.Errorf("input sets %q, which %s sets too; set it once", key, attr)
	}
	body[key] = v
	return nil
}
