package apiclient

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/genform/genform/internal/atomicfile"
)

// maxRedirects bounds the redirect hops of one download.
const maxRedirects = 10

// downloadBufferSize is the one buffer a download streams through: memory
// stays flat whatever the file size.
const downloadBufferSize = 32 << 10

// tempSuffix ends the name of every temporary download file, so leftovers
// of a killed process can be recognised (IsTempFile) and never mistaken
// for a user's file.
const tempSuffix = ".genform-tmp"

// Downloaded describes a file Download wrote.
type Downloaded struct {
	// Path is dir/base.ext.
	Path string
	// Size is the number of bytes written.
	Size int64
	// SHA256 is the lowercase hex digest of the bytes written.
	SHA256 string
	// ContentType is the Content-Type the server sent.
	ContentType string
}

// IsTempFile reports whether name (a base name) is a temporary file left by
// a download that was killed before it finished; such files may be removed.
func IsTempFile(name string) bool {
	return strings.HasPrefix(name, ".") && strings.HasSuffix(name, tempSuffix)
}

// Download streams mediaURL into dir (created if missing) as base.ext, ext
// naming the image or video type the file is (see mediaType). It is
// DownloadSized without an expected size.
func (c *Client) Download(ctx context.Context, mediaURL, dir, base string) (*Downloaded, error) {
	return c.DownloadSized(ctx, mediaURL, dir, base, 0)
}

// DownloadSized streams mediaURL into dir as base.ext through a temporary
// file in dir, hashing while it streams, checks the byte count against
// Content-Length and, when expectSize > 0, against expectSize, then syncs
// the file, renames it into place and syncs dir (the client's concurrent
// downloads share their syncs: atomicfile.Group). On failure the temporary
// file is removed and an existing file of the final name is left as it was.
//
// Only http and https URLs are followed, redirects included, and none
// on a link-local address but the base URL's own host (ErrLinkLocal). The token is
// sent, as the API takes it (Config.AuthScheme), only when the URL is on
// the base URL's origin, and never when the files are public
// (Config.PublicFiles). The answer must be an
// image or a video by its Content-Type and by its first bytes (see
// mediaType), and no larger than Config.MaxDownloadSize, announced or
// streamed. A download fails when its answer does not start within the
// request timeout, or when it brings fewer than Config.LowSpeedLimit bytes
// a second over Config.LowSpeedTime; never because it is long. Truncated
// bodies, 429, 5xx and network failures are retried; a file that cannot be
// written here fails at once with a *LocalError. Temporary files of
// earlier downloads of base into dir, left by a killed process, are
// removed first, so two downloads of one base into one dir must not run at
// once.
func (c *Client) DownloadSized(ctx context.Context, mediaURL, dir, base string, expectSize int64) (_ *Downloaded, err error) {
	defer c.redact(&err)
	u, err := parseMediaURL(mediaURL)
	if err != nil {
		return nil, err
	}
	if err := c.checkLinkLocal(u, "download"); err != nil {
		return nil, err
	}
	if base == "" || base == "." || base == ".." || strings.ContainsAny(base, "/\\\x00") {
		return nil, fmt.Errorf("downloading %s: invalid file name %q", redactURL(u), base)
	}
	// A directory this call creates holds no leftovers to look for: in an
	// apply that is every output's, and looking costs four system calls.
	if err := os.Mkdir(dir, 0o755); err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, &LocalError{Path: dir, Err: fmt.Errorf("creating the output directory: %w", err)}
		}
		removeLeftovers(dir, base)
	}
	bo := c.newBackOff()
	bo.Reset()
	for attempt := 1; ; attempt++ {
		d, err := c.downloadOnce(ctx, u, dir, base, expectSize, attempt)
		if err == nil {
			return d, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("downloading %s: %w", redactURL(u), ctx.Err())
		}
		if !IsRetryable(err) {
			return nil, err
		}
		if err := c.backoffBefore(ctx, bo, attempt, "GET "+redactURL(u), err); err != nil {
			return nil, err
		}
	}
}

