package reference

import (
	"cmp"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/provider/reference/rules"
	"github.com/genform/genform/internal/schema"
	"github.com/genform/genform/internal/simulator"
	"github.com/genform/genform/internal/simulator/simkit"
)

// Table is the reference service's entry in the tables: it is configured
// by the service block (its token in GENFORM_TOKEN, or service.token),
// and makes the generations of every block that names no provider.
var Table = &schema.Provider{
	Name:    addrs.Reference,
	Title:   "the reference service",
	KeyEnv:  "GENFORM_TOKEN",
	Service: true,
	// The service lists no jobs: a lost create cannot be found again.
	Recovery: schema.RecoverNone,
	// Its endpoints are its models, and what each takes its rules.
	Models:    endpointCaps(),
	Endpoints: endpointRules(),
}

// Registration is the reference service in genform's one list of
// providers.
var Registration = &provider.Registration{
	Table:     Table,
	New:       newProvider,
	Simulator: func(o simkit.Options) (simkit.Handler, error) { return simulator.New(o) },
	Conformance: provider.Conformance{
		Key: "ref-conformance-key-7f3a9c2e51d8", WrongKey: "ref-wrong-key-b6e0d4a1c93f",
		Image: func(prompt string) provider.Request {
			return provider.JSONRequest(addrs.Image, addrs.Text2Image.Path(), map[string]any{
				"prompt":   prompt,
				"config":   map[string]any{"image_number": 2},
				"settings": map[string]any{"aspect_ratio": "1:1", "resolution": 720},
			})
		},
		ImageCount: 2,
		Video: func(prompt string) provider.Request {
			return provider.JSONRequest(addrs.Video, addrs.Text2Video.Path(), map[string]any{
				"prompt":   prompt,
				"settings": map[string]any{"duration": 2, "aspect_ratio": "16:9"},
			})
		},
		FailReason: "failed",
		// The service's usage policy refuses a prompt at create: 400
		// VB-100017, and no job (the simulator's "[policy]" marker). Its
		// job statuses have no refusal.
		Moderation:       provider.ModeratedCreate,
		ModerationPrompt: "a cat [policy]",
		ModerationReason: "VB-100017",
		// The service may answer a status its documentation leaves out
		// (ParseState reads one as running, unknown), but the simulator
		// has no marker that makes it: the suite serves one in front.
		WeirdRaw:     "queueing",
		WeirdByProxy: true,
		// A video's watermark-free link is the service's URL that expires
		// (URLTTL after it was minted); its media_url links do not.
		Expiring: provider.ExpiresWatermarkFree,
	},
}

// newProvider is the reference service as the service block configures
// it: its base URL (set by the user, so plain http to another host is
// theirs to choose), its token, and its identity in fingerprints (the
// base URL, or the built-in simulator's name).
func newProvider(cfg provider.Config) (provider.Provider, error) {
	c, err := apiclient.New(apiclient.Config{
		BaseURL:           cfg.BaseURL,
		Token:             cfg.Key,
		RequestsPerMinute: cfg.RequestsPerMinute,
		MaxDownloadSize:   cfg.MaxDownloadSize,
		Debug:             cfg.Debug,
		HTTPClient:        cfg.HTTPClient,
		AllowRemoteHTTP:   true,
		UserAgent:         cfg.UserAgent,
		OnRetry:           cfg.OnRetry,
	})
	if err != nil {
		return nil, err
	}
	return New(c, cmp.Or(cfg.ID, c.BaseURL())), nil
}

// endpointCaps are the reference service's endpoints as the tables
// describe a provider's models: what each makes, and the counts and
// lengths it allows (package rules holds every value it takes).
func endpointCaps() map[string]schema.Caps {
	models := map[string]schema.Caps{}
	for _, ep := range addrs.Endpoints {
		l := rules.For(ep)
		models[ep.Path()] = schema.Caps{
			Kinds:              []addrs.Kind{ep.Kind()},
			ImageNumbers:       l.ImageNumbers,
			DefaultImageNumber: l.DefaultImageNumber,
			Durations:          l.Durations,
			DefaultDuration:    l.DefaultDuration,
			AspectRatios:       l.AspectRatios,
			MaxSourceImages:    l.MaxSourceImages,
		}
	}
	return models
}

// endpointRules are what each of the service's endpoints takes.
func endpointRules() map[addrs.Endpoint]*schema.Endpoint {
	m := map[addrs.Endpoint]*schema.Endpoint{}
	for _, ep := range addrs.Endpoints {
		m[ep] = rules.For(ep)
	}
	return m
}
