package blobstore_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/blobstore"
)

// get fetches u with a plain client, no credentials: what a browser
// reading a pull request's comment does.
func get(t *testing.T, u string) (int, []byte, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b, resp.Header.Get("Content-Type")
}

// TestLinks checks what the gallery's comment takes of the store against
// a real S3 server: a thumbnail's key beside the outputs', its upload and
// HEAD, a presigned link that a client without credentials opens until it
// expires and not after, and the bytes of an output read into memory and
// checked against their name.
func TestLinks(t *testing.T) {
	srv, st := open(t, "team")
	ctx := context.Background()
	sha := strings.Repeat("ab", 32)
	key := st.ThumbnailKey(sha)
	if want := "team/thumbnail/" + blobstore.ThumbnailVersion + "/ab/" + sha + ".png"; key != want {
		t.Errorf("ThumbnailKey = %q, want %q", key, want)
	}
	if has, err := st.HasKey(ctx, key); err != nil || has {
		t.Fatalf("HasKey before the upload: %v, %v", has, err)
	}
	data := []byte("\x89PNG pretend thumbnail")
	if err := st.PutBytes(ctx, key, data, "image/png"); err != nil {
		t.Fatal(err)
	}
	if has, err := st.HasKey(ctx, key); err != nil || !has {
		t.Fatalf("HasKey after the upload: %v, %v", has, err)
	}
	link, err := st.Presign(ctx, key, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(link, srv.Endpoint+"/"+srv.Bucket+"/"+key+"?") || !strings.Contains(link, "X-Amz-Expires=3600") {
		t.Errorf("link %s", link)
	}
	code, body, ct := get(t, link)
	if code != http.StatusOK || string(body) != string(data) || ct != "image/png" {
		t.Errorf("GET of the link: %d %q %s", code, body, ct)
	}
	// The same key without the signature is refused: the bucket is not
	// public, the link is what opens it.
	if code, _, _ := get(t, srv.Endpoint+"/"+srv.Bucket+"/"+key); code != http.StatusForbidden && code != http.StatusUnauthorized {
		t.Errorf("GET without a signature: %d, want 403", code)
	}
	short, err := st.Presign(ctx, key, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2100 * time.Millisecond)
	if code, _, _ := get(t, short); code != http.StatusForbidden {
		t.Errorf("GET of an expired link: %d, want 403", code)
	}

	// Read: the bytes of an output, checked.
	path, osha, odata := file(t, 70<<10)
	if _, err := st.Put(ctx, osha, path, "image/png"); err != nil {
		t.Fatal(err)
	}
	got, err := st.Read(ctx, osha, int64(len(odata)))
	if err != nil || string(got) != string(odata) {
		t.Fatalf("Read: %d bytes, %v", len(got), err)
	}
	if _, err := st.Read(ctx, osha, int64(len(odata))+1); !errors.As(err, new(*blobstore.SizeError)) {
		t.Errorf("Read of another size: %v", err)
	}
	missing := sha256.Sum256([]byte("never stored"))
	if _, err := st.Read(ctx, hex.EncodeToString(missing[:]), 0); !errors.Is(err, blobstore.ErrNotStored) {
		t.Errorf("Read of a missing object: %v", err)
	}
	// An object changed in the store is refused for its bytes.
	changed := append([]byte(nil), odata...)
	changed[len(changed)-1] ^= 0xff
	if err := os.WriteFile(srv.ObjectPath(st.Key(osha)), changed, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Read(ctx, osha, int64(len(odata))); !errors.As(err, new(*blobstore.CorruptError)) {
		t.Errorf("Read of a changed object: %v", err)
	}
}

// TestPublicRead: once the bucket is public (as behind a public_url),
// PublicURL's link to an object opens without credentials.
func TestPublicRead(t *testing.T) {
	srv, st := open(t, "team")
	ctx := context.Background()
	key := st.ThumbnailKey(strings.Repeat("cd", 32))
	if err := st.PutBytes(ctx, key, []byte("public bytes"), "image/png"); err != nil {
		t.Fatal(err)
	}
	link := blobstore.PublicURL(srv.Endpoint+"/"+srv.Bucket, key)
	if code, _, _ := get(t, link); code != http.StatusForbidden {
		t.Errorf("GET before the bucket is public: %d, want 403", code)
	}
	if err := srv.AllowPublicRead(); err != nil {
		t.Fatal(err)
	}
	if code, body, _ := get(t, link); code != http.StatusOK || string(body) != "public bytes" {
		t.Errorf("GET of the public link: %d %q", code, body)
	}
}

func TestPublicURL(t *testing.T) {
	for _, tc := range []struct{ base, key, want string }{
		{"https://cdn.example.com", "sha256/ab/abc", "https://cdn.example.com/sha256/ab/abc"},
		{"https://cdn.example.com/media/", "team/thumbnail/512-v1/ab/abc.png", "https://cdn.example.com/media/team/thumbnail/512-v1/ab/abc.png"},
		{"https://cdn.example.com", "a b/#?x", "https://cdn.example.com/a%20b/%23%3Fx"},
	} {
		if got := blobstore.PublicURL(tc.base, tc.key); got != tc.want {
			t.Errorf("PublicURL(%q, %q) = %q, want %q", tc.base, tc.key, got, tc.want)
		}
	}
}
