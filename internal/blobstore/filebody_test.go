package blobstore

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bodyOf is a transport that keeps the body of the request it is given
// and answers 200.
type bodyOf struct{ body io.ReadCloser }

func (t *bodyOf) RoundTrip(req *http.Request) (*http.Response, error) {
	t.body = req.Body
	return &http.Response{StatusCode: 200, Body: http.NoBody, Request: req}, nil
}

// TestFileBodies checks that the transport hands net/http the upload's
// file itself, for the kernel to send, only for the PUT that sends that
// whole file signed over its sha256, and leaves every other request's
// body as minio-go made it.
func TestFileBodies(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.png")
	if err := os.WriteFile(path, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const sha = "84d89877f0d4041efb6bf91a16f0248f2fd573e6af05c19f96bedb9f882f7882"
	wrapped := io.NopCloser(strings.NewReader("0123456789"))
	request := func(ctx context.Context, method string, size int64, payload string) *http.Request {
		req, _ := http.NewRequestWithContext(ctx, method, "http://127.0.0.1:1/b/k", nil)
		req.Body, req.ContentLength = wrapped, size
		req.Header.Set("X-Amz-Content-Sha256", payload)
		return req
	}
	ctx := withFileBody(context.Background(), f, sha, 10)
	for _, c := range []struct {
		name string
		req  *http.Request
		seek int64
		file bool
	}{
		{"the PUT of the file", request(ctx, http.MethodPut, 10, sha), 0, true},
		{"no file in the context", request(context.Background(), http.MethodPut, 10, sha), 0, false},
		{"another method", request(ctx, http.MethodPost, 10, sha), 0, false},
		{"a part of the file", request(ctx, http.MethodPut, 5, sha), 0, false},
		{"a streaming signature", request(ctx, http.MethodPut, 10, "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"), 0, false},
		{"the file not at its start", request(ctx, http.MethodPut, 10, sha), 3, false},
	} {
		if _, err := f.Seek(c.seek, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		next := &bodyOf{}
		before := c.req.Body
		if _, err := (fileBodies{next}).RoundTrip(c.req); err != nil {
			t.Fatal(err)
		}
		if c.req.Body != before {
			t.Errorf("%s: the request given was changed", c.name)
		}
		ko, isFile := next.body.(keepOpen)
		if isFile != c.file || (isFile && ko.File != f) {
			t.Errorf("%s: body sent %T, want the file: %v", c.name, next.body, c.file)
		}
	}
	// net/http closes the body it sent; the file stays open for a retry.
	if err := (keepOpen{f}).Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatalf("the file was closed with the body: %v", err)
	}
}
