package blobstore

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/genform/genform/internal/atomicfile"
)

// Options say which store and bucket to use.
type Options struct {
	// Bucket is the bucket the objects go in.
	Bucket string
	// Prefix is the folder inside the bucket, "" for its top, without
	// leading or trailing slashes.
	Prefix string
	// Endpoint is the store's http or https URL, "" for Amazon S3.
	Endpoint string
	// Region is the bucket's region, "" to take AWS_REGION, or else let
	// the client ask the store.
	Region string
	// PathStyle puts the bucket in the URL's path, as most stores other
	// than Amazon's want.
	PathStyle bool
	// Transport, when set, carries the requests (tests count them).
	Transport http.RoundTripper
	// MaxSize is the largest object a fetch reads when no size is
	// recorded for its bytes (a state older than sizes); 0 means
	// DefaultMaxSize.
	MaxSize int64
}

// DefaultMaxSize is the largest object a fetch reads when no size is
// recorded for its bytes and Options set none: the service's own largest
// download.
const DefaultMaxSize = 4 << 30

// Bucket is a bucket of an S3-compatible store holding outputs by sha256.
// It is safe for concurrent use.
type Bucket struct {
	c *minio.Client
	// creds are the credentials the client signs with, as the chain found
	// them: none found is said as such, not as a refusal.
	creds    *credentials.Credentials
	bucket   string
	prefix   string
	endpoint string
	maxSize  int64
}

// PartSize is the size of each part of a multipart upload, and the size
// above which an upload is multipart: a part is read from the file as it
// is sent, never held whole in memory.
const PartSize = 16 << 20

// ErrNotStored is wrapped by the error of a fetch whose object the store
// does not have.
var ErrNotStored = errors.New("not in the store")

// ErrCredentials is wrapped by the error of a request the store refused
// for its credentials.
var ErrCredentials = errors.New("the store refused the credentials")

// ErrUnreachable is wrapped by the error of a request that did not reach
// the store (a refused connection, a timeout, a name that does not
// resolve).
var ErrUnreachable = errors.New("the store cannot be reached")

// CorruptError is a fetch whose bytes are not the ones the object's name
// says: the object was changed in the store.
type CorruptError struct {
	Object string // s3://bucket/key
	Want   string // the sha256 the name says
	Got    string // the sha256 of the bytes served
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("object %s does not hold the bytes its name says (their sha256 is %s): it was changed in the store; nothing was written", e.Object, e.Got)
}

// SizeError is a fetch refused for its object's size: not the size
// recorded for its bytes, or, where none is recorded, more than the
// largest object fetched. It is refused as soon as the size is known,
// from the size the store announces before a byte is read, or, when it
// announces none, once one byte more than expected has been read: a
// larger object is never read, let alone written, whole.
type SizeError struct {
	Object string // s3://bucket/key
	Want   int64  // the size recorded for the bytes; 0 when none is
	Max    int64  // when Want is 0, the largest object fetched
	Got    int64  // the size the store announced, or the bytes it served
	// More says the store announced no size and served more than
	// expected: the read stopped at Got bytes, and the object is larger.
	More bool
}

func (e *SizeError) Error() string {
	held := fmt.Sprintf("%d bytes", e.Got)
	if e.More {
		held = fmt.Sprintf("more than %d bytes", e.Got-1)
	}
	if e.Want > 0 {
		return fmt.Sprintf("object %s holds %s, not the %d bytes recorded for it: it was changed in the store; it was refused without being read whole, and nothing was written", e.Object, held, e.Want)
	}
	return fmt.Sprintf("object %s holds %s, more than the largest file fetched (%d bytes; max_download_size in the service or provider block raises it); nothing was written", e.Object, held, e.Max)
}

