package fal

import (
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/provider"
	falsim "github.com/genform/genform/internal/simulator/fal"
	"github.com/genform/genform/internal/simulator/simkit"
)

// Registration is fal in genform's one list of providers.
var Registration = &provider.Registration{
	Table:     Table,
	New:       func(c provider.Config) (provider.Provider, error) { return New(c) },
	Simulator: func(o simkit.Options) (simkit.Handler, error) { return falsim.New(o) },
	Conformance: provider.Conformance{
		Key: "fal-conformance-key-0c4e8b27d91a", WrongKey: "fal-wrong-key-5a1f9e3c7b20",
		Image: func(prompt string) provider.Request {
			return provider.JSONRequest(addrs.Image, "fal-ai/flux/schnell", map[string]any{
				"prompt": prompt, "num_images": 2, "image_size": "square",
			})
		},
		ImageCount: 2,
		Video: func(prompt string) provider.Request {
			// Kling takes the durations "5" and "10" (its input type
			// in fal's client, which the oracle holds this to).
			return provider.JSONRequest(addrs.Video, "fal-ai/kling-video/v2/master/text-to-video", map[string]any{
				"prompt": prompt, "duration": "5",
			})
		},
		FailReason:       "runner_server_error",
		Moderation:       provider.ModeratedJob,
		ModerationPrompt: "a cat " + simkit.RefuseMarker,
		// FLUX's safety checker completes the request and flags its images
		// (has_nsfw_concepts): the adapter ends it refused in those words.
		ModerationReason: "has_nsfw_concepts",
		WeirdRaw:         "IN_RETRY",
		Expiring:         provider.ExpiresOutputURL,
	},
	Live: &provider.Request{Kind: addrs.Image, Target: "fal-ai/flux/schnell",
		Body: []byte(`{"prompt":"a lighthouse at dusk, watercolour","num_images":1,"image_size":"square"}`)},
}
