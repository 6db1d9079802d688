package openai

import (
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/provider"
	openaisim "github.com/genform/genform/internal/simulator/openai"
	"github.com/genform/genform/internal/simulator/simkit"
)

// Registration is OpenAI's Images API in genform's one list of
// providers.
var Registration = &provider.Registration{
	Table:     Table,
	New:       func(c provider.Config) (provider.Provider, error) { return New(c) },
	Simulator: func(o simkit.Options) (simkit.Handler, error) { return openaisim.New(o) },
	Conformance: provider.Conformance{
		Key: "sk-conformance-key-4b9e1d7a2c60", WrongKey: "sk-wrong-key-8f2a6c1e9d35",
		Image: func(prompt string) provider.Request {
			return provider.JSONRequest(addrs.Image, "gpt-image-2", map[string]any{
				"prompt": prompt, "n": 2, "size": "1024x1024",
			})
		},
		ImageCount: 2,
		// A failure after the work is the create's 500.
		FailReason: "server had an error",
		// The safety system refuses at create: 400 moderation_blocked.
		Moderation:       provider.ModeratedAnswer,
		ModerationPrompt: "a cat " + simkit.RefuseMarker,
		ModerationReason: "moderation_blocked",
		// The images come inline: nothing expires, nothing is followed.
		Expiring:    provider.ExpiresNever,
		Synchronous: true,
	},
}
