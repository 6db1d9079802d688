package s3test

import (
	"bytes"
	"context"
	"io"
	"os"
	"slices"
	"testing"

	"github.com/minio/minio-go/v7"
)

// get reads the object key of s's bucket.
func get(t *testing.T, s *Server, key string) []byte {
	t.Helper()
	obj, err := s.Client().GetObject(context.Background(), s.Bucket, key, minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	b, err := io.ReadAll(obj)
	if err != nil {
		t.Fatalf("reading %s: %v", key, err)
	}
	return b
}

// TestServerKeepsObjectsOverRestart checks that an object put on the
// server is served back, lies in the file ObjectPath names, and is
// served again after the server was killed and started again.
func TestServerKeepsObjectsOverRestart(t *testing.T) {
	s := Start(t)
	ctx := context.Background()
	const key = "outputs/hero/1.png"
	data := []byte("not really a png")
	if _, err := s.Client().PutObject(ctx, s.Bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := get(t, s, key); !bytes.Equal(got, data) {
		t.Fatalf("got %q, put %q", got, data)
	}
	if b, err := os.ReadFile(s.ObjectPath(key)); err != nil || !bytes.Equal(b, data) {
		t.Fatalf("the file of the object holds %q (%v)", b, err)
	}
	if keys, err := s.Keys(); err != nil || !slices.Equal(keys, []string{key}) {
		t.Fatalf("keys %q (%v)", keys, err)
	}

	s.Stop()
	if _, err := s.Keys(); err == nil {
		t.Fatal("a stopped server listed its bucket")
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if got := get(t, s, key); !bytes.Equal(got, data) {
		t.Fatalf("after the restart got %q, put %q", got, data)
	}
}

// TestLaunchOwnRoot checks that a server launched without a root makes
// one, with the bucket in it, and that Close removes it.
func TestLaunchOwnRoot(t *testing.T) {
	s, err := Launch("")
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(s.ObjectPath("")); err != nil || !fi.IsDir() {
		s.Close()
		t.Fatalf("no bucket directory: %v", err)
	}
	s.Close()
	if _, err := os.Stat(s.Root); !os.IsNotExist(err) {
		t.Fatalf("Close left the root %s: %v", s.Root, err)
	}
}