// removeLeftovers removes the temporary files that downloads of base into
// dir left when their process was killed: the download about to start
// replaces them, and nothing else would ever remove them. Failing to is
// harmless, so errors are ignored.
func removeLeftovers(dir, base string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if n := e.Name(); e.Type().IsRegular() && IsTempFile(n) && strings.HasPrefix(n, "."+base+".") {
			os.Remove(filepath.Join(dir, n))
		}
	}
}

func parseMediaURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse's error repeats the whole URL; say less.
		return nil, errors.New("invalid media URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("refusing to download a %q URL: only http and https are followed", u.Scheme)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("media URL %s has no host", redactURL(u))
	}
	return u, nil
}

// downloadOnce makes one attempt, redirects included.
func (c *Client) downloadOnce(ctx context.Context, u *url.URL, dir, base string, expectSize int64, attempt int) (_ *Downloaded, err error) {
	op := "GET " + redactURL(u)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// The answer must start within the request timeout; the wait for the
	// budget is not counted (getFollowing stops the timer around it).
	answer := time.AfterFunc(c.timeout, func() { cancel(errNoAnswer) })
	defer answer.Stop()

	resp, err := c.getFollowing(ctx, u, op, attempt, answer)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	answer.Stop()
	// From here on the body must keep coming at the minimum speed.
	speed := c.watchSpeed(func() { cancel(errStalled) })
	defer speed.stop()

	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
		e := newError(op, resp.StatusCode, resp.Header, c.scrubBody(b), c.now())
		e.media = true
		return nil, c.scrubError(e)
	}
	if expectSize > 0 && resp.ContentLength >= 0 && resp.ContentLength != expectSize {
		return nil, fmt.Errorf("%s: the server announces %d bytes, %d were expected", op, resp.ContentLength, expectSize)
	}
	if resp.ContentLength > c.maxDownload {
		return nil, fmt.Errorf("%s: the server announces %d bytes, more than the largest download allowed (%d bytes; service.max_download_size)", op, resp.ContentLength, c.maxDownload)
	}
	want := resp.ContentLength
	if want < 0 && expectSize > 0 {
		want = expectSize
	}
	readErr := func(n int64, rerr error) error {
		return &transportError{op: op, err: fmt.Errorf("after %d bytes: %w", n, c.transportFailure(ctx, rerr))}
	}

	// The first bytes say whether the answer is media, and name the file.
	ct := resp.Header.Get("Content-Type")
	head := make([]byte, sniffLen)
	nh := 0
	var rerr error
	for nh < len(head) && rerr == nil {
		var nr int
		nr, rerr = resp.Body.Read(head[nh:])
		nh += nr
		speed.add(nr)
	}
	head = head[:nh]
	switch {
	case rerr != nil && rerr != io.EOF:
		return nil, readErr(int64(nh), rerr)
	case rerr == io.EOF && want >= 0 && int64(nh) != want:
		return nil, &transportError{op: op, err: fmt.Errorf("truncated: got %d of %d bytes", nh, want)}
	}
	mt, err := mediaTypeOf(ct, head)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	final := filepath.Join(dir, base+"."+extensionOf(mt))

	h := sha256.New()
	n := int64(nh)
	err = atomicfile.Write(final, 0o644, func(tmp io.Writer) error {
		if _, werr := tmp.Write(head); werr != nil {
			return werr
		}
		h.Write(head)
		buf := make([]byte, downloadBufferSize)
		for rerr == nil {
			var nr int
			nr, rerr = resp.Body.Read(buf)
			if nr > 0 {
				speed.add(nr)
				n += int64(nr)
				if want >= 0 && n > want {
					return &transportError{op: op, err: fmt.Errorf("more than the %d bytes announced", want)}
				}
				if n > c.maxDownload {
					return &tooLargeError{op: op, max: c.maxDownload}
				}
				if _, werr := tmp.Write(buf[:nr]); werr != nil {
					return werr
				}
				h.Write(buf[:nr])
			}
		}
		if rerr != io.EOF {
			return readErr(n, rerr)
		}
		if want >= 0 && n != want {
			return &transportError{op: op, err: fmt.Errorf("truncated: got %d of %d bytes", n, want)}
		}
		return nil
	}, atomicfile.TempPattern("."+base+".*"+tempSuffix), atomicfile.InGroup(&c.files))
	var te *transportError
	var tl *tooLargeError
	switch {
	case errors.As(err, &te), errors.As(err, &tl):
		return nil, err // they name op already
	case err != nil:
		// Everything else failed here, not on the wire: creating,
		// writing, syncing or renaming the file.
		return nil, &LocalError{Path: final, Err: err}
	}
	return &Downloaded{Path: final, Size: n, SHA256: hex.EncodeToString(h.Sum(nil)), ContentType: ct}, nil
}

