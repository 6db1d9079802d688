package blobstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
)

// This file holds what genform gallery's pull-request comment needs of
// the store: the thumbnails' objects beside the outputs', bytes read into
// memory to make them of, and links a browser opens without credentials.

// ThumbnailVersion names how thumbnails are made (their size and
// filter): a change to either takes a new version, so thumbnails made
// the old way are not taken for new ones.
const ThumbnailVersion = "512-v1"

// ThumbnailKey is the object key of the thumbnail of the bytes whose
// sha256 is sha:
//
//	<prefix>/thumbnail/<ThumbnailVersion>/<first two hex digits>/<64 hex digits>.png
//
// Named by its source's bytes, it is made once whoever asks for it, and a
// second comment finds it there.
func (s *Bucket) ThumbnailKey(sha string) string {
	k := "thumbnail/" + ThumbnailVersion + "/" + sha[:min(2, len(sha))] + "/" + sha + ".png"
	if s.prefix != "" {
		k = s.prefix + "/" + k
	}
	return k
}

// KeyObject names the object at key for messages: s3://bucket/key.
func (s *Bucket) KeyObject(key string) string { return "s3://" + s.bucket + "/" + key }

// HasKey reports whether the store holds an object at key (a HEAD
// request).
func (s *Bucket) HasKey(ctx context.Context, key string) (bool, error) {
	_, err := s.c.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if err == nil {
		return true, nil
	}
	if notFound(err) {
		return false, nil
	}
	return false, s.explain(err, "looking for "+s.KeyObject(key))
}

// PutBytes uploads data as the object at key, in one PUT whose signature
// covers the bytes' sha256.
func (s *Bucket) PutBytes(ctx context.Context, key string, data []byte, contentType string) error {
	sum := sha256.Sum256(data)
	_, err := minio.Core{Client: s.c}.PutObject(ctx, s.bucket, key, bytes.NewReader(data), int64(len(data)), "", hex.EncodeToString(sum[:]), minio.PutObjectOptions{
		ContentType:          contentType,
		DisableContentSha256: true,
	})
	if err != nil {
		return s.explain(err, "uploading "+s.KeyObject(key))
	}
	return nil
}

// Read reads the bytes of sha into memory, checked as Get checks them:
// size is the size recorded for them (0 when none is, and MaxSize bounds
// them then), a missing object is an error wrapping ErrNotStored, bytes
// of another size a *SizeError, other bytes a *CorruptError.
func (s *Bucket) Read(ctx context.Context, sha string, size int64) ([]byte, error) {
	obj, err := s.c.GetObject(ctx, s.bucket, s.Key(sha), minio.GetObjectOptions{})
	if err != nil {
		return nil, s.explainGet(err, sha)
	}
	defer obj.Close()
	limit := size
	if size <= 0 {
		size, limit = 0, s.maxSize
	}
	if _, err := obj.Read(nil); err != nil && !errors.Is(err, io.EOF) {
		return nil, s.explainGet(err, sha)
	}
	info, err := obj.Stat()
	switch {
	case errors.Is(err, io.EOF):
		info.Size = -1
	case err != nil:
		return nil, s.explainGet(err, sha)
	}
	tooBig := func(got int64, more bool) error {
		e := &SizeError{Object: s.Object(sha), Want: size, Got: got, More: more}
		if size == 0 {
			e.Max = limit
		}
		return e
	}
	if info.Size >= 0 && (size > 0 && info.Size != size || info.Size > limit) {
		return nil, tooBig(info.Size, false)
	}
	var buf bytes.Buffer
	if info.Size > 0 {
		buf.Grow(int(info.Size))
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(&buf, h), io.LimitReader(obj, limit+1))
	switch {
	case err != nil:
		return nil, s.explainGet(err, sha)
	case n > limit:
		return nil, tooBig(n, true)
	case size > 0 && n != size:
		return nil, tooBig(n, false)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != sha {
		return nil, &CorruptError{Object: s.Object(sha), Want: sha, Got: sum}
	}
	return buf.Bytes(), nil
}

// Presign is a link to the object at key that a browser opens without
// credentials until expiry passes: a presigned GET URL (Signature V4,
// which Amazon S3 takes for at most seven days). It is made here,
// without a request, once the bucket's region is known (the store
// block's, AWS_REGION's, or for a store other than Amazon's us-east-1).
// Anyone who has the link can read the object until then.
func (s *Bucket) Presign(ctx context.Context, key string, expiry time.Duration) (string, error) {
	u, err := s.c.PresignedGetObject(ctx, s.bucket, key, expiry, nil)
	if err != nil {
		return "", s.explain(err, "signing a link to "+s.KeyObject(key))
	}
	return u.String(), nil
}

// PublicURL is the link to the object at key under base, where the
// bucket's objects are public: base, a slash, and the key with each of
// its segments escaped.
func PublicURL(base, key string) string {
	parts := strings.Split(key, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.TrimRight(base, "/") + "/" + strings.Join(parts, "/")
}
