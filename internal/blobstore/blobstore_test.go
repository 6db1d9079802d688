package blobstore_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genform/genform/internal/blobstore"
	"github.com/genform/genform/internal/blobstore/s3test"
)

// open starts a real S3 server and opens the store of its bucket under
// prefix, with its credentials in the environment as a user sets them.
func open(t *testing.T, prefix string) (*s3test.Server, *blobstore.Bucket) {
	t.Helper()
	srv := s3test.Start(t)
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	st, err := blobstore.Open(blobstore.Options{Bucket: srv.Bucket, Prefix: prefix, Endpoint: srv.Endpoint, PathStyle: true})
	if err != nil {
		t.Fatal(err)
	}
	return srv, st
}

// file writes n random bytes to a file and returns its path and sha256.
func file(t *testing.T, n int) (string, string, []byte) {
	t.Helper()
	b := make([]byte, n)
	rand.Read(b)
	p := filepath.Join(t.TempDir(), "out.bin")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return p, hex.EncodeToString(sum[:]), b
}

// TestPutGet checks the round trip: an upload under the content's name
// (with the prefix), a second upload of the same bytes skipped, and a
// fetch that writes exactly those bytes; a file larger than a part goes
// up in parts and comes back whole.
func TestPutGet(t *testing.T) {
	srv, st := open(t, "team/media")
	ctx := context.Background()
	if err := st.Check(ctx); err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{1, 300 << 10, blobstore.PartSize + 1} {
		path, sha, data := file(t, size)
		if want := "team/media/sha256/" + sha[:2] + "/" + sha; st.Key(sha) != want {
			t.Fatalf("key %q, want %q", st.Key(sha), want)
		}
		if has, err := st.Has(ctx, sha); err != nil || has {
			t.Fatalf("Has before upload = %v, %v", has, err)
		}
		up, err := st.Put(ctx, sha, path, "image/png")
		if err != nil || !up {
			t.Fatalf("Put = %v, %v", up, err)
		}
		if up, err := st.Put(ctx, sha, path, "image/png"); err != nil || up {
			t.Fatalf("second Put = %v, %v; want skipped", up, err)
		}
		got, err := os.ReadFile(srv.ObjectPath(st.Key(sha)))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("the server's object of %d bytes differs (%v)", size, err)
		}
		dst := filepath.Join(t.TempDir(), "0.png")
		n, err := st.Get(ctx, sha, int64(size), dst)
		if err != nil || n != int64(size) {
			t.Fatalf("Get = %d, %v", n, err)
		}
		if got, _ := os.ReadFile(dst); !bytes.Equal(got, data) {
			t.Fatalf("the fetched file of %d bytes differs", size)
		}
	}
}

// TestGetRefuses checks that a missing object and one whose bytes were
// changed in the store are errors that leave the destination as it was,
// with no temporary file beside it.
func TestGetRefuses(t *testing.T) {
	srv, st := open(t, "")
	ctx := context.Background()
	dir := t.TempDir()
	dst := filepath.Join(dir, "0.png")
	if err := os.WriteFile(dst, []byte("what was here"), 0o644); err != nil {
		t.Fatal(err)
	}
	path, sha, _ := file(t, 4096)
	if _, err := st.Get(ctx, sha, 4096, dst); !errors.Is(err, blobstore.ErrNotStored) || !strings.Contains(err.Error(), st.Object(sha)) {
		t.Fatalf("Get of a missing object = %v; want ErrNotStored naming %s", err, st.Object(sha))
	}
	if _, err := st.Put(ctx, sha, path, ""); err != nil {
		t.Fatal(err)
	}
	obj := srv.ObjectPath(st.Key(sha))
	b, err := os.ReadFile(obj)
	if err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if err := os.WriteFile(obj, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = st.Get(ctx, sha, 4096, dst)
	var ce *blobstore.CorruptError
	if !errors.As(err, &ce) || ce.Object != "s3://"+srv.Bucket+"/"+st.Key(sha) || ce.Want != sha {
		t.Fatalf("Get of a changed object = %v; want a CorruptError naming it", err)
	}
	if got, _ := os.ReadFile(dst); string(got) != "what was here" {
		t.Fatalf("the destination was overwritten: %q", got)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("left behind in the directory: %v", ents)
	}
}

// TestCheckSaysWhatIsWrong checks the errors a user meets first: a wrong
// secret, a bucket that is not there, a store that is down.
func TestCheckSaysWhatIsWrong(t *testing.T) {
	srv, st := open(t, "")
	ctx := context.Background()

	t.Setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
	bad, _ := blobstore.Open(blobstore.Options{Bucket: srv.Bucket, Endpoint: srv.Endpoint, PathStyle: true})
	err := bad.Check(ctx)
	if !errors.Is(err, blobstore.ErrCredentials) || !strings.Contains(err.Error(), "AWS_SECRET_ACCESS_KEY") || strings.Contains(err.Error(), "not-the-secret") {
		t.Fatalf("Check with a wrong secret = %v", err)
	}
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)

	// No credentials at all: said as such, not as a refusal of them.
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "")
	t.Setenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	none, _ := blobstore.Open(blobstore.Options{Bucket: srv.Bucket, Endpoint: srv.Endpoint, PathStyle: true})
	if err := none.Check(ctx); !errors.Is(err, blobstore.ErrCredentials) || !strings.Contains(err.Error(), "no store credentials are set") {
		t.Fatalf("Check without credentials = %v", err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)

	other, _ := blobstore.Open(blobstore.Options{Bucket: "no-such-bucket", Endpoint: srv.Endpoint, PathStyle: true})
	if err := other.Check(ctx); err == nil || !strings.Contains(err.Error(), `has no bucket "no-such-bucket"`) {
		t.Fatalf("Check of a missing bucket = %v", err)
	}

	srv.Stop()
	if err := st.Check(ctx); !errors.Is(err, blobstore.ErrUnreachable) {
		t.Fatalf("Check of a stopped store = %v; want ErrUnreachable", err)
	}
}

// TestPutSendsOnlyItsBytes checks that an upload is signed over the
// sha256 it is stored under: a file whose bytes changed after they were
// hashed is refused by the store, which then holds nothing under that
// name, and the same file under its true sha256 goes up whole, sent by
// the kernel from the file.
func TestPutSendsOnlyItsBytes(t *testing.T) {
	srv, st := open(t, "")
	ctx := context.Background()
	path, sha, data := file(t, 300<<10)
	_, other, _ := file(t, 300<<10)
	if up, err := st.Put(ctx, other, path, "image/png"); err == nil || up || !strings.Contains(err.Error(), "changed on disk") {
		t.Fatalf("Put of bytes that are not those of %s = %v, %v; want refused", other, up, err)
	}
	if has, err := st.Has(ctx, other); err != nil || has {
		t.Fatalf("after a refused upload, Has = %v, %v", has, err)
	}
	if up, err := st.Put(ctx, sha, path, "image/png"); err != nil || !up {
		t.Fatalf("Put = %v, %v", up, err)
	}
	if got, err := os.ReadFile(srv.ObjectPath(st.Key(sha))); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the object differs from the file (%v)", err)
	}
}
