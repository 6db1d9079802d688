package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/catalog"
)

// Request is one generation as genform asks a provider for it.
type Request struct {
	// Kind is what it makes.
	Kind addrs.Kind
	// Target is where the request goes on the provider: the reference
	// service's endpoint path ("/v1/jobs/text2image"), or a model
	// ("fal-ai/flux/dev", "owner/name", "owner/name:version").
	Target string
	// Body is the request's canonical JSON as configuration built it: the
	// reference service's body, or the input object of a model.
	Body []byte
}

// Job is a job a provider made.
type Job struct {
	// ID is the provider's id of the job: shown, recorded as the
	// generation id, and what import takes.
	ID string
	// Kind is what the job makes.
	Kind addrs.Kind
	// Target is the request's Target (the model) when it is known: a job
	// adopted by import has no Handle, and a provider whose job URLs
	// name the model builds them from it.
	Target string
	// Handle is what the provider handed back to follow the job (a
	// status and a result URL), exactly as it is to be used again;
	// opaque to everything but the provider, and recorded with the job.
	// nil when the id is enough.
	Handle json.RawMessage
	// Answer is the job's result when the answer to the create request
	// carried it whole, on a provider that answers only once the work is
	// done (OpenAI's images, inline): the engine keeps its bytes and
	// records the answer with the job's id, in one step, before anything
	// else, since the provider keeps no copy. nil otherwise (Status and
	// Result follow the job).
	Answer *Result
}

// State is a job's status normalised to what genform acts on.
type State int

// The states of a job.
const (
	// Running covers every status before the end, and any status the
	// provider does not document: such a job is followed until the
	// generation's timeout, never taken as done or failed.
	Running State = iota
	// Done: the result can be fetched.
	Done
	// Failed: the job ended without a result.
	Failed
)

