package provider

import (
	"context"

	"github.com/genform/genform/internal/apiclient"
)

// What every provider's requests go through (package apiclient) as the
// rest of genform meets it, behind the seam: the errors and types an
// adapter's calls return, and the hooks an apply hangs on them. The
// engine, the operations and the views import this package, never the
// client.
type (
	// Error is an error answer of a provider's API.
	Error = apiclient.Error
	// UnreachableError is a request that found no service at the base
	// URL.
	UnreachableError = apiclient.UnreachableError
	// LocalError is a file that could not be written here (a full disk,
	// a read-only file system): never retried.
	LocalError = apiclient.LocalError
	// Downloaded is a file a download wrote.
	Downloaded = apiclient.Downloaded
	// RetryInfo is one retry a client announces.
	RetryInfo = apiclient.RetryInfo
	// CreateGate is what a create request passes through just before it
	// is sent (see apiclient.CreateGate).
	CreateGate = apiclient.CreateGate
)

var (
	// ErrUnauthorized is matched by a refusal of the key.
	ErrUnauthorized = apiclient.ErrUnauthorized
	// ErrUnreachable is matched by a provider that cannot be reached.
	ErrUnreachable = apiclient.ErrUnreachable
	// ErrNotSent is matched by a create stopped before it was sent:
	// nothing was made, and nothing paid for.
	ErrNotSent = apiclient.ErrNotSent
)

// WithCreateGate returns ctx whose create requests pass through g.
func WithCreateGate(ctx context.Context, g *CreateGate) context.Context {
	return apiclient.WithCreateGate(ctx, g)
}

// WithRetryObserver returns ctx whose requests also report each retry to
// f.
func WithRetryObserver(ctx context.Context, f func(RetryInfo)) context.Context {
	return apiclient.WithRetryObserver(ctx, f)
}

// IsExpiredLink reports whether err is a download refused as a link that
// no longer leads to the file: a provider whose links expire hands out
// fresh ones when its job is fetched again.
func IsExpiredLink(err error) bool { return apiclient.IsExpiredLink(err) }

// WriteMedia writes data, a file a provider answered with inline, into
// dir as base.ext, as a download is written (see apiclient.WriteMedia).
func WriteMedia(dir, base string, data []byte, contentType string, maxSize int64) (*Downloaded, error) {
	return apiclient.WriteMedia(dir, base, data, contentType, maxSize)
}

// InlineMedia checks that data, a file a provider answered with inline,
// is an image or a video, and returns its media type and the extension
// its file is named with.
func InlineMedia(data []byte, contentType string) (mediaType, ext string, err error) {
	return apiclient.InlineMedia(data, contentType)
}
