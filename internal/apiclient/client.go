package apiclient

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/genform/genform/internal/atomicfile"
)

// Defaults of Config.
const (
	DefaultRequestTimeout = 60 * time.Second
	DefaultMaxRetries     = 8
	DefaultUserAgent      = "genform"
	// DefaultMaxDownloadSize is the largest output downloaded: far above
	// any image or video clip the service makes, far below a disk.
	DefaultMaxDownloadSize = 4 << 30
	// DefaultLowSpeedLimit and DefaultLowSpeedTime fail a download that
	// brings fewer than 4 KiB a second over 30 seconds: a connection that
	// slow is broken or hostile (a server dripping a byte now and then
	// would keep it open for ever), and the download is retried.
	DefaultLowSpeedLimit = 4 << 10
	DefaultLowSpeedTime  = 30 * time.Second
)

// maxAnswerBytes caps an API answer: the largest documented value, a
// creation detail, is a few KiB, so a bigger answer is a broken or hostile
// service and becomes an error rather than an out-of-memory crash.
const maxAnswerBytes int64 = 4 << 20

// maxErrorBytes caps how much of an error answer is read: enough for any
// error object, little enough for a proxy's HTML page.
const maxErrorBytes = 64 << 10

// Config configures a Client.
type Config struct {
	// BaseURL is the service's address, e.g. http://127.0.0.1:8787; it may
	// carry a path prefix. Required.
	BaseURL string
	// Token is the bearer token; when empty no Authorization header is sent.
	Token string
	// AuthScheme is the scheme the token is sent with in the
	// Authorization header, downloads from the base URL's origin
	// included: "Bearer" when empty (fal's is "Key").
	AuthScheme string
	// PublicFiles says the service's files are public URLs that take no
	// token (a provider's CDN): a download never carries it, not even
	// from the base URL's origin.
	PublicFiles bool
	// KeyRefusals are the statuses of an error answer that the API
	// documents as refusing the token, which match ErrUnauthorized; nil
	// is 401 and 403. A provider whose 403 says something else (a model
	// the account may not run, a locked account) names 401 alone, so that
	// such an answer fails its request only. A call may name its own
	// (Call.KeyRefusals).
	KeyRefusals []int
	// RequestsPerMinute is one budget shared by every request this client
	// sends, downloads included unless DownloadsOutsideBudget; 0 means
	// unlimited.
	RequestsPerMinute int
	// DownloadsOutsideBudget leaves the downloads of files out of the
	// budget: a live provider limits the requests of its API, and serves
	// its files from elsewhere (a CDN).
	DownloadsOutsideBudget bool
	// RequestTimeout bounds each API request, its answer read in full
	// (default 60s). A download's answer must start within it; its body is
	// bounded by LowSpeedLimit instead, so a large file may take as long
	// as it needs. The caller's context bounds everything together.
	RequestTimeout time.Duration
	// LowSpeedLimit and LowSpeedTime fail a download attempt whose body
	// brings fewer than LowSpeedLimit bytes a second over any window of
	// LowSpeedTime (defaults 4 KiB and 30s; a negative LowSpeedLimit
	// fails only a window without a byte).
	LowSpeedLimit int64
	LowSpeedTime  time.Duration
	// MaxDownloadSize is the largest file a download writes, announced by
	// Content-Length or streamed (default 4 GiB); a larger one fails and
	// is not retried.
	MaxDownloadSize int64
	// MaxRetries is how many times a retryable failure is retried (default
	// 8); a negative value disables retries.
	MaxRetries int
	// HTTPClient sends the requests; nil means a client of the package's
	// own. Its Timeout and CheckRedirect are replaced in a copy: timeouts are
	// per request and redirects are followed (or refused) by this package.
	HTTPClient *http.Client
	// Debug, when non-nil, receives one trace line per request and answer
	// and per retry decision. The token is never written to it.
	Debug io.Writer
	// AllowRemoteHTTP permits a plain http BaseURL on a host other than the
	// loopback; without it such a URL is refused, since the token would
	// travel in clear text.
	AllowRemoteHTTP bool
	// UserAgent is sent with every request (default "genform").
	UserAgent string
	// OnRetry, when non-nil, is called before each wait for a retry, from
	// the goroutine making the call, with that call's context: a caller
	// that shares one client between tasks tells them apart by the values
	// it put in the context. It must be safe for concurrent use and quick.
	OnRetry func(ctx context.Context, info RetryInfo)
	// Sleep, when non-nil, is how the client waits (between retries, for
	// the request budget): tests observe waits without waiting. It must
	// return ctx's error when ctx ends first.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now, when non-nil, is the client's clock (what a Retry-After date
	// is read against, and the request budget's time).
	Now func() time.Time
}

