package blobstore

import (
	"context"
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
// names the file it sends (withFileBody), and whose request sends exactly
// that file signed over its sha256, it gives net/http the file, opened
// anew for each try: net/http may still be reading one try's body when
// minio-go rewinds its own for the next, and two tries never share an
// offset. Everything else, multipart parts and streaming signatures
// included, goes through unchanged.
type fileBodies struct{ next http.RoundTripper }

// fileBody is an upload's file, as withFileBody puts it in the context.
type fileBody struct {
	path string
	sha  string
	size int64
}

type fileBodyKey struct{}

// withFileBody says that the single PUT made under ctx sends the whole
// of the file at path, size bytes whose sha256 is sha.
func withFileBody(ctx context.Context, path, sha string, size int64) context.Context {
	return context.WithValue(ctx, fileBodyKey{}, fileBody{path: path, sha: sha, size: size})
}

func (t fileBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	fb, ok := req.Context().Value(fileBodyKey{}).(fileBody)
	if !ok || req.Method != http.MethodPut || req.Body == nil || req.ContentLength != fb.size ||
		req.Header.Get("X-Amz-Content-Sha256") != fb.sha || len(req.Trailer) > 0 {
		return t.next.RoundTrip(req)
	}
	f, err := os.Open(fb.path)
	if err != nil {
		return t.next.RoundTrip(req)
	}
	// The request's own body is closed as net/http would close it; the
	// file, the body sent, is closed by net/http.
	req.Body.Close()
	r := *req // a RoundTripper leaves the request it is given as it was
	r.Body = f
	return t.next.RoundTrip(&r)
}
