// Package apiclient is the HTTP client every API genform pays goes
// through: the reference service's (package provider/reference) and each
// live provider's adapter (package provider/...). It owns what they share:
// authentication (the token, in each API's scheme, sent only to its
// origin), the one request budget, timeouts, retries and the rule for
// sending a create again, the create gate the apply records its intent
// through, error answers decoded whichever documented shape they take,
// answers size-capped and scrubbed of the token, the refusal of
// link-local addresses, and atomic streaming downloads of the outputs.
//
// It knows no API's paths, bodies or statuses: an adapter sends a Call
// (its method, path or handed-out URL, body, whether it is a paid create
// and which answers prove nothing was made, and how its success answers
// are read, such as the reference service's {"status","value"}
// envelope) and reads the answer. It does not decide what to generate,
// keep state, or print anything: a request trace goes to Config.Debug
// when the caller asks for one.
//
// # Request budget
//
// Every request the client sends, downloads and redirect hops included, draws
// from one budget of Config.RequestsPerMinute. Two mechanisms share it: a
// token bucket (golang.org/x/time/rate) with a burst of one second's worth
// paces requests so the service never sees a large spike, and a sliding-window
// log of the last RequestsPerMinute send times makes the cap exact: no 60
// second window ever holds more than RequestsPerMinute requests, whatever the
// burst. A token bucket alone allows burst + 60·rate per minute, so it would
// either exceed the budget or, sized to stay under it, waste part of it.
//
// # Retries and the create rule
//
// Reads (status, detail) and the watermark-free URL, which only mints a new
// link, are retried with exponential backoff and jitter on 429, on 5xx other
// than 501, and on network failures; Retry-After (seconds or an HTTP date) is
// honoured. A create request costs money, so it is sent again only where
// the failure proves that no job was made:
//
//   - 429: the service refused before doing anything, and asks to try
//     later;
//   - a transport failure before a connection was established (refused
//     dial, DNS or TLS failure): nothing can have reached the service.
//
// A 400 (an invalid request, or one its policy refuses), 401, 403 or 404
// is a refusal the service documents as making nothing: it is final, and
// nothing was paid for. Everything else after the request was sent is
// ambiguous, and never sent again: any 5xx (the service's own 500 "service
// error" can come after it made, and charged for, the job; a gateway's
// 502, 503 or 504 can come after it forwarded the request), another
// status, a timeout waiting for the answer, a reset connection, a
// cancelled context while the request was on the wire, a 2xx whose body
// was lost, unreadable or an error. The error then wraps
// ErrAmbiguousCreate, so the caller keeps its intent record and reports
// the generation as possibly paid for.
//
// Downloads are plain GETs and are retried on 429, 5xx, network failures,
// stalls and bodies cut short; each attempt starts a fresh temporary file.
// A failure to write the file here (a full disk, a read-only file system,
// a refused permission) is a *LocalError and is never retried: a
// syscall.Errno satisfies net.Error, so it must not be taken for a
// network failure.
//
// # Time bounds
//
// The caller's context bounds everything a call does together: its
// attempts, the waits between them and, for a download, the whole
// transfer (the engine gives each generation one context that ends at
// the service timeout). Inside it each attempt has its own deadline: an
// API request must be answered, body read, within Config.RequestTimeout;
// a download's answer must start within it, and its body must then bring
// at least Config.LowSpeedLimit bytes a second over every window of
// Config.LowSpeedTime (4 KiB over 30 s by default, like curl's
// --speed-limit and --speed-time), so that a server dripping a byte every
// few seconds fails rather than holds an apply. A retry whose wait would
// outlast the caller's deadline is not waited for: the call fails at once
// with the failure that made it retry.
//
// # What the service may hand out
//
// A download must be an image or a video twice over: its Content-Type is
// image/*, video/* or a generic one (application/octet-stream), and its
// first bytes are a known image or video format (net/http's sniffer, plus
// the ISO media and TIFF signatures it does not tell apart). An HTML page
// answered with 200, a JSON error or an empty body is refused, not saved
// as an output. The file is named after the type its bytes show. A file
// larger than Config.MaxDownloadSize (4 GiB by default), announced or
// streamed, is refused too.
//
// Ids are opaque words: one longer than 256 bytes, or holding a space or
// a character that cannot be printed, is refused wherever the service
// hands one out, and a creation detail whose creation_id is not the one
// asked for is refused. Every other string of the service that may be
// shown (messages, codes, statuses, the start of an error page) leaves
// the package through Printable, which escapes what a terminal would act
// on, so a service cannot set the window title, clear the screen or print
// a line of its own.
//
// Each retry is announced to Config.OnRetry before its wait (the request,
// the attempt, the answer's status or what the network did, the wait), so a
// caller can show it rather than go quiet for minutes.
//
// # An unreachable service and a refused token
//
// A connection that cannot be opened at all (refused, a host name that does
// not resolve, a failed TLS handshake) to a service that has never answered
// this client is a wrong address or a service that is not running: no wait
// will change it, so the request fails at once with an error matching
// ErrUnreachable that names the scheme and host:port. Once the service has
// answered, the same failure is a restart or a blip, and it is retried like
// any other network failure (for a create, only because nothing can have
// reached the service, as above).
//
// An answer that refuses the token matches ErrUnauthorized: every later
// request would be refused too. By default that is a 401 or a 403; a
// provider whose reference gives its 403 another meaning (a model the
// account may not run, a locked account) names its own statuses
// (Config.KeyRefusals, or Call.KeyRefusals for one call), and such a 403
// then fails its request alone. CheckCredentials learns this with one
// request that creates nothing, so a caller can check the token before it
// pays for anything.
//
// # Secrets
//
// The token is sent only to the base URL's origin, never written to the
// debug trace (the Authorization header shows as redacted) and never part of
// an error: errors carry the method and path. Every answer, error or
// success, has each echo of the token replaced before anything reads it:
// as sent, JSON-escaped (any \u escape included), HTML-escaped and
// percent-encoded. Scrubbing comes first, so an error page cut to 200
// characters cannot keep a prefix of the token, and a creation detail
// kept in the state holds none of it. An echo is one that stands as a
// whole token (after "Bearer ", in a query, in quotes, after an escape):
// a short token that a longer word holds ("sim" in "simulator") leaves
// the word whole.
package apiclient