// String is the state's lowercase name.
func (s State) String() string {
	switch s {
	case Running:
		return "running"
	case Done:
		return "done"
	case Failed:
		return "failed"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Status is what a provider says of a job.
type Status struct {
	// Raw is the status as the provider sent it (printable): shown and
	// kept, never parsed again.
	Raw string
	// State is Raw normalised; Known is false for a status the provider
	// does not document (it then counts as Running).
	State State
	Known bool
	// Progress is the job's progress from 0 to 1, when the provider says.
	Progress float64
	// Reason is why a failed job failed, in the provider's words.
	Reason string
	// Refused is true when the provider refused the job for its content
	// (moderation): it is never sent again.
	Refused bool
	// Throttled is true when the provider reports the job held back by
	// the account's concurrency limit (Runway's THROTTLED): it is still
	// running, and the apply runs fewer jobs at once on that provider.
	Throttled bool
}

// Output is one file of a result.
type Output struct {
	Index int
	// ID is the provider's id of the file, when it gives one.
	ID string
	// URL is where the file is downloaded from; it may expire.
	URL, ThumbnailURL string
	// Data is the file's bytes when the provider answers with them inline
	// and hands out no URL (OpenAI's images): URL is then "", and genform
	// writes the file from Data. MediaType names their type
	// ("image/png"), when the provider says.
	Data      []byte
	MediaType string
}

// Result is what a finished job made.
type Result struct {
	// CreationID is the id the creation is known by (for the reference
	// service, the creation id the detail names).
	CreationID string
	// Kind is what the provider says the job made; 0 when it does not.
	Kind addrs.Kind
	// Detail is the provider's answer, as received (scrubbed of the
	// key), kept in the state.
	Detail json.RawMessage
	// Outputs are the files, in order.
	Outputs []Output
	// Prompt is the prompt the provider reports it used, "" when it
	// reports none.
	Prompt string
	// Version is the model version that ran, when the provider says.
	Version string
	// Usage is what the provider reports of the job's cost or usage
	// (Replicate's metrics), as received; nil when it reports none.
	Usage json.RawMessage
}

// Provider is one generation API genform can pay. Its methods may be
// called from many goroutines. A provider never sends a create request
// twice on its own (see Submit), never returns the key in an error, and
// answers every string a service hands out through apiclient.Printable.
type Provider interface {
	// ID is the provider's identity as it enters fingerprints: the
	// reference service's base URL or "simulator", or a provider's name
	// with its base URL when it is not the public one.
	ID() string
	// Submit sends the create request, once: it is sent again only on an
	// answer that proves no job was made and nothing charged (a 429, or a
	// connection never opened). An error that leaves the outcome unknown
	// wraps ErrPossiblyPaid; any other error is a refusal that made
	// nothing.
	Submit(ctx context.Context, r Request) (Job, error)
	// Status follows a job.
	Status(ctx context.Context, j Job) (Status, error)
	// Result fetches what a finished job made; for a job the provider
	// keeps its result for only a short time, as soon as it is done.
	Result(ctx context.Context, j Job) (*Result, error)
	// Download streams one output into dir (see apiclient.Client.Download).
	Download(ctx context.Context, url, dir, base string) (*apiclient.Downloaded, error)
	// CheckCredentials checks the key with a request that creates
	// nothing, where the provider has one; an error matching
	// apiclient.ErrUnauthorized is a key it refuses.
	CheckCredentials(ctx context.Context) error
}

// Recoverer is a provider that can find again a job whose create answer
// was lost, by listing its recent jobs and matching the request and the
// time it was sent.
type Recoverer interface {
	// Recover returns the job made for r, sent between since and until,
	// and whether there is one.
	Recover(ctx context.Context, r Request, since, until time.Time) (Job, bool, error)
}

// ErrPossiblyPaid is matched by the error of a create request whose
// outcome is not known: the provider may have made, and charged for, the
// job. It is never sent again by itself.
var ErrPossiblyPaid = apiclient.ErrAmbiguousCreate

// ErrCapReached is matched by the error of a request the provider refused
// because the account reached a cap that no wait within an apply lifts (a
// daily task limit, credits spent): nothing was made, and the apply sends
// nothing more to that provider, saying why in the provider's words. An
// adapter returns it only where the provider's reference documents the
// answer as such.
var ErrCapReached = errors.New("the provider account reached a cap")

// IsPossiblyPaid reports whether err leaves a create's outcome unknown.
func IsPossiblyPaid(err error) bool { return errors.Is(err, ErrPossiblyPaid) }

// Named is an error of a live provider as a whole (its key refused, its
// address out of reach) with the provider's name, so that what is shown
// says which provider, and which key or address to check.
type Named struct {
	Provider string
	Err      error
}

func (e *Named) Error() string { return e.Err.Error() }
func (e *Named) Unwrap() error { return e.Err }

// NameErr wraps err, when it is the refusal of the key, a cap of the
// account reached or the provider out of reach, as the error of live
// provider name; any other error, and an error of the reference service
// (which the service block configures, and messages call the service),
// is returned as it is.
func NameErr(name string, err error) error {
	if err == nil {
		return err
	}
	if t := catalog.Lookup(name); t == nil || t.Service {
		return err
	}
	if errors.Is(err, apiclient.ErrUnauthorized) || errors.Is(err, apiclient.ErrUnreachable) || errors.Is(err, ErrCapReached) {
		if _, named := errors.AsType[*Named](err); !named {
			return &Named{Provider: name, Err: err}
		}
	}
	return err
}

// WatermarkFreer is a provider whose videos have a watermark-free file
// behind a link minted on demand (the reference service).
type WatermarkFreer interface {
	WatermarkFreeURL(ctx context.Context, creationID string) (string, error)
}

// Config is what an adapter of a live provider is built from: the
// provider block's settings and the process's.
type Config struct {
	// BaseURL is where the provider's API paths hang from (scheme, host
	// and port); "" is the provider's public address.
	BaseURL string
	// Key is the provider's API key; never stored, printed or sent
	// anywhere but the provider's origin.
	Key string
	// RequestsPerMinute is one budget every request shares; 0 is the
	// provider's documented rate.
	RequestsPerMinute int
	// MaxDownloadSize is the largest output downloaded; 0 is the default.
	MaxDownloadSize int64
	// HTTPClient sends the requests; nil for the client's own.
	HTTPClient *http.Client
	// Debug receives the request trace (GENFORM_LOG=debug); nil for none.
	Debug io.Writer
	// UserAgent is sent with every request.
	UserAgent string
	// OnRetry hears of every retry.
	OnRetry func(context.Context, apiclient.RetryInfo)
	// ID, when set, is the provider's identity in fingerprints as the
	// caller names it: the reference service's (its base URL, or the
	// built-in simulator's name, whose address changes every run).
	ID string
}