// Client is the typed client of the generation service. It is safe for
// concurrent use; all its requests share one budget.
type Client struct {
	base       *url.URL
	token      string
	authScheme string
	secrets    [][]byte // the spellings of token that answers are scrubbed of
	hc         *http.Client
	timeout    time.Duration
	maxRetries int
	userAgent  string
	budget     *budget
	// fileBudget is what downloads draw from: budget, or nil (unlimited)
	// with Config.DownloadsOutsideBudget.
	fileBudget *budget

	// publicFiles: downloads carry no token (Config.PublicFiles).
	publicFiles bool
	// keyRefusals are the statuses that refuse the token
	// (Config.KeyRefusals); nil for 401 and 403.
	keyRefusals []int

	maxDownload   int64
	lowSpeedLimit int64
	lowSpeedTime  time.Duration
	onRetry       func(context.Context, RetryInfo)

	// files makes concurrent downloads durable together: one file-system
	// sync for all the outputs that finished at once, instead of two
	// syncs each (see atomicfile.Group).
	files atomicfile.Group

	// reached is set by the first answer of the service, whatever its
	// status. Until then a connection that cannot be opened means a wrong
	// address or a service that is not running, and fails at once; after
	// it, the same failure is a restart or a blip and is retried.
	reached atomic.Bool

	debugMu sync.Mutex
	debug   io.Writer

	// now, sleep and newBackOff are the clock and the retry schedule;
	// tests replace them to observe waits without waiting.
	now        func() time.Time
	sleep      func(context.Context, time.Duration) error
	newBackOff func() backoff.BackOff
}

// New checks cfg and returns a Client.
func New(cfg Config) (*Client, error) {
	base, err := parseBaseURL(cfg.BaseURL, cfg.AllowRemoteHTTP)
	if err != nil {
		return nil, err
	}
	if err := checkToken(cfg.Token); err != nil {
		return nil, err
	}
	if cfg.RequestsPerMinute < 0 || cfg.RequestsPerMinute > maxRequestsPerMinute {
		return nil, fmt.Errorf("requests per minute must be between 0 (unlimited) and %d, not %d",
			maxRequestsPerMinute, cfg.RequestsPerMinute)
	}
	if cfg.RequestTimeout < 0 || cfg.LowSpeedTime < 0 {
		return nil, fmt.Errorf("request timeout and low speed time must not be negative, got %s and %s", cfg.RequestTimeout, cfg.LowSpeedTime)
	}
	if cfg.MaxDownloadSize < 0 {
		return nil, fmt.Errorf("the largest download must not be negative, got %d", cfg.MaxDownloadSize)
	}
	c := &Client{
		base:       base,
		token:      cfg.Token,
		authScheme: cmp.Or(cfg.AuthScheme, "Bearer"),
		secrets:    secretForms(cfg.Token),
		timeout:    cfg.RequestTimeout,
		maxRetries: cfg.MaxRetries,
		userAgent:  cfg.UserAgent,
		onRetry:    cfg.OnRetry,
		debug:      cfg.Debug,
		now:        time.Now,
		sleep:      sleepContext,
		newBackOff: defaultBackOff,
	}
	c.publicFiles = cfg.PublicFiles
	c.keyRefusals = cfg.KeyRefusals
	if cfg.Sleep != nil {
		c.sleep = cfg.Sleep
	}
	if cfg.Now != nil {
		c.now = cfg.Now
	}
	if c.timeout == 0 {
		c.timeout = DefaultRequestTimeout
	}
	c.maxDownload = cmp.Or(cfg.MaxDownloadSize, DefaultMaxDownloadSize)
	c.lowSpeedTime = cmp.Or(cfg.LowSpeedTime, DefaultLowSpeedTime)
	c.lowSpeedLimit = max(cmp.Or(cfg.LowSpeedLimit, DefaultLowSpeedLimit), 0)
	switch {
	case c.maxRetries == 0:
		c.maxRetries = DefaultMaxRetries
	case c.maxRetries < 0:
		c.maxRetries = 0
	}
	if c.userAgent == "" {
		c.userAgent = DefaultUserAgent
	}
	if cfg.HTTPClient != nil {
		hc := *cfg.HTTPClient
		c.hc = &hc
	} else {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// parallelism may keep dozens of polls in flight against one host;
		// the default of 2 idle connections would redial for most of them.
		t.MaxIdleConnsPerHost = 64
		t.DialContext = c.dialContext
		c.hc = &http.Client{Transport: t}
	}
	c.hc.Timeout = 0
	c.hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.budget = newBudget(cfg.RequestsPerMinute,
		func() time.Time { return c.now() },
		func(ctx context.Context, d time.Duration) error { return c.sleep(ctx, d) })
	if !cfg.DownloadsOutsideBudget {
		c.fileBudget = c.budget
	}
	return c, nil
}

