package luma

import (
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/provider"
	lumasim "github.com/genform/genform/internal/simulator/luma"
	"github.com/genform/genform/internal/simulator/simkit"
)

// Registration is Luma in genform's one list of providers.
var Registration = &provider.Registration{
	Table:     Table,
	New:       func(c provider.Config) (provider.Provider, error) { return New(c) },
	Simulator: func(o simkit.Options) (simkit.Handler, error) { return lumasim.New(o) },
	Conformance: provider.Conformance{
		Key: "luma-conformance-key-5b8e1d3f7a20", WrongKey: "luma-wrong-key-c4a9f2e6d017",
		// Luma makes one image a generation.
		Image: func(prompt string) provider.Request {
			return provider.JSONRequest(addrs.Image, "photon-1", map[string]any{
				"prompt": prompt, "aspect_ratio": "1:1",
			})
		},
		ImageCount: 1,
		Video: func(prompt string) provider.Request {
			return provider.JSONRequest(addrs.Video, "ray-2", map[string]any{
				"prompt": prompt, "duration": "5s", "aspect_ratio": "16:9",
			})
		},
		FailReason: "Prompt processing failed",
		// Luma's moderation fails the generation with a failure_reason its
		// error reference lists under moderation.
		Moderation:       provider.ModeratedJob,
		ModerationPrompt: "a cat " + simkit.RefuseMarker,
		ModerationReason: "moderation failed",
		WeirdRaw:         "processing",
		Expiring:         provider.ExpiresOutputURL,
	},
	Live: &provider.Request{Kind: addrs.Image, Target: "photon-flash-1",
		Body: []byte(`{"prompt":"a lighthouse at dusk, watercolour","aspect_ratio":"1:1"}`)},
}
