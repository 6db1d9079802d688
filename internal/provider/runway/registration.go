package runway

import (
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/provider"
	runwaysim "github.com/genform/genform/internal/simulator/runway"
	"github.com/genform/genform/internal/simulator/simkit"
)

// Registration is Runway in genform's one list of providers.
var Registration = &provider.Registration{
	Table:     Table,
	New:       func(c provider.Config) (provider.Provider, error) { return New(c) },
	Simulator: func(o simkit.Options) (simkit.Handler, error) { return runwaysim.New(o) },
	Conformance: provider.Conformance{
		Key: "key_conformance-runway-5d8e1a7c03f9", WrongKey: "key_wrong-runway-c2b94f60e1a7",
		// A task makes one image.
		Image: func(prompt string) provider.Request {
			return provider.JSONRequest(addrs.Image, "gen4_image", map[string]any{
				"promptText": prompt, "ratio": "1080:1080",
			})
		},
		ImageCount: 1,
		Video: func(prompt string) provider.Request {
			return provider.JSONRequest(addrs.Video, "gen4.5", map[string]any{
				"promptText": prompt, "ratio": "1280:720", "duration": 2,
			})
		},
		FailReason:       "INTERNAL.BAD_OUTPUT",
		Moderation:       provider.ModeratedJob,
		ModerationPrompt: "a cat " + simkit.RefuseMarker,
		ModerationReason: "SAFETY.INPUT.TEXT",
		WeirdRaw:         "PREPARING",
		// Its links expire URLTTL after a read of the task handed them
		// out.
		Expiring: provider.ExpiresOutputURL,
	},
	Live: &provider.Request{Kind: addrs.Image, Target: "gen4_image",
		Body: []byte(`{"promptText":"a lighthouse at dusk, watercolour","ratio":"1280:720"}`)},
}
