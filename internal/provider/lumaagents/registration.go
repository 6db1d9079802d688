package lumaagents

import (
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/provider"
	lumaagentssim "github.com/genform/genform/internal/simulator/lumaagents"
	"github.com/genform/genform/internal/simulator/simkit"
)

// Registration is Luma's Agents API in genform's one list of providers.
var Registration = &provider.Registration{
	Table:     Table,
	New:       func(c provider.Config) (provider.Provider, error) { return New(c) },
	Simulator: func(o simkit.Options) (simkit.Handler, error) { return lumaagentssim.New(o) },
	Conformance: provider.Conformance{
		Key: "luma-api-conformance-key-3c7a91e0b452", WrongKey: "luma-api-wrong-key-8d20f6b3e19c",
		NoKeyCheck: true,
		// Luma makes one image a generation.
		Image: func(prompt string) provider.Request {
			return provider.JSONRequest(addrs.Image, "uni-1", map[string]any{
				"prompt": prompt, "aspect_ratio": "1:1",
			})
		},
		ImageCount: 1,
		Video: func(prompt string) provider.Request {
			return provider.JSONRequest(addrs.Video, "ray-3.2", map[string]any{
				"prompt": prompt, "aspect_ratio": "16:9", "video": map[string]any{"duration": "5s", "resolution": "720p"},
			})
		},
		FailReason: "generation_failed",
		// Luma's moderation fails the generation with failure_code
		// content_moderated.
		Moderation:       provider.ModeratedJob,
		ModerationPrompt: "a cat " + simkit.RefuseMarker,
		ModerationReason: "content_moderated",
		WeirdRaw:         "running",
		Expiring:         provider.ExpiresOutputURL,
	},
	Live: &provider.Request{Kind: addrs.Image, Target: "uni-1",
		Body: []byte(`{"prompt":"a lighthouse at dusk, watercolour","aspect_ratio":"1:1"}`)},
}
