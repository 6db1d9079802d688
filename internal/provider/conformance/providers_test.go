package conformance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/provider/fal"
	"github.com/genform/genform/internal/provider/luma"
	"github.com/genform/genform/internal/provider/openai"
	"github.com/genform/genform/internal/provider/reference"
	"github.com/genform/genform/internal/provider/replicate"
	"github.com/genform/genform/internal/provider/runway"
	"github.com/genform/genform/internal/simulator"
	simfal "github.com/genform/genform/internal/simulator/fal"
	simluma "github.com/genform/genform/internal/simulator/luma"
	simoai "github.com/genform/genform/internal/simulator/openai"
	simrep "github.com/genform/genform/internal/simulator/replicate"
	simrunway "github.com/genform/genform/internal/simulator/runway"
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
	moderation       moderation
	moderationPrompt string
	moderationReason string

	// weirdStatus, when set, is served in front of the simulator so that
	// a job whose prompt holds simkit.WeirdMarker reports an undocumented
	// status for a while, on a simulator that has no such marker of its
	// own; weirdRaw is that status as the adapter must show it.
	weirdStatus func(simkit.Handler) simkit.Handler
	weirdRaw    string

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

// moderation is where a provider's API refuses content.
type moderation int

const (
	// moderatedJob: the job is made and ends refused (Status.Refused).
	moderatedJob moderation = iota
	// moderatedCreate: the create is refused (400) and makes no job; the
	// API has no refused job to report.
	moderatedCreate
	// moderatedAnswer: the create is refused (400) and makes nothing on
	// the provider, and the adapter reports it as a job that ended
	// refused, so that it is recorded as such and never sent again.
	moderatedAnswer
)