// Open makes the client of the store o describes. It sends nothing: Check
// asks the store whether it answers.
func Open(o Options) (*Bucket, error) {
	host, secure := "s3.amazonaws.com", true
	if o.Endpoint != "" {
		u, err := url.Parse(o.Endpoint)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("the store endpoint %q is not a URL such as \"https://s3.example.com\"", o.Endpoint)
		}
		host, secure = u.Host, u.Scheme != "http"
	}
	region := o.Region
	if region == "" {
		region = os.Getenv("AWS_REGION")
	}
	if region == "" {
		region = os.Getenv("AWS_DEFAULT_REGION")
	}
	if region == "" && o.Endpoint != "" {
		// Stores other than Amazon's ignore the region or take this one;
		// asking them for the bucket's location costs a request and some
		// do not answer it.
		region = "us-east-1"
	}
	lookup := minio.BucketLookupAuto
	if o.PathStyle {
		lookup = minio.BucketLookupPath
	}
	tr := o.Transport
	if tr == nil {
		var err error
		tr, err = minio.DefaultTransport(secure)
		if err != nil {
			return nil, err
		}
	}
	creds := credentials.NewChainCredentials(chain())
	c, err := minio.New(host, &minio.Options{
		Creds:        creds,
		Secure:       secure,
		Region:       region,
		BucketLookup: lookup,
		Transport:    fileBodies{tr},
		// A request is tried a few times over about two seconds: a
		// store that is down is reported soon, and the apply goes on.
		MaxRetries: 3,
	})
	if err != nil {
		return nil, fmt.Errorf("setting up the store's client: %w", err)
	}
	return &Bucket{c: c, creds: creds, bucket: o.Bucket, prefix: o.Prefix, endpoint: host, maxSize: cmp.Or(max(o.MaxSize, 0), DefaultMaxSize)}, nil
}

// chain is where credentials come from, in the AWS tools' order: the
// environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN), the shared credentials file (AWS_PROFILE,
// AWS_SHARED_CREDENTIALS_FILE), then the instance's or container's role.
func chain() []credentials.Provider {
	return []credentials.Provider{
		&credentials.EnvAWS{},
		&credentials.FileAWSCredentials{},
		&credentials.IAM{Client: &http.Client{Timeout: 2 * time.Second}},
	}
}

// Key is the object key of the bytes whose sha256 is sha.
func (s *Bucket) Key(sha string) string {
	k := "sha256/" + sha[:min(2, len(sha))] + "/" + sha
	if s.prefix != "" {
		k = s.prefix + "/" + k
	}
	return k
}

// Object names the object of sha for messages: s3://bucket/key.
func (s *Bucket) Object(sha string) string {
	return "s3://" + s.bucket + "/" + s.Key(sha)
}

// Check asks the store whether the bucket is there and the credentials
// are good, so that an apply can refuse to start before it pays for
// anything.
func (s *Bucket) Check(ctx context.Context) error {
	ok, err := s.c.BucketExists(ctx, s.bucket)
	if err != nil {
		return s.explain(err, "reaching bucket "+s.bucket)
	}
	if !ok {
		return fmt.Errorf("the store at %s has no bucket %q: create it, or name another with the store block's bucket or GENFORM_STORE_BUCKET", s.endpoint, s.bucket)
	}
	return nil
}

// Has reports whether the store holds the bytes of sha.
func (s *Bucket) Has(ctx context.Context, sha string) (bool, error) {
	_, err := s.c.StatObject(ctx, s.bucket, s.Key(sha), minio.StatObjectOptions{})
	if err == nil {
		return true, nil
	}
	if notFound(err) {
		return false, nil
	}
	return false, s.explain(err, "looking for "+s.Object(sha))
}