// tooLargeError is a download that streamed past Config.MaxDownloadSize.
type tooLargeError struct {
	op  string
	max int64
}

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("%s: the file is larger than the largest download allowed (%d bytes; service.max_download_size)", e.op, e.max)
}

// speedWatch fails a download whose body comes slower than the client's
// minimum: at the end of every window of lowSpeedTime it compares the
// bytes that arrived in it with lowSpeedLimit a second (at least one
// byte), and calls fail when they fall short. A timer per window, not per
// read: a fast download costs nothing.
type speedWatch struct {
	got   atomic.Int64
	timer *time.Timer
}

func (c *Client) watchSpeed(fail func()) *speedWatch {
	w := &speedWatch{}
	floor := max(1, int64(float64(c.lowSpeedLimit)*c.lowSpeedTime.Seconds()))
	// Armed only once w.timer is set, which the check reads.
	w.timer = time.AfterFunc(math.MaxInt64, func() {
		if w.got.Swap(0) < floor {
			fail()
			return
		}
		w.timer.Reset(c.lowSpeedTime)
	})
	w.timer.Reset(c.lowSpeedTime)
	return w
}

func (w *speedWatch) add(n int) { w.got.Add(int64(n)) }
func (w *speedWatch) stop()     { w.timer.Stop() }

// getFollowing sends the GET and follows redirects itself, so that each hop
// draws from the budget, is checked for its scheme and for a link-local
// address, and gets the token only
// on the base URL's origin (and never when the files are public).
func (c *Client) getFollowing(ctx context.Context, u *url.URL, op string, attempt int, answer *time.Timer) (*http.Response, error) {
	for hops := 0; ; hops++ {
		// Waiting for the budget is not waiting for the answer.
		answer.Stop()
		if err := c.fileBudget.take(ctx); err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		answer.Reset(c.timeout)

		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		req.Header.Set("User-Agent", c.userAgent)
		if c.token != "" && !c.publicFiles && c.sameOrigin(u) {
			req.Header.Set("Authorization", c.authScheme+" "+c.token)
		}
		start := time.Now()
		resp, err := c.hc.Do(req)
		if err != nil {
			err = c.transportFailure(ctx, err)
			c.traceResult(req, attempt, 0, err, start)
			return nil, &transportError{op: op, sent: true, err: err}
		}
		c.traceResult(req, attempt, resp.StatusCode, nil, start)
		switch resp.StatusCode {
		case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
			http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		default:
			return resp, nil
		}
		loc, err := resp.Location()
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: redirect without a valid Location", op)
		}
		if loc.Scheme != "http" && loc.Scheme != "https" {
			return nil, fmt.Errorf("%s: refusing to follow a redirect to a %q URL: only http and https are followed", op, loc.Scheme)
		}
		if err := c.checkLinkLocal(loc, "follow a redirect to"); err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		if hops >= maxRedirects {
			return nil, fmt.Errorf("%s: more than %d redirects", op, maxRedirects)
		}
		u = loc
	}
}
