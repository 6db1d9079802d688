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
// file itself, for the kernel to send, opened anew for each try, only for
// the PUT that sends that whole file signed over its sha256, and leaves
// every other request's body as minio-go made it.
func TestFileBodies(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.png")
	if err := os.WriteFile(path, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	const sha = "84d89877f0d4041efb6bf91a16f0248f2fd573e6af05c19f96bedb9f882f7882"
	request := func(ctx context.Context, method string, size int64, payload string) *http.Request {
		req, _ := http.NewRequestWithContext(ctx, method, "http://127.0.0.1:1/b/k", nil)
		req.Body, req.ContentLength = io.NopCloser(strings.NewReader("0123456789")), size
		req.Header.Set("X-Amz-Content-Sha256", payload)
		return req
	}
	ctx := withFileBody(context.Background(), path, sha, 10)
	var sent []*os.File
	for _, c := range []struct {
		name string
		req  *http.Request
		file bool
	}{
		{"the PUT of the file", request(ctx, http.MethodPut, 10, sha), true},
		{"its second try", request(ctx, http.MethodPut, 10, sha), true},
		{"no file in the context", request(context.Background(), http.MethodPut, 10, sha), false},
		{"another method", request(ctx, http.MethodPost, 10, sha), false},
		{"a part of the file", request(ctx, http.MethodPut, 5, sha), false},
		{"a streaming signature", request(ctx, http.MethodPut, 10, "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"), false},
	} {
		next := &bodyOf{}
		before := c.req.Body
		if _, err := (fileBodies{next}).RoundTrip(c.req); err != nil {
			t.Fatal(err)
		}
		if c.req.Body != before {
			t.Errorf("%s: the request given was changed", c.name)
		}
		f, isFile := next.body.(*os.File)
		if isFile != c.file || (isFile && f.Name() != path) {
			t.Errorf("%s: body sent %T, want the file: %v", c.name, next.body, c.file)
		}
		if isFile {
			sent = append(sent, f)
			if b, err := io.ReadAll(f); err != nil || string(b) != "0123456789" {
				t.Errorf("%s: the file sent reads %q, %v", c.name, b, err)
			}
		}
	}
	if len(sent) == 2 && sent[0] == sent[1] {
		t.Error("two tries share one open file")
	}
	for _, f := range sent {
		f.Close()
	}
}