// Put uploads the file at path, whose bytes have sha256 sha, unless the
// store holds them already; uploaded says whether it sent them. The file
// is streamed from disk, in parts of PartSize when it is larger; a file
// of PartSize or less goes in one PUT whose signature covers sha, so a
// store that checks it refuses bytes that are not those.
func (s *Bucket) Put(ctx context.Context, sha, path, contentType string) (uploaded bool, err error) {
	if has, err := s.Has(ctx, sha); err != nil || has {
		return false, err
	}
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	if fi.Size() <= PartSize {
		// One PUT, as PutObject makes for this size, its signature
		// covering the sha256 the object is named by: Signature V4's
		// payload hash, which Amazon S3 and versitygw check the bytes
		// against, refusing bytes that are not the ones the name says.
		// To an http endpoint PutObject signs chunk by chunk instead
		// (aws-chunked), hashing the file again and signing every 64 KiB:
		// 0.8 to 2.1 ms more CPU for a 1 MiB upload, 2.7 to 4.2 ms in all
		// (BenchmarkPutCPU). The kernel sends the file (fileBodies).
		_, err = minio.Core{Client: s.c}.PutObject(withFileBody(ctx, path, sha, fi.Size()), s.bucket, s.Key(sha), f, fi.Size(), "", sha, minio.PutObjectOptions{
			ContentType:          contentType,
			DisableContentSha256: true,
		})
	} else {
		_, err = s.c.PutObject(ctx, s.bucket, s.Key(sha), f, fi.Size(), minio.PutObjectOptions{
			ContentType: contentType,
			PartSize:    PartSize,
			NumThreads:  2,
		})
	}
	if err != nil {
		return false, s.explain(err, "uploading "+s.Object(sha))
	}
	return true, nil
}

// Get writes the bytes of sha at dst, through a temporary file beside it
// renamed into place once the bytes are checked against sha: dst never
// holds other bytes. size is the size recorded for them (0 when none is):
// an object of another size is a *SizeError, refused from the size the
// store announces before a byte is read, or else after at most size+1
// bytes; with no size recorded, an object larger than the store's
// MaxSize is refused the same way. A missing object is an error wrapping
// ErrNotStored; bytes that differ are a *CorruptError. opts say how the
// file is made durable (atomicfile.InGroup for many at once).
func (s *Bucket) Get(ctx context.Context, sha string, size int64, dst string, opts ...atomicfile.Option) (int64, error) {
	return s.GetProgress(ctx, sha, size, dst, nil, opts...)
}

// GetProgress is Get that calls moved, when not nil, with the size of
// each piece of the object as it is written: a progress bar's bytes.
func (s *Bucket) GetProgress(ctx context.Context, sha string, size int64, dst string, moved func(n int64), opts ...atomicfile.Option) (int64, error) {
	obj, err := s.c.GetObject(ctx, s.bucket, s.Key(sha), minio.GetObjectOptions{})
	if err != nil {
		return 0, s.explainGet(err, sha)
	}
	defer obj.Close()
	// The most bytes that may be read: an object swapped for a larger
	// one (by mistake, or by someone who may write to the bucket) must
	// not fill the disk with a temporary file before its sha256 refuses
	// it.
	limit := size
	if size <= 0 {
		size, limit = 0, s.maxSize
	}
	tooBig := func(got int64, more bool) error {
		e := &SizeError{Object: s.Object(sha), Want: size, Got: got, More: more}
		if size == 0 {
			e.Max = limit
		}
		return e
	}
	// The answer's headers come first: a size announced that is not the
	// one expected is refused before the body is read or a temporary file
	// made. A read of nothing sends the GET, whose headers Stat then
	// gives; Stat alone would send a HEAD first, a request more for every
	// file a pull fetches.
	if _, err := obj.Read(nil); err != nil && !errors.Is(err, io.EOF) {
		return 0, s.explainGet(err, sha)
	}
	info, err := obj.Stat()
	switch {
	case errors.Is(err, io.EOF):
		// The store announced no size (the client's Stat says EOF
		// then): the reads below are bounded all the same.
		info.Size = -1
	case err != nil:
		return 0, s.explainGet(err, sha)
	}
	if info.Size >= 0 && (size > 0 && info.Size != size || info.Size > limit) {
		return 0, tooBig(info.Size, false)
	}
	var got int64
	err = atomicfile.Write(dst, 0o644, func(w io.Writer) error {
		h := sha256.New()
		buf := copyBufs.Get().(*[]byte)
		defer copyBufs.Put(buf)
		var dst io.Writer = io.MultiWriter(w, h)
		if moved != nil {
			dst = reporter{dst, moved}
		}
		// One byte past the limit tells a larger object from one of
		// the size expected, and is all that is read of it.
		n, err := io.CopyBuffer(dst, io.LimitReader(obj, limit+1), *buf)
		if err != nil {
			return s.explainGet(err, sha)
		}
		if n > limit {
			return tooBig(n, true)
		}
		if size > 0 && n != size {
			return tooBig(n, false)
		}
		got = n
		if sum := hex.EncodeToString(h.Sum(nil)); sum != sha {
			return &CorruptError{Object: s.Object(sha), Want: sha, Got: sum}
		}
		return nil
	}, append([]atomicfile.Option{atomicfile.TempPattern(".genform-pull-*")}, opts...)...)
	if err != nil {
		return 0, err
	}
	return got, nil
}