// BaseURL is the service's address as the client uses it.
func (c *Client) BaseURL() string { return c.base.String() }

func defaultBackOff() backoff.BackOff {
	return backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(500*time.Millisecond),
		backoff.WithMultiplier(2),
		backoff.WithRandomizationFactor(0.5),
		backoff.WithMaxInterval(30*time.Second),
		backoff.WithMaxElapsedTime(0), // MaxRetries ends the attempts
	)
}

func parseBaseURL(raw string, allowRemoteHTTP bool) (*url.URL, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, errors.New("the service base URL is empty")
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error repeats the URL, which may carry a password.
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err
		}
		return nil, fmt.Errorf("parsing the service base URL: %w", err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("service base URL %q: the scheme must be http or https", u.Redacted())
	case u.Host == "":
		return nil, fmt.Errorf("service base URL %q has no host", u.Redacted())
	case u.User != nil:
		return nil, fmt.Errorf("service base URL %q carries credentials; set the token instead", u.Redacted())
	case u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("service base URL %q must not have a query or fragment", u.Redacted())
	case u.Scheme == "http" && !isLoopback(u.Hostname()) && !allowRemoteHTTP:
		return nil, fmt.Errorf("service base URL %q: plain http to a host other than the loopback would send the token in clear text; use https", u.Redacted())
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkToken refuses a token that cannot be an HTTP header value, with a
// message that does not repeat it.
func checkToken(tok string) error {
	for _, r := range tok {
		if r < 0x21 || r > 0x7e {
			return errors.New("the token contains a space, control or non-ASCII character")
		}
	}
	return nil
}

// endpointURL joins the base URL and an API path.
func (c *Client) endpointURL(path string) string {
	// path is already escaped (creation ids go through url.PathEscape), so
	// it is appended to the text form rather than to url.URL.Path, which
	// would escape it twice.
	return c.base.String() + path
}

// sameOrigin reports whether u is served by the base URL's scheme, host
// and port: only there does the token go.
func (c *Client) sameOrigin(u *url.URL) bool {
	return u.Scheme == c.base.Scheme && strings.EqualFold(u.Hostname(), c.base.Hostname()) &&
		portOf(u) == portOf(c.base)
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

func isSentTransport(err error) bool {
	var te *transportError
	return errors.As(err, &te) && te.sent
}

// request is one API call.
type request struct {
	method string
	path   string
	body   []byte // nil for none
	// create marks a paid job-creation request, re-sent only when the
	// failure proves no job was made.
	create bool
	// url, when set, is an absolute URL the service handed out (a job's
	// status URL), used instead of path below the base URL; the token
	// goes there only when it is on the base URL's origin.
	url *url.URL
	// header holds the request's own headers.
	header map[string]string
	// decode, when set, turns a success answer's body (scrubbed) into
	// the value the caller reads (Call.Decode); without it the body is
	// returned as it is, once checked to be JSON.
	decode func([]byte) ([]byte, error)
	// refusals, for a create, are the statuses its API documents as
	// making nothing; nil means the reference service's.
	refusals []int
	// synchronous is bounded by the context's deadline alone.
	synchronous bool
	// maxAnswer bounds a success answer; 0 for maxAnswerBytes.
	maxAnswer int64
	// final may end the call on an error answer (Call.Final).
	final func(*Error) error
	// keyRefusals are the statuses that refuse the token for this call
	// (Call.KeyRefusals); nil for the client's.
	keyRefusals []int
	// contentType is the body's media type; "" for application/json.
	contentType string
}

func (r *request) op() string { return r.method + " " + r.path }

// classify tells the retry loop whether err may be retried, and for a
// create whether it is ambiguous (the job may exist). See the package
// documentation for the reasoning.
func (r *request) classify(err error) (retry, ambiguous bool) {
	if errors.Is(err, ErrLinkLocal) {
		return false, false // refused before a connection: nothing was sent
	}
	var te *transportError
	if errors.As(err, &te) {
		if r.create && te.sent {
			return false, true
		}
		return true, false
	}
	var ae *answerError
	if errors.As(err, &ae) {
		// A success status means the job was made; only its id was lost.
		return false, r.create
	}
	var se *Error
	if !errors.As(err, &se) {
		return false, false // local failures
	}
	if !r.create {
		return retryableStatus(se.HTTPStatus), false
	}
	if r.refusals != nil && se.HTTPStatus != http.StatusTooManyRequests {
		return false, !slices.Contains(r.refusals, se.HTTPStatus)
	}
	return createAnswer(se.HTTPStatus)
}

// createAnswer classifies the answer of a create request by its status.
// A create is paid for, so it is sent again only on the one answer the
// service documents as "nothing was done, try later" (429), and taken as
// a refusal that made nothing only on the answers it documents as such:
// 400 (an invalid request, a prompt its policy refuses), 401, 403 and 404.
// Every other answer is ambiguous, 5xx above all: a service can fail
// after it has made, and charged for, the job (a 500 carrying its own
// error body included), and a gateway can answer 502, 503 or 504 for a
// request it forwarded. Those are never sent again.
func createAnswer(status int) (retry, ambiguous bool) {
	switch status {
	case http.StatusTooManyRequests:
		return true, false
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
		return false, false
	}
	return false, true
}

// call sends r with retries and returns the value of the success envelope.
func (c *Client) call(ctx context.Context, r request) ([]byte, error) {
	bo := c.newBackOff()
	bo.Reset()
	var gate *CreateGate
	if r.create {
		gate = createGate(ctx)
	}
	for attempt := 1; ; attempt++ {
		if gate != nil && gate.Waiting != nil {
			if err := c.takeGated(ctx, gate.Waiting); err != nil {
				return nil, fmt.Errorf("%s: %w: %w", r.op(), ErrNotSent, err)
			}
		} else if err := c.budget.take(ctx); err != nil {
			return nil, fmt.Errorf("%s: %w", r.op(), err)
		}
		if gate != nil && gate.Send != nil {
			if err := gate.Send(); err != nil {
				return nil, err
			}
		}
		value, err := c.attempt(ctx, r, attempt)
		if err == nil {
			return value, nil
		}
		if se, ok := errors.AsType[*Error](err); ok && r.final != nil {
			if fe := r.final(se); fe != nil {
				return nil, fe
			}
		}
		retry, ambiguous := r.classify(err)
		if ctx.Err() != nil {
			// Cancelled (Ctrl-C) while a create was on the wire: the job may
			// exist all the same, and the caller must not forget it.
			if ambiguous || (r.create && isSentTransport(err)) {
				return nil, fmt.Errorf("%w: %s: %w", ErrAmbiguousCreate, r.op(), ctx.Err())
			}
			return nil, fmt.Errorf("%s: %w", r.op(), ctx.Err())
		}
		if ambiguous {
			return nil, fmt.Errorf("%w: %w", ErrAmbiguousCreate, err)
		}
		if !retry {
			return nil, err
		}
		if err := c.backoffBefore(ctx, bo, attempt, r.op(), err); err != nil {
			return nil, err
		}
	}
}

// takeGated waits for the budget until ctx or waiting ends: a create
// that has not left yet is stopped by either.
func (c *Client) takeGated(ctx, waiting context.Context) error {
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(waiting, func() { cancel(context.Cause(waiting)) })
	defer stop()
	if err := c.budget.take(wctx); err != nil {
		if cause := context.Cause(wctx); cause != nil {
			return cause
		}
		return err
	}
	if err := waiting.Err(); err != nil {
		return context.Cause(waiting)
	}
	return nil
}

// attempt sends r once and decodes the answer.
func (c *Client) attempt(ctx context.Context, r request, n int) ([]byte, error) {
	cancel := context.CancelFunc(func() {})
	if !r.synchronous {
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
	}
	defer cancel()

	// Until a connection is established nothing can have reached the
	// service. After that, some bytes may have: the transport may still be
	// writing when a timeout ends the exchange, so "written" cannot be known
	// for sure, and a create that failed past this point is ambiguous.
	var connected atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { connected.Store(true) },
	})
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	target := c.endpointURL(r.path)
	if r.url != nil {
		// A URL the service handed out (a status URL) is followed as a
		// media URL is: never to a link-local address.
		if err := c.checkLinkLocal(r.url, "request"); err != nil {
			return nil, fmt.Errorf("%s: %w", r.op(), err)
		}
		target = r.url.String()
	}
	req, err := http.NewRequestWithContext(ctx, r.method, target, body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.op(), err)
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if r.body != nil {
		req.Header.Set("Content-Type", cmp.Or(r.contentType, "application/json"))
	}
	if c.token != "" && (r.url == nil || c.sameOrigin(r.url)) {
		req.Header.Set("Authorization", c.authScheme+" "+c.token)
	}

	start := time.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		err = c.transportFailure(ctx, err)
		c.traceResult(req, n, 0, err, start)
		if !connected.Load() && !c.reached.Load() {
			if ue := c.unreachable(ctx, r.op(), err); ue != nil {
				return nil, ue
			}
		}
		return nil, &transportError{op: r.op(), sent: connected.Load(), err: err}
	}
	defer resp.Body.Close()
	c.reached.Store(true)
	c.traceResult(req, n, resp.StatusCode, nil, start)

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
		e := newError(r.op(), resp.StatusCode, resp.Header, c.scrubBody(b), c.now())
		e.key = c.keyVerdict(r, resp.StatusCode)
		if resp.StatusCode >= 300 && resp.StatusCode <= 399 {
			e.Message = "unexpected redirect"
			if loc, err := resp.Location(); err == nil {
				e.Message += " to " + redactURL(loc)
			}
			e.Message += "; check the service base URL"
		}
		return nil, c.scrubError(e)
	}

	limit := cmp.Or(r.maxAnswer, maxAnswerBytes)
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		// The status line arrived, so the request was certainly sent.
		return nil, &transportError{op: r.op(), sent: true,
			err: fmt.Errorf("reading the answer: %w", c.transportFailure(ctx, err))}
	}
	if int64(len(b)) > limit {
		return nil, &answerError{op: r.op(), err: fmt.Errorf("the answer is larger than %d MiB", limit>>20)}
	}
	if r.decode == nil {
		b = c.scrubBody(b)
		if !json.Valid(b) {
			return nil, &answerError{op: r.op(), err: errors.New("the answer is not JSON")}
		}
		return b, nil
	}
	value, err := r.decode(c.scrubBody(b))
	if err != nil {
		var se *Error
		if errors.As(err, &se) {
			se.Op, se.HTTPStatus = r.op(), resp.StatusCode
			return nil, c.scrubError(se)
		}
		return nil, &answerError{op: r.op(), err: fmt.Errorf("decoding the answer: %w", err)}
	}
	return value, nil
}

