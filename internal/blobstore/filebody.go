package blobstore

import (
	"context"
	"io"
	"net/http"
	"os"
)

// The kernel sends an upload's file when net/http is handed the file
// itself: it copies with sendfile(2) (splice on some systems) from the
// page cache to the socket, and genform's process never reads the bytes.
// minio-go hands the transport the file wrapped in its own readers (for
// progress and for rewinding on a retry), which hides it, so net/http
// copies it through a 32 KiB buffer: a read and a write system call
// every 32 KiB, about half the CPU a 1 MiB upload cost (BenchmarkPutCPU).
// fileBodies is the transport minio-go is given; for a PUT whose context
// names the file it carries (withFileBody), and whose request sends
// exactly that file from its start signed over its sha256, it gives
// net/http the file. Everything else, multipart parts and streaming
// signatures included, goes through unchanged.
type fileBodies struct{ next http.RoundTripper }

// fileBody is an upload's file, as withFileBody puts it in the context.
type fileBody struct {
	f    *os.File
	sha  string
	size int64
}

type fileBodyKey struct{}

// withFileBody says that the single PUT made under ctx sends the whole
// of f, size bytes whose sha256 is sha.
func withFileBody(ctx context.Context, f *os.File, sha string, size int64) context.Context {
	return context.WithValue(ctx, fileBodyKey{}, fileBody{f: f, sha: sha, size: size})
}

func (t fileBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	fb, ok := req.Context().Value(fileBodyKey{}).(fileBody)
	if !ok || req.Method != http.MethodPut || req.Body == nil || req.ContentLength != fb.size ||
		req.Header.Get("X-Amz-Content-Sha256") != fb.sha || len(req.Trailer) > 0 {
		return t.next.RoundTrip(req)
	}
	// minio-go rewinds the file before every try; a file not at its
	// start is one this request does not send whole.
	if off, err := fb.f.Seek(0, io.SeekCurrent); err != nil || off != 0 {
		return t.next.RoundTrip(req)
	}
	r := *req // a RoundTripper leaves the request it is given as it was
	r.Body = keepOpen{fb.f}
	return t.next.RoundTrip(&r)
}

// keepOpen is a file net/http may close: it stays open, for minio-go to
// rewind on a retry and Put to close. It is the file itself to the
// kernel's copy, which asks for its descriptor (syscall.Conn); io.NopCloser
// would hide that once net/http wraps the body to track its reads.
type keepOpen struct{ *os.File }

func (keepOpen) Close() error { return nil }