// providers is the table the suite runs.
var providers = []providerCase{
	{
		name:     "reference",
		key:      "ref-conformance-key-7f3a9c2e51d8",
		wrongKey: "ref-wrong-key-b6e0d4a1c93f",
		newSim: func(opts simkit.Options) (simkit.Handler, error) {
			return simulator.New(opts)
		},
		newProvider: func(baseURL, key string) (provider.Provider, error) {
			c, err := apiclient.New(apiclient.Config{BaseURL: baseURL, Token: key, UserAgent: "genform-conformance"})
			if err != nil {
				return nil, err
			}
			return reference.New(c, baseURL), nil
		},
		image: func(prompt string) provider.Request {
			return request(addrs.Image, addrs.Text2Image.Path(), map[string]any{
				"prompt":   prompt,
				"config":   map[string]any{"image_number": 2},
				"settings": map[string]any{"aspect_ratio": "1:1", "resolution": 720},
			})
		},
		imageCount: 2,
		video: func(prompt string) provider.Request {
			return request(addrs.Video, addrs.Text2Video.Path(), map[string]any{
				"prompt":   prompt,
				"settings": map[string]any{"duration": 2, "aspect_ratio": "16:9"},
			})
		},
		failReason: "failed",
		// The service's usage policy refuses a prompt at create: 400
		// VB-100017, and no job (the simulator's "[policy]" marker). Its
		// job statuses have no refusal.
		moderation:       moderatedCreate,
		moderationPrompt: "a cat [policy]",
		moderationReason: "VB-100017",
		// The service may answer a status its documentation leaves out
		// (apiclient.ParseState reads one as running, unknown), but the
		// simulator has no marker that makes it: a proxy makes one.
		weirdStatus: undocumentedReferenceStatus,
		weirdRaw:    referenceOddStatus,
		// A video's watermark-free link is the service's URL that expires
		// (URLTTL after it was minted); its media_url links do not.
		expiring: func(ctx context.Context, e *env) string {
			res := e.done(ctx, e.pc.video("an expiring video"))
			wf, ok := e.p.(provider.WatermarkFreer)
			if !ok {
				e.t.Fatal("the reference adapter mints no watermark-free links")
			}
			u, err := wf.WatermarkFreeURL(ctx, res.CreationID)
			if e.Keep(err) != nil {
				e.t.Fatalf("minting the watermark-free link: %v", err)
			}
			return u
		},
	},
	{
		name:     "fal",
		key:      "fal-conformance-key-0c4e8b27d91a",
		wrongKey: "fal-wrong-key-5a1f9e3c7b20",
		newSim: func(opts simkit.Options) (simkit.Handler, error) {
			return simfal.New(opts)
		},
		newProvider: func(baseURL, key string) (provider.Provider, error) {
			return fal.New(provider.Config{BaseURL: baseURL, Key: key, UserAgent: "genform-conformance"})
		},
		image: func(prompt string) provider.Request {
			return request(addrs.Image, "fal-ai/flux/schnell", map[string]any{
				"prompt": prompt, "num_images": 2, "image_size": "square",
			})
		},
		imageCount: 2,
		video: func(prompt string) provider.Request {
			return request(addrs.Video, "fal-ai/kling-video/v2/master/text-to-video", map[string]any{
				"prompt": prompt, "duration": "2",
			})
		},
		failReason:       "runner_server_error",
		moderation:       moderatedJob,
		moderationPrompt: "a cat " + simkit.RefuseMarker,
		moderationReason: "content_policy_violation",
		weirdRaw:         "IN_RETRY",
		expiring:         outputURL,
	},
	{
		name:     "replicate",
		key:      "r8_conformance-key-93d2a6f0e47b",
		wrongKey: "r8_wrong-key-1e7c5b8d2f46",
		newSim: func(opts simkit.Options) (simkit.Handler, error) {
			return simrep.New(opts)
		},
		newProvider: func(baseURL, key string) (provider.Provider, error) {
			return replicate.New(provider.Config{BaseURL: baseURL, Key: key, UserAgent: "genform-conformance"})
		},
		image: func(prompt string) provider.Request {
			return request(addrs.Image, "black-forest-labs/flux-schnell", map[string]any{
				"prompt": prompt, "num_outputs": 2, "aspect_ratio": "1:1",
			})
		},
		imageCount: 2,
		video: func(prompt string) provider.Request {
			return request(addrs.Video, "minimax/video-01", map[string]any{
				"prompt": prompt, "duration": 2,
			})
		},
		failReason:       "exception",
		moderation:       moderatedJob,
		moderationPrompt: "a cat " + simkit.RefuseMarker,
		moderationReason: "NSFW",
		weirdRaw:         "paused",
		expiring:         outputURL,
	},
	{
		name:     "runway",
		key:      "key_conformance-runway-5d8e1a7c03f9",
		wrongKey: "key_wrong-runway-c2b94f60e1a7",
		newSim: func(opts simkit.Options) (simkit.Handler, error) {
			return simrunway.New(opts)
		},
		newProvider: func(baseURL, key string) (provider.Provider, error) {
			return runway.New(provider.Config{BaseURL: baseURL, Key: key, UserAgent: "genform-conformance"})
		},
		// A task makes one image.
		image: func(prompt string) provider.Request {
			return request(addrs.Image, "gen4_image", map[string]any{
				"promptText": prompt, "ratio": "1080:1080",
			})
		},
		imageCount: 1,
		video: func(prompt string) provider.Request {
			return request(addrs.Video, "gen4.5", map[string]any{
				"promptText": prompt, "ratio": "1280:720", "duration": 2,
			})
		},
		failReason:       "INTERNAL.BAD_OUTPUT",
		moderation:       moderatedJob,
		moderationPrompt: "a cat " + simkit.RefuseMarker,
		moderationReason: "SAFETY.INPUT.TEXT",
		weirdRaw:         "PREPARING",
		// Its links expire URLTTL after a read of the task handed them
		// out.
		expiring: outputURL,
	},
	{
		name:     "luma",
		key:      "luma-conformance-key-5b8e1d3f7a20",
		wrongKey: "luma-wrong-key-c4a9f2e6d017",
		newSim: func(opts simkit.Options) (simkit.Handler, error) {
			return simluma.New(opts)
		},
		newProvider: func(baseURL, key string) (provider.Provider, error) {
			return luma.New(provider.Config{BaseURL: baseURL, Key: key, UserAgent: "genform-conformance"})
		},
		// Luma makes one image a generation.
		image: func(prompt string) provider.Request {
			return request(addrs.Image, "photon-1", map[string]any{
				"prompt": prompt, "aspect_ratio": "1:1",
			})
		},
		imageCount: 1,
		video: func(prompt string) provider.Request {
			return request(addrs.Video, "ray-2", map[string]any{
				"prompt": prompt, "duration": "5s", "aspect_ratio": "16:9",
			})
		},
		failReason: "Prompt processing failed",
		// Luma's moderation fails the generation with a failure_reason its
		// error reference lists under moderation.
		moderation:       moderatedJob,
		moderationPrompt: "a cat " + simkit.RefuseMarker,
		moderationReason: "moderation failed",
		weirdRaw:         "processing",
		expiring:         outputURL,
	},
	{
		name:     "openai",
		key:      "sk-conformance-key-4b9e1d7a2c60",
		wrongKey: "sk-wrong-key-8f2a6c1e9d35",
		newSim: func(opts simkit.Options) (simkit.Handler, error) {
			return simoai.New(opts)
		},
		newProvider: func(baseURL, key string) (provider.Provider, error) {
			return openai.New(provider.Config{BaseURL: baseURL, Key: key, UserAgent: "genform-conformance"})
		},
		image: func(prompt string) provider.Request {
			return request(addrs.Image, "gpt-image-2", map[string]any{
				"prompt": prompt, "n": 2, "size": "1024x1024",
			})
		},
		imageCount: 2,
		// A failure after the work is the create's 500.
		failReason: "server had an error",
		// The safety system refuses at create: 400 moderation_blocked.
		moderation:       moderatedAnswer,
		moderationPrompt: "a cat " + simkit.RefuseMarker,
		moderationReason: "moderation_blocked",
		// The images come inline: nothing expires, nothing is followed.
		synchronous: true,
	},
}

// request is a provider request of kind to target with body.
func request(kind addrs.Kind, target string, body map[string]any) provider.Request {
	b, err := json.Marshal(body)
	if err != nil {
		panic(fmt.Sprintf("encoding a request body: %v", err))
	}
	return provider.Request{Kind: kind, Target: target, Body: b}
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