// keyVerdict says whether status, answering r, refuses the token: a
// status of the call's key refusals, or of the client's, or by default a
// 401 or 403.
func (c *Client) keyVerdict(r request, status int) keyVerdict {
	statuses := r.keyRefusals
	if statuses == nil {
		statuses = c.keyRefusals
	}
	switch {
	case statuses == nil:
		return keyDefault
	case slices.Contains(statuses, status):
		return keyRefused
	}
	return keyNot
}

// transportFailure rewrites a failure of the HTTP exchange so it names no
// full URL (a media URL's query may be a signature) and reads well.
func (c *Client) transportFailure(ctx context.Context, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errStalled):
		return fmt.Errorf("%w: fewer than %d bytes a second arrived over %s", errStalled, max(c.lowSpeedLimit, 1), c.lowSpeedTime)
	case errors.Is(cause, errNoAnswer):
		return fmt.Errorf("%w within %s", errNoAnswer, c.timeout)
	}
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
		return fmt.Errorf("no answer within %s: %w", c.timeout, err)
	}
	return err
}

// scrubError removes any echo of the token from an error answer, so that a
// service that repeats request headers cannot leak it into logs.
func (c *Client) scrubError(e *Error) *Error {
	if c.token == "" {
		return e
	}
	// The body was scrubbed before it was decoded; what decoding turned
	// back into the token (a \u escape) goes here.
	e.Message = c.scrubText(e.Message)
	e.Code = c.scrubText(e.Code)
	e.Details = c.scrubBody(e.Details)
	return e
}

