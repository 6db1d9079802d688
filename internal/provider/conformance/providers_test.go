package conformance_test

import (
	"context"
	"testing"

	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/provider/all"
	"github.com/genform/genform/internal/simulator/simkit"
)

// providerCase is one provider adapter and its simulator: a row of the
// suite, which every case runs as a subtest.
type providerCase struct {
	name string
	// key is the key the simulator accepts; wrongKey one it refuses.
	// Both are long and distinctive, so an error that repeats either is
	// found by a plain substring search.
	key, wrongKey string
	// newSim makes the simulator of opts, to be served on the loopback.
	newSim func(opts simkit.Options) (simkit.Handler, error)
	// newProvider builds the adapter against the simulator at baseURL,
	// sending key.
	newProvider func(baseURL, key string) (provider.Provider, error)
	// image and video are requests of images (imageCount of them) and of
	// one video, with prompt; video is nil for a provider without videos.
	image, video func(prompt string) provider.Request
	imageCount   int

	// failReason is part of the reason a failing job ends with.
	failReason string
	// moderation is what the provider's moderation does with
	// moderationPrompt (see moderation).
	moderation       provider.Moderation
	moderationPrompt string
	moderationReason string

	// weirdStatus, when set, is served in front of the simulator so that
	// a job whose prompt holds simkit.WeirdMarker reports an undocumented
	// status for a while, on a simulator that has no such marker of its
	// own; weirdRaw is that status as the adapter must show it.
	weirdStatus func(simkit.Handler) simkit.Handler
	weirdRaw    string
	// noKeyCheck: the adapter checks no key before a create (see
	// provider.Conformance.NoKeyCheck).
	noKeyCheck bool

	// expiring makes a job whose file is behind a URL that expires
	// (simkit.Options.URLTTL after it was handed out or the job
	// finished), and returns that URL; nil for a provider whose outputs
	// come inline (Output.Data), behind no URL.
	expiring func(ctx context.Context, e *env) string

	// synchronous marks an API whose create answers with the result: the
	// job is done when Submit returns, it has no statuses of its own (no
	// undocumented one to follow) and no id of the provider's (the
	// adapter makes one), and a failure after the work is the create's
	// answer, possibly paid, not a job that ends failed.
	synchronous bool
}

// providers is the table the suite runs: a row of every provider in
// genform's one list, from its registration.
var providers = casesOf(all.Providers)

// casesOf are the suite's rows of regs.
func casesOf(regs []*provider.Registration) []providerCase {
	var cases []providerCase
	for _, r := range regs {
		c := r.Conformance
		pc := providerCase{
			name: r.Name(), key: c.Key, wrongKey: c.WrongKey,
			newSim: r.Simulator,
			newProvider: func(baseURL, key string) (provider.Provider, error) {
				return r.New(provider.Config{BaseURL: baseURL, Key: key, UserAgent: "genform-conformance"})
			},
			image: c.Image, video: c.Video, imageCount: c.ImageCount,
			failReason: c.FailReason,
			moderation: c.Moderation, moderationPrompt: c.ModerationPrompt, moderationReason: c.ModerationReason,
			weirdRaw: c.WeirdRaw, synchronous: c.Synchronous, noKeyCheck: c.NoKeyCheck,
		}
		if c.WeirdByProxy {
			pc.weirdStatus = undocumentedStatus(c.WeirdRaw)
		}
		switch c.Expiring {
		case provider.ExpiresOutputURL:
			pc.expiring = outputURL
		case provider.ExpiresWatermarkFree:
			pc.expiring = watermarkFreeURL
		}
		cases = append(cases, pc)
	}
	return cases
}

// watermarkFreeURL makes a video and returns its watermark-free link:
// the provider whose watermark-free links expire (URLTTL after they were
// minted).
func watermarkFreeURL(ctx context.Context, e *env) string {
	res := e.done(ctx, e.pc.video("an expiring video"))
	wf, ok := e.p.(provider.WatermarkFreer)
	if !ok {
		e.t.Fatal("the adapter mints no watermark-free links")
	}
	u, err := wf.WatermarkFreeURL(ctx, res.CreationID)
	if e.Keep(err) != nil {
		e.t.Fatalf("minting the watermark-free link: %v", err)
	}
	return u
}

// outputURL makes an image and returns its first output's URL: the
// providers whose output files expire (URLTTL after the job finished).
func outputURL(ctx context.Context, e *env) string {
	res := e.done(ctx, e.pc.image("an expiring image"))
	return res.Outputs[0].URL
}

// forEach runs test for every provider, each as a parallel subtest.
func forEach(t *testing.T, test func(t *testing.T, pc providerCase)) {
	t.Parallel()
	for _, pc := range providers {
		t.Run(pc.name, func(t *testing.T) {
			t.Parallel()
			test(t, pc)
		})
	}
}

// notPossiblyPaid says why err is not the error of a create whose outcome
// is unknown, or "" when it is.
func notPossiblyPaid(err error) string {
	switch {
	case err == nil:
		return "the submit succeeded"
	case !provider.IsPossiblyPaid(err):
		return "the error does not match provider.ErrPossiblyPaid"
	}
	return ""
}
