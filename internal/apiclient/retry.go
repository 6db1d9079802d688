package apiclient

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"
)

// RetryInfo describes a request that failed in a way that may pass and is
// about to be sent again (Config.OnRetry).
type RetryInfo struct {
	// Op is the request, e.g. "POST /v1/jobs/text2image", or
	// "GET http://host/media/…" for a download (never with its query).
	Op string
	// Attempt is the number of the attempt the wait leads to: 2 for the
	// first retry.
	Attempt int
	// MaxAttempts is how many attempts the client makes at most.
	MaxAttempts int
	// HTTPStatus is the status of the answer that failed, 0 when no
	// answer came (a timeout, a dropped connection, a stalled download).
	HTTPStatus int
	// Wait is how long the client waits before the next attempt: the
	// backoff, or the service's Retry-After when that is longer.
	Wait time.Duration
	// Err is the failure.
	Err error
}

// Reason says in a few words why the request is retried: the answer's
// status ("429 Too Many Requests", "503 Service Unavailable") or, when no
// answer came, what the network did.
func (i RetryInfo) Reason() string {
	if i.HTTPStatus != 0 {
		return statusText(i.HTTPStatus)
	}
	var te *transportError
	if errors.As(i.Err, &te) {
		return te.err.Error()
	}
	if i.Err != nil {
		return i.Err.Error()
	}
	return "unknown failure"
}

// retryInfo is what backoffBefore reports of err.
func retryInfo(op string, attempt, maxAttempts int, wait time.Duration, err error) RetryInfo {
	info := RetryInfo{Op: op, Attempt: attempt + 1, MaxAttempts: maxAttempts, Wait: wait, Err: err}
	var se *Error
	if errors.As(err, &se) {
		info.HTTPStatus = se.HTTPStatus
	}
	return info
}

// unreachable turns a failure to open a connection into an
// *UnreachableError, or returns nil when err is something else. It is
// asked only about failures that came before a connection was made; the
// caller decides whether the service has answered before (then the
// failure is a restart or a blip, worth retrying).
func (c *Client) unreachable(ctx context.Context, op string, err error) error {
	if ctx.Err() != nil {
		return nil // the request's own timeout or the caller's cancellation
	}
	reason := unreachableReason(c.base.Scheme, err)
	if reason == "" {
		return nil
	}
	return &UnreachableError{
		Op:     op,
		Scheme: c.base.Scheme,
		Addr:   net.JoinHostPort(c.base.Hostname(), portOf(c.base)),
		Reason: reason,
		Err:    err,
	}
}

// unreachableReason names what failed when err is a refused or failed
// dial, a failed name lookup or, for https, a failed TLS handshake; ""
// otherwise.
func unreachableReason(scheme string, err error) string {
	var de *net.DNSError
	if errors.As(err, &de) {
		if de.IsNotFound {
			return fmt.Sprintf("the host name %s does not resolve", de.Name)
		}
		return fmt.Sprintf("looking up the host name %s failed: %s", de.Name, de.Err)
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		switch {
		case errors.Is(err, syscall.ECONNREFUSED):
			return "connection refused (nothing listens on that port)"
		case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
			return "no route to the host"
		case oe.Timeout():
			return "the connection attempt timed out"
		}
		return "connecting failed: " + oe.Err.Error()
	}
	var rhe tls.RecordHeaderError
	if errors.As(err, &rhe) || errors.Is(err, http.ErrSchemeMismatch) {
		return "TLS handshake failed: the server does not speak TLS (does the base URL need http rather than https?)"
	}
	var cve *tls.CertificateVerificationError
	if errors.As(err, &cve) {
		return "TLS handshake failed: " + cve.Err.Error()
	}
	if scheme == "https" {
		// The handshake is the only step between the dial and a
		// connection, so whatever else failed there failed in it
		// (an alert from the server, a protocol version it refuses).
		return "TLS handshake failed: " + strings.TrimPrefix(err.Error(), "tls: ")
	}
	return ""
}

// reportRetry hands info to Config.OnRetry.
func (c *Client) reportRetry(ctx context.Context, info RetryInfo) {
	if c.onRetry != nil {
		c.onRetry(ctx, info)
	}
	if f, ok := ctx.Value(retryObserverKey{}).(func(RetryInfo)); ok {
		f(info)
	}
}

type retryObserverKey struct{}

// WithRetryObserver returns ctx whose requests also report each retry to
// f, besides the client's OnRetry: an apply narrows how many jobs it runs
// on a provider when the provider answers 429.
func WithRetryObserver(ctx context.Context, f func(RetryInfo)) context.Context {
	return context.WithValue(ctx, retryObserverKey{}, f)
}

// CreateGate is what a create request passes through on its way out: the
// apply records its intent to pay only once the request is about to be
// sent, after its wait for the request budget, so that a create still
// waiting when the process dies was never sent and is not taken for one
// that may have been paid for.
type CreateGate struct {
	// Waiting ends the wait for the budget: a create whose Waiting ends
	// before it leaves is not sent, and fails with Waiting's error
	// (wrapping ErrNotSent). nil: the request's own context alone.
	Waiting context.Context
	// Send is called before each attempt of the create is sent, after its
	// wait; an error stops the request unsent, and is returned as it is.
	Send func() error
}

// ErrNotSent is matched by the error of a create request stopped before
// it was sent: nothing was made, and nothing paid for.
var ErrNotSent = errors.New("the request was not sent")

type createGateKey struct{}

// WithCreateGate returns ctx whose create requests pass through g.
func WithCreateGate(ctx context.Context, g *CreateGate) context.Context {
	return context.WithValue(ctx, createGateKey{}, g)
}

// createGate is the gate of ctx, or nil.
func createGate(ctx context.Context) *CreateGate {
	g, _ := ctx.Value(createGateKey{}).(*CreateGate)
	return g
}

// PassCreateGate is what a create sent without Client.Do (a test's fake
// provider) calls just before it is sent: the gate's Send, if ctx has a
// gate. Every create Client.Do sends passes it by itself.
func PassCreateGate(ctx context.Context) error {
	if g := createGate(ctx); g != nil && g.Send != nil {
		return g.Send()
	}
	return nil
}