// redact removes the token from an error leaving the client through an
// exported method. scrubError cleans the service's error answers; this
// catches the rest, such as a value of a success answer quoted in a
// decoding error, so that a service echoing what it received cannot get
// the token into a log. The error chain is kept for errors.Is and As.
func (c *Client) redact(errp *error) {
	if *errp == nil || len(c.secrets) == 0 {
		return
	}
	if msg := (*errp).Error(); c.scrubText(msg) != msg {
		*errp = &redactedError{err: *errp, msg: c.scrubText(msg)}
	}
}

// redactedError is an error whose message had the token removed.
type redactedError struct {
	err error
	msg string
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redactURL shows a URL without credentials or query: enough to tell which
// request it was, nothing that grants access.
func redactURL(u *url.URL) string {
	v := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	s := v.String()
	if u.RawQuery != "" {
		s += "?…"
	}
	return s
}

func (c *Client) traceResult(req *http.Request, attempt, status int, err error, start time.Time) {
	if c.debug == nil {
		return
	}
	auth := ""
	if req.Header.Get("Authorization") != "" {
		auth = " authorization=[redacted]"
	}
	result := statusText(status)
	if err != nil {
		result = "error: " + err.Error()
	}
	c.tracef("%s %s attempt=%d%s -> %s (%s)", req.Method, redactURL(req.URL), attempt, auth,
		result, time.Since(start).Round(time.Microsecond))
}

func (c *Client) tracef(format string, args ...any) {
	if c.debug == nil {
		return
	}
	line := c.scrubText(fmt.Sprintf(format, args...))
	c.debugMu.Lock()
	defer c.debugMu.Unlock()
	fmt.Fprintf(c.debug, "service: %s\n", line)
}

// backoffBefore waits before retry number attempt+1 of op, which failed
// with err: the next backoff step, or the service's Retry-After when that
// is longer; Config.OnRetry hears of it first. It returns the error to
// give up with when the retries are spent or ctx ends the wait.
func (c *Client) backoffBefore(ctx context.Context, bo backoff.BackOff, attempt int, op string, err error) error {
	if attempt > c.maxRetries {
		return fmt.Errorf("giving up after %d attempts: %w", attempt, err)
	}
	wait := bo.NextBackOff()
	if wait == backoff.Stop {
		return fmt.Errorf("giving up after %d attempts: %w", attempt, err)
	}
	var se *Error
	if errors.As(err, &se) && se.RetryAfter > wait {
		wait = se.RetryAfter
	}
	if deadline, ok := ctx.Deadline(); ok && time.Now().Add(wait).After(deadline) {
		// The caller's deadline (a generation's timeout) would end the
		// wait: say why the request failed rather than that time ran out.
		return fmt.Errorf("giving up after %d attempts, as the next would come after the deadline: %w", attempt, err)
	}
	c.tracef("retrying %s in %s (attempt %d of %d): %v", op, wait.Round(time.Millisecond), attempt+1, c.maxRetries+1, err)
	c.reportRetry(ctx, retryInfo(op, attempt, c.maxRetries+1, wait, err))
	if err := c.sleep(ctx, wait); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

// Call is one request of a provider's own JSON API, for the providers'
// adapters (package provider/...): the client sends it with its budget,
// timeouts, retries, token and trace, and the rule for creates.
type Call struct {
	Method string
	// Path is below the base URL, already escaped; URL, when set, is an
	// absolute URL the provider handed out (a status or result URL), used
	// as it is: the token goes there only on the base URL's origin.
	Path string
	URL  string
	// Body is the body sent, JSON unless ContentType says otherwise; nil
	// for none.
	Body []byte
	// ContentType is Body's media type when it is not JSON (a
	// multipart/form-data body with its boundary); "" is
	// application/json.
	ContentType string
	// Create marks a paid job creation: it is sent again only on an
	// answer that proves nothing was made (429, or a connection never
	// opened); its other failures wrap ErrAmbiguousCreate, or are
	// refusals: the statuses of Refusals, or without them 400, 401, 403
	// and 404.
	Create bool
	// Refusals are the statuses the provider documents as making, and
	// charging, nothing.
	Refusals []int
	// KeyRefusals, when set, are the statuses that refuse the token for
	// this call (matching ErrUnauthorized), in place of the client's
	// (Config.KeyRefusals): a read of the account itself, whose 403 can
	// be about nothing but the key or its account.
	KeyRefusals []int
	// Header holds headers of the call's own (an API version, a Prefer).
	Header map[string]string
	// Synchronous marks a call answered only when the work is done (an
	// image generated while the request waits): it is bounded by its
	// context's deadline, the generation's timeout, instead of the
	// client's request timeout.
	Synchronous bool
	// MaxAnswer is the largest success answer read, in bytes; 0 is 4 MiB.
	// An answer that carries files inline (base64 images) needs more.
	MaxAnswer int64
	// Final, when set, sees every error answer first: an error it returns
	// ends the call at once, never retried (a daily cap reached, which a
	// provider answers 429 like a passing throttle). It must wrap the
	// *Error it was given.
	Final func(*Error) error
	// Decode, when set, reads a success answer (the token scrubbed from
	// it) into the value Do returns: an API that wraps its answers in an
	// envelope. An *Error it returns is an error the answer carries in
	// place of a value (Do fills in its request and status); any other
	// error is an answer that cannot be used (for a create, possibly
	// paid). Without it, Do returns the body once it is checked to be
	// JSON.
	Decode func(body []byte) ([]byte, error)
}

// Probe sends call, a read that makes nothing, to learn whether the
// service accepts the token: only a refusal of the token (an error
// matching ErrUnauthorized), a service out of reach, and one that keeps
// failing (429 or 5xx once the retries are spent) are errors. Any other
// answer, a success whatever its body or another refusal, says nothing
// against the token.
func (c *Client) Probe(ctx context.Context, call Call) error {
	_, err := c.Do(ctx, call)
	var se *Error
	var ae *answerError
	switch {
	case err == nil, errors.As(err, &ae):
		return nil
	case errors.Is(err, ErrUnauthorized):
		return err
	case errors.As(err, &se) && !retryableStatus(se.HTTPStatus):
		return nil
	}
	return err
}

// Do sends call and returns the body of its success answer, as received
// but for the token scrubbed from it. An answer with another status is an
// *Error whose message comes from the provider's error body: the
// reference service's shapes, or a "detail" or "error" member.
func (c *Client) Do(ctx context.Context, call Call) (_ []byte, err error) {
	defer c.redact(&err)
	r := request{method: call.Method, path: call.Path, body: call.Body, create: call.Create, header: call.Header, decode: call.Decode, refusals: call.Refusals,
		synchronous: call.Synchronous, maxAnswer: call.MaxAnswer, final: call.Final,
		keyRefusals: call.KeyRefusals, contentType: call.ContentType}
	if call.URL != "" {
		u, err := url.Parse(call.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%s: the URL the provider handed out is not an http(s) URL", call.Method)
		}
		r.url = u
		r.path = u.EscapedPath()
	}
	return c.call(ctx, r)
}
