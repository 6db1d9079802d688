package blobstore_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/genform/genform/internal/blobstore"
	"github.com/genform/genform/internal/blobstore/s3test"
)

// BenchmarkPutCPU measures what uploading an output adds to an apply:
// genform's own CPU (user and system time of this process, by getrusage;
// the S3 server, versitygw on loopback, is another process) for one
// Store.Put of a 1 MiB file, its HEAD included, over b.N uploads in a
// row. The target is under 2 ms. new uploads files the store lacks (a
// HEAD answered 404, then the PUT); present files it holds (the HEAD
// alone). close is the server as s3test starts it, which closes the
// connection after every answer (versitygw's default), so each request
// dials a new one; keepalive is the same server keeping connections open
// (VGW_KEEP_ALIVE), as Amazon S3, R2 and MinIO do. It runs on one
// processor, as apply does once its plan is made (operation.oneProc):
//
//	go test -run '^$' -bench PutCPU -benchtime 500x ./internal/blobstore/
func BenchmarkPutCPU(b *testing.B) {
	ctx := context.Background()
	for _, keepAlive := range []bool{false, true} {
		conn := "close"
		if keepAlive {
			conn = "keepalive"
		}
		// The server reads it from the environment it inherits.
		b.Setenv("VGW_KEEP_ALIVE", strconv.FormatBool(keepAlive))
		srv := s3test.Start(b)
		for _, kv := range srv.Env() {
			k, v, _ := strings.Cut(kv, "=")
			b.Setenv(k, v)
		}
		s, err := blobstore.Open(blobstore.Options{Bucket: srv.Bucket, Endpoint: srv.Endpoint, PathStyle: true})
		if err != nil {
			b.Fatal(err)
		}
		for _, present := range []bool{false, true} {
			name := "new/" + conn
			if present {
				name = "present/" + conn
			}
			b.Run(name, func(b *testing.B) { benchPut(ctx, b, s, present) })
		}
	}
}

func benchPut(ctx context.Context, b *testing.B, s *blobstore.Bucket, present bool) {
	files := putFiles(b, b.N+1, 1<<20)
	if present {
		for _, f := range files {
			if _, err := s.Put(ctx, f.sha, f.path, "image/png"); err != nil {
				b.Fatal(err)
			}
		}
	}
	// The first opens a connection, which an apply does once.
	if _, err := s.Put(ctx, files[0].sha, files[0].path, "image/png"); err != nil {
		b.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	runtime.GC()
	u0, s0 := cpuTime(b)
	start := time.Now()
	b.ResetTimer()
	for _, f := range files[1:] {
		uploaded, err := s.Put(ctx, f.sha, f.path, "image/png")
		if err != nil {
			b.Fatal(err)
		}
		if uploaded == present {
			b.Fatalf("Put of %s: uploaded %v, want %v", f.path, uploaded, !present)
		}
	}
	b.StopTimer()
	took := time.Since(start)
	u1, s1 := cpuTime(b)
	perPut := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 / float64(b.N) }
	b.ReportMetric(perPut(u1-u0+s1-s0), "ms-cpu/put")
	// The system's part is mostly the kernel sending the file over
	// loopback, the receiving side included, in genform's time.
	b.ReportMetric(perPut(s1-s0), "ms-sys/put")
	b.ReportMetric(perPut(took), "ms/put")
}

// putFile is a file to upload and the sha256 of its bytes.
type putFile struct{ path, sha string }

// putFiles writes n files of size random bytes.
func putFiles(b *testing.B, n, size int) []putFile {
	dir := b.TempDir()
	buf := make([]byte, size)
	files := make([]putFile, n)
	for i := range files {
		rand.Read(buf)
		sum := sha256.Sum256(buf)
		files[i] = putFile{path: filepath.Join(dir, fmt.Sprintf("%d.png", i)), sha: hex.EncodeToString(sum[:])}
		if err := os.WriteFile(files[i].path, buf, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return files
}

// cpuTime is this process's user and system time so far.
func cpuTime(b *testing.B) (user, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}
