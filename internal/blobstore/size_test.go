package blobstore_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/genform/genform/internal/blobstore"
	"github.com/genform/genform/internal/blobstore/s3test"
)

// bodyCounter is a transport that counts the requests sent and the bytes
// of object bodies read from the store's answers, and, with hide set,
// takes Content-Length off those answers, as a store streaming an object
// without announcing its size would serve it.
type bodyCounter struct {
	base http.RoundTripper

	mu       sync.Mutex
	hide     bool
	requests map[string]int // by method
	read     int64
}

func (c *bodyCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests[req.Method]++
	if err != nil || req.Method != http.MethodGet || !strings.Contains(req.URL.Path, "/sha256/") {
		return resp, err
	}
	if c.hide {
		resp.Header.Del("Content-Length")
		resp.ContentLength = -1
	}
	resp.Body = &countedBody{ReadCloser: resp.Body, c: c}
	return resp, nil
}

// reset forgets what was counted, and sets hide.
func (c *bodyCounter) reset(hide bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hide, c.requests, c.read = hide, map[string]int{}, 0
}

func (c *bodyCounter) counts() (map[string]int, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.requests, c.read
}

type countedBody struct {
	io.ReadCloser
	c *bodyCounter
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.c.mu.Lock()
	b.c.read += int64(n)
	b.c.mu.Unlock()
	return n, err
}

// TestGetRefusesOtherSize checks that an object swapped for a larger one
// (3 MiB under the name of a 12 KiB file) is refused for the size
// recorded for its bytes, naming it, before more than that size and one
// byte is read from the store or written to the temporary file: at once
// when the store announces the size, after size+1 bytes when it does not.
// A smaller object is refused too; with no size recorded, an object above
// the store's largest is refused the same way, and one below it is read
// and checked against its sha256 as before. The destination keeps what it
// held, and no temporary file is left.
func TestGetRefusesOtherSize(t *testing.T) {
	srv := s3test.Start(t)
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	base, err := minio.DefaultTransport(false)
	if err != nil {
		t.Fatal(err)
	}
	tr := &bodyCounter{base: base, requests: map[string]int{}}
	const maxSize = 1 << 20
	st, err := blobstore.Open(blobstore.Options{Bucket: srv.Bucket, Endpoint: srv.Endpoint, PathStyle: true, Transport: tr, MaxSize: maxSize})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	const size = 12 << 10
	path, sha, data := file(t, size)
	if _, err := st.Put(ctx, sha, path, "image/png"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	dst := filepath.Join(dir, "0.png")

	// The object as recorded comes back in one request, read once.
	tr.reset(false)
	if n, err := st.Get(ctx, sha, size, dst); err != nil || n != size {
		t.Fatalf("Get of the recorded object = %d, %v", n, err)
	}
	if got, _ := os.ReadFile(dst); !bytes.Equal(got, data) {
		t.Fatal("the fetched file differs")
	}
	if reqs, read := tr.counts(); reqs[http.MethodGet] != 1 || len(reqs) != 1 || read != size {
		t.Fatalf("fetching the recorded object sent %v and read %d bytes; want one GET reading %d", reqs, read, size)
	}
	if err := os.WriteFile(dst, []byte("what was here"), 0o644); err != nil {
		t.Fatal(err)
	}

	// replace puts n random bytes in the store under sha's name.
	replace := func(n int) {
		t.Helper()
		b := make([]byte, n)
		rand.Read(b)
		if _, err := srv.Client().PutObject(ctx, srv.Bucket, st.Key(sha), bytes.NewReader(b), int64(n), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// get fetches sha, recorded with size want, and returns the bytes
	// written to the temporary file and read from the store, and the
	// error.
	get := func(want int64, hide bool) (written, read int64, err error) {
		t.Helper()
		tr.reset(hide)
		_, err = st.GetProgress(ctx, sha, want, dst, func(n int64) { written += n })
		_, read = tr.counts()
		if got, _ := os.ReadFile(dst); string(got) != "what was here" {
			t.Fatalf("the destination was overwritten: %d bytes", len(got))
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Fatalf("left behind in the directory: %v", ents)
		}
		return written, read, err
	}
	sizeError := func(err error, what string) *blobstore.SizeError {
		t.Helper()
		var se *blobstore.SizeError
		if !errors.As(err, &se) || se.Object != st.Object(sha) || !strings.Contains(err.Error(), st.Object(sha)) {
			t.Fatalf("Get of %s = %v; want a SizeError naming %s", what, err, st.Object(sha))
		}
		return se
	}

	replace(3 << 20)
	written, read, err := get(size, false)
	if se := sizeError(err, "a larger object"); se.Want != size || se.Got != 3<<20 || se.More ||
		!strings.Contains(err.Error(), "holds 3145728 bytes, not the 12288 bytes recorded for it") {
		t.Fatalf("Get of a larger object = %v (%+v)", err, se)
	}
	if written != 0 || read != 0 {
		t.Fatalf("a larger object announced as such: %d bytes written, %d read; want none", written, read)
	}

	written, read, err = get(size, true)
	if se := sizeError(err, "a larger object, its size not announced"); se.Want != size || se.Got != size+1 || !se.More ||
		!strings.Contains(err.Error(), "holds more than 12288 bytes, not the 12288 bytes recorded for it") {
		t.Fatalf("Get of a larger object, its size not announced = %v (%+v)", err, se)
	}
	if written > size+1 || read > size+1 {
		t.Fatalf("a larger object, its size not announced: %d bytes written, %d read; want at most %d", written, read, size+1)
	}

	replace(4 << 10)
	for _, hide := range []bool{false, true} {
		_, read, err = get(size, hide)
		if se := sizeError(err, "a smaller object"); se.Want != size || se.Got != 4<<10 || se.More {
			t.Fatalf("Get of a smaller object (size hidden: %v) = %v (%+v)", hide, err, se)
		}
		if read > size+1 {
			t.Fatalf("a smaller object: %d bytes read", read)
		}
	}

	// No size recorded (a state older than sizes): the store's largest
	// bounds the read, and the sha256 refuses other bytes below it.
	replace(3 << 20)
	for _, hide := range []bool{false, true} {
		written, read, err = get(0, hide)
		if se := sizeError(err, "an object above the largest"); se.Want != 0 || se.Max != maxSize ||
			!strings.Contains(err.Error(), "more than the largest file fetched (1048576 bytes") {
			t.Fatalf("Get of an object above the largest (size hidden: %v) = %v (%+v)", hide, err, se)
		}
		if written > maxSize+1 || read > maxSize+1 {
			t.Fatalf("an object above the largest (size hidden: %v): %d bytes written, %d read", hide, written, read)
		}
	}
	replace(4 << 10)
	_, _, err = get(0, false)
	var ce *blobstore.CorruptError
	if !errors.As(err, &ce) || ce.Object != st.Object(sha) {
		t.Fatalf("Get of other bytes, no size recorded = %v; want a CorruptError", err)
	}
}
