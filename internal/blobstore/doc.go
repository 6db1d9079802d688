// Package blobstore is genform's client of an S3-compatible object store
// (Amazon S3, Cloudflare R2, Google Cloud Storage's S3 interface, MinIO,
// SeaweedFS, Ceph, versitygw): the place a team keeps the bytes of its
// outputs, so that a working copy or a CI runner that lacks a file fetches
// it there rather than from a provider whose links have expired.
//
// Objects are addressed by the sha256 of their bytes,
//
//	<prefix>/sha256/<first two hex digits>/<64 hex digits>
//
// so the same bytes are stored once whoever made them, an upload of bytes
// already there is skipped, and an object's name says what it must hold:
// every fetch is checked against it, and a fetch whose bytes differ is a
// CorruptError that leaves no file behind.
//
// It owns the client's setup (credentials from the standard AWS variables
// and shared files, path-style addressing, no checksum headers that some
// stores refuse), the key layout, and streaming files in and out. It knows
// nothing of generations, instances or the state: the apply engine and the
// pull and push operations say which hashes matter and where files go.
//
// The client is minio-go: it is written for every S3-compatible store
// rather than for Amazon's alone, sends no checksum headers unless asked
// (the AWS SDK's default CRC headers are refused by some stores), streams
// a file in parts from disk without holding a part in memory, and brings
// few dependencies.
package blobstore
