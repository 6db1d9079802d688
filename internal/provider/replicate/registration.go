package replicate

import (
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/provider"
	replicatesim "github.com/genform/genform/internal/simulator/replicate"
	"github.com/genform/genform/internal/simulator/simkit"
)

// Registration is Replicate in genform's one list of providers.
var Registration = &provider.Registration{
	Table:     Table,
	New:       func(c provider.Config) (provider.Provider, error) { return New(c) },
	Simulator: func(o simkit.Options) (simkit.Handler, error) { return replicatesim.New(o) },
	Conformance: provider.Conformance{
		Key: "r8_conformance-key-93d2a6f0e47b", WrongKey: "r8_wrong-key-1e7c5b8d2f46",
		Image: func(prompt string) provider.Request {
			return provider.JSONRequest(addrs.Image, "black-forest-labs/flux-schnell", map[string]any{
				"prompt": prompt, "num_outputs": 2, "aspect_ratio": "1:1",
			})
		},
		ImageCount: 2,
		Video: func(prompt string) provider.Request {
			return provider.JSONRequest(addrs.Video, "minimax/video-01", map[string]any{
				"prompt": prompt, "duration": 2,
			})
		},
		FailReason:       "exception",
		Moderation:       provider.ModeratedJob,
		ModerationPrompt: "a cat " + simkit.RefuseMarker,
		ModerationReason: "NSFW",
		WeirdRaw:         "paused",
		Expiring:         provider.ExpiresOutputURL,
	},
	Live: &provider.Request{Kind: addrs.Image, Target: "black-forest-labs/flux-schnell",
		Body: []byte(`{"prompt":"a lighthouse at dusk, watercolour","num_outputs":1,"aspect_ratio":"1:1"}`)},
}
