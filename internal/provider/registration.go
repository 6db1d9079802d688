package provider

import (
	"encoding/json"
	"fmt"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/schema"
	"github.com/genform/genform/internal/simulator/simkit"
)

// Registration is one provider genform speaks, as its own folder
// declares it: everything the rest of genform reads of it. The one list
// of them is package provider/all; adding a provider is its folder and a
// line there.
type Registration struct {
	// Table is its capability table: its name (what provider blocks and
	// provider = NAME say), title, key variable, public address, limits,
	// and what its models take and make.
	Table *schema.Provider
	// New builds its adapter as a provider block (the reference service:
	// the service block) configures it.
	New func(Config) (Provider, error)
	// Simulator builds the simulator of its API: genform sim -provider,
	// and every test that runs an adapter against its provider.
	Simulator func(simkit.Options) (simkit.Handler, error)
	// Conformance is what the conformance suite every adapter passes
	// (package provider/conformance) sends it, and what it expects back.
	Conformance Conformance
	// Live is the one generation the opt-in live test makes on the
	// provider, paid for with the key in Table.KeyEnv; nil for none.
	Live *Request
}

// Name is the provider's name.
func (r *Registration) Name() string { return r.Table.Name }

// Conformance is a provider's row of the conformance suite: requests its
// adapter makes against its simulator, and what the provider answers to
// the suite's markers.
type Conformance struct {
	// Key is a key the simulator accepts, WrongKey one it refuses: long
	// and distinctive, so an error that repeats either is found by a
	// plain substring search.
	Key, WrongKey string
	// Image and Video are requests of images (ImageCount of them) and of
	// one video, with prompt; Video is nil for a provider without videos.
	Image, Video func(prompt string) Request
	ImageCount   int
	// FailReason is part of the reason a failing job ends with.
	FailReason string
	// Moderation is what the provider's moderation does with
	// ModerationPrompt, in ModerationReason's words.
	Moderation                         Moderation
	ModerationPrompt, ModerationReason string
	// WeirdRaw is the undocumented status a job whose prompt holds
	// simkit.WeirdMarker reports, as the adapter must show it; with
	// WeirdByProxy the simulator has no such marker, and the suite serves
	// the status in front of it.
	WeirdRaw     string
	WeirdByProxy bool
	// Expiring says which of its links expire.
	Expiring Expiring
	// Synchronous marks an API whose create answers with the result: the
	// job is done when Submit returns, it has no statuses of its own and
	// no id of the provider's (the adapter makes one), and a failure
	// after the work is the create's answer, possibly paid.
	Synchronous bool
	// NoKeyCheck marks an API with no documented read that makes nothing:
	// its adapter checks no key before the first create, whose refusal
	// of a wrong key is free (a made-up id asked for would be an answer
	// no document promises).
	NoKeyCheck bool
}

// Moderation is where a provider's API refuses content.
type Moderation int

const (
	// ModeratedJob: the job is made and ends refused (Status.Refused).
	ModeratedJob Moderation = iota
	// ModeratedCreate: the create is refused (400) and makes no job; the
	// API has no refused job to report.
	ModeratedCreate
	// ModeratedAnswer: the create is refused (400) and makes nothing on
	// the provider, and the adapter reports it as a job that ended
	// refused, so that it is recorded as such and never sent again.
	ModeratedAnswer
)

// Expiring is which of a provider's links expire.
type Expiring int

const (
	// ExpiresNever: its outputs come inline (Output.Data), behind no URL.
	ExpiresNever Expiring = iota
	// ExpiresOutputURL: an output's URL expires (simkit.Options.URLTTL
	// after it was handed out or the job finished).
	ExpiresOutputURL
	// ExpiresWatermarkFree: a video's watermark-free link expires
	// (URLTTL after it was minted); its output URLs do not.
	ExpiresWatermarkFree
)

// JSONRequest is a request of kind to target whose body is body as
// JSON: the conformance rows' requests.
func JSONRequest(kind addrs.Kind, target string, body map[string]any) Request {
	b, err := json.Marshal(body)
	if err != nil {
		panic(fmt.Sprintf("encoding a request body: %v", err))
	}
	return Request{Kind: kind, Target: target, Body: b}
}
