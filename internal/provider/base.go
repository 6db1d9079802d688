package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/genform/genform/internal/apiclient"
)

// Base is what every live provider's adapter holds alike, and embeds:
// the one client all its requests go through, its identity, and the
// request that checks its key. It gives the adapter ID, Download and
// CheckCredentials; the adapter keeps its paths, bodies and statuses.
type Base struct {
	// Client sends every request of the adapter.
	Client *apiclient.Client
	id     string
	check  apiclient.Call
}

// NewBase is the base of the adapter of provider name, as cfg configures
// it: its client (NewClient with publicURL and how it takes its key), its
// identity (IDOf), and check, a read that makes nothing and that a key
// the provider refuses fails (its account, its credit balance), or the
// zero Call where the provider documents none. An error names the
// provider.
func NewBase(name string, cfg Config, publicURL string, auth Auth, check apiclient.Call) (Base, error) {
	c, err := NewClient(cfg, publicURL, auth)
	if err != nil {
		return Base{}, fmt.Errorf("%s: %w", name, err)
	}
	return Base{Client: c, id: IDOf(name, c, publicURL), check: check}, nil
}

// ID is the provider's name, with the base URL when it is not the
// provider's own.
func (b *Base) ID() string { return b.id }

// Download streams one output into dir.
func (b *Base) Download(ctx context.Context, url, dir, base string) (*apiclient.Downloaded, error) {
	return b.Client.Download(ctx, url, dir, base)
}

// CheckCredentials sends the base's check, which makes nothing: a key
// the provider refuses matches apiclient.ErrUnauthorized. A base made
// without a check (an API with no documented read that makes nothing)
// sends nothing: a wrong key is refused, free, at the first create.
func (b *Base) CheckCredentials(ctx context.Context) error {
	if b.check.Path == "" {
		return nil
	}
	_, err := b.Client.Do(ctx, b.check)
	return err
}

// Fetch reads one object of the provider (a job, a list page) with a GET
// of path carrying header, and decodes it into a T; it returns the
// answer as received too. what names the object in an error
// ("prediction abc").
func Fetch[T any](ctx context.Context, b *Base, path string, header map[string]string, what string) (*T, []byte, error) {
	return FetchCall[T](ctx, b, apiclient.Call{Method: http.MethodGet, Path: path, Header: header}, what)
}

// FetchJob is Fetch of the job the provider handed out id for, at
// prefix followed by the id escaped: an id no provider hands out is
// refused before anything is sent. name is the provider's, and noun
// names its jobs ("task").
func FetchJob[T any](ctx context.Context, b *Base, name, noun, prefix, id string, header map[string]string) (*T, []byte, error) {
	if !ValidID(id) {
		return nil, nil, fmt.Errorf("%s: %q is not a %s id", name, id, noun)
	}
	return Fetch[T](ctx, b, prefix+url.PathEscape(id), header, noun+" "+id)
}

// FetchCall is Fetch of a call of its own (a URL the provider handed
// out).
func FetchCall[T any](ctx context.Context, b *Base, call apiclient.Call, what string) (*T, []byte, error) {
	body, err := b.Client.Do(ctx, call)
	if err != nil {
		return nil, nil, err
	}
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, nil, fmt.Errorf("GET %s: decoding it: %w", what, err)
	}
	return &v, body, nil
}

// Fail marks s failed for reason, or for fallback ("the task failed")
// when the provider gave none.
func (s *Status) Fail(reason, fallback string) {
	s.State, s.Reason = Failed, reason
	if s.Reason == "" {
		s.Reason = fallback
	}
}

// FailureText is a failed job's reason as shown: the provider's message
// with its code in parentheses (either may be ""), trimmed, printable.
func FailureText(msg, code string) string {
	if code != "" {
		msg += " (" + code + ")"
	}
	return apiclient.Printable(strings.TrimSpace(msg))
}