// reporter is a writer that says how much it wrote.
type reporter struct {
	w     io.Writer
	moved func(int64)
}

func (r reporter) Write(p []byte) (int, error) {
	n, err := r.w.Write(p)
	r.moved(int64(n))
	return n, err
}

// copyBufs hold the buffers Get copies objects through, one per fetch
// under way. A pull fetches thousands of files 8 at a time: a new 1 MiB
// buffer for each, zeroed, collected, its pages given back to the system
// and faulted in again, took a quarter of the pull's own CPU
// (BenchmarkPullImages, alternating runs: 6.0 to 8.1 s of CPU a GB of
// 1 MiB files, 4.5 to 5.8 s with the pool).
var copyBufs = sync.Pool{New: func() any {
	b := make([]byte, 1<<20)
	return &b
}}

func (s *Bucket) explainGet(err error, sha string) error {
	if notFound(err) {
		return fmt.Errorf("%s: %w", s.Object(sha), ErrNotStored)
	}
	return s.explain(err, "fetching "+s.Object(sha))
}

// notFound reports whether err says the object is not there.
func notFound(err error) bool {
	code := minio.ToErrorResponse(err).Code
	return code == "NoSuchKey" || code == "NotFound"
}

// explain turns a client error into one that says what to do.
func (s *Bucket) explain(err error, doing string) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", doing, err)
	}
	resp := minio.ToErrorResponse(err)
	switch resp.Code {
	case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken", "Forbidden":
		if s.anonymous() {
			return s.noCredentials(doing)
		}
		return fmt.Errorf("%s: %w (%s: %s): check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE) for the store at %s", doing, ErrCredentials, resp.Code, resp.Message, s.endpoint)
	case "XAmzContentSHA256Mismatch", "BadDigest":
		return fmt.Errorf("%s: the store refused the file's bytes, which are not the ones recorded: the file changed on disk after it was hashed; nothing was stored under that name", doing)
	case "NoSuchBucket":
		return fmt.Errorf("%s: the store at %s has no bucket %q: create it, or name another with the store block's bucket or GENFORM_STORE_BUCKET", doing, s.endpoint, s.bucket)
	}
	var ne net.Error
	var oe *net.OpError
	var ue *url.Error
	if errors.As(err, &oe) || errors.As(err, &ne) || errors.As(err, &ue) || strings.Contains(err.Error(), "connection refused") {
		return fmt.Errorf("%s: %w at %s: %v", doing, ErrUnreachable, s.endpoint, err)
	}
	if resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized {
		if s.anonymous() {
			return s.noCredentials(doing)
		}
		return fmt.Errorf("%s: %w (HTTP %d): check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE) for the store at %s", doing, ErrCredentials, resp.StatusCode, s.endpoint)
	}
	return fmt.Errorf("%s: %w", doing, err)
}

// anonymous reports whether the credential chain found none: the client
// then sends its requests unsigned, and the store's refusal is of no
// credentials rather than of wrong ones.
func (s *Bucket) anonymous() bool {
	if s.creds == nil {
		return false
	}
	v, err := s.creds.GetWithContext(nil)
	return err != nil || v.SignerType == credentials.SignatureAnonymous || v.AccessKeyID == ""
}

// noCredentials is the error of a request the store refused because no
// credentials were set at all.
func (s *Bucket) noCredentials(doing string) error {
	return fmt.Errorf("%s: %w: no store credentials are set: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE, or run with an instance role) for the store at %s", doing, ErrCredentials, s.endpoint)
}
