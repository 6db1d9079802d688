package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"golang.org/x/sync/errgroup"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/blobstore"
	"github.com/genform/genform/internal/blobstore/s3test"
	"github.com/genform/genform/internal/e2e/harness"
	"github.com/genform/genform/statefile"
	"github.com/genform/genform/statefile/boltstate"
)

// The benchmarks and test of genform pull against a real S3 server
// (versitygw on loopback, started by s3test): the binary fetches outputs
// the state records into their recorded paths, and the run's wall time,
// the genform process's peak memory and its CPU time are what is
// measured. The state
// and the configuration are written directly, as an apply would have
// left them (pull reads nothing else: the records of the declared
// instances and their outputs' paths, hashes, sizes and times), and the
// objects are put in the bucket with the server's own client beforehand,
// none of it timed.

// pullImages is how many 1 MiB images BenchmarkPullImages pulls: 1,000,
// or GENFORM_BENCH_PULL_FILES.
func pullImages() int {
	if n, err := strconv.Atoi(os.Getenv("GENFORM_BENCH_PULL_FILES")); err == nil && n > 0 {
		return n
	}
	return 1000
}

// pullVideoSize is the size of the video BenchmarkPullVideo pulls: 1 GiB,
// or GENFORM_BENCH_PULL_VIDEO_MIB MiB.
func pullVideoSize() int64 {
	if n, err := strconv.Atoi(os.Getenv("GENFORM_BENCH_PULL_VIDEO_MIB")); err == nil && n > 0 {
		return int64(n) << 20
	}
	return 1 << 30
}

// BenchmarkPullImages pulls 1,000 images of 1 MiB each (the target: at
// least 150 MB/s, the genform process under 64 MiB at its peak):
//
//	go test -run '^$' -bench 'PullImages$' -benchtime 3x ./internal/e2e
func BenchmarkPullImages(b *testing.B) {
	skipRace(b)
	benchPull(b, newPullFixture(b, "image", pullImages(), 1<<20))
}

// BenchmarkPullVideo pulls one video of 1 GiB (the same targets):
//
//	go test -run '^$' -bench 'PullVideo' -benchtime 3x ./internal/e2e
func BenchmarkPullVideo(b *testing.B) {
	skipRace(b)
	benchPull(b, newPullFixture(b, "video", 1, pullVideoSize()))
}

// BenchmarkPullImagesServer is the server's side of BenchmarkPullImages
// alone: the same 1,000 objects fetched 8 at a time by the test process
// with minio-go into io.Discard, nothing hashed or written. Both share the
// machine's two cores with the server, so this is the most a pull of them
// could reach here:
//
//	go test -run '^$' -bench 'PullImagesServer' -benchtime 3x ./internal/e2e
func BenchmarkPullImagesServer(b *testing.B) {
	skipRace(b)
	f := newPullFixture(b, "image", pullImages(), 1<<20)
	var total int64
	for _, pf := range f.files {
		total += pf.size
	}
	buf := make([][]byte, 8)
	for i := range buf {
		buf[i] = make([]byte, 1<<20)
	}
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		g, ctx := errgroup.WithContext(context.Background())
		g.SetLimit(len(buf))
		slots := make(chan []byte, len(buf))
		for _, bb := range buf {
			slots <- bb
		}
		for _, pf := range f.files {
			g.Go(func() error {
				bb := <-slots
				defer func() { slots <- bb }()
				obj, err := f.srv.Client().GetObject(ctx, f.srv.Bucket, "sha256/"+pf.sha[:2]+"/"+pf.sha, minio.GetObjectOptions{})
				if err != nil {
					return err
				}
				defer obj.Close()
				// Not io.Discard itself: its ReadFrom reads 8 KiB at a time.
				n, err := io.CopyBuffer(struct{ io.Writer }{io.Discard}, obj, bb)
				if err == nil && n != pf.size {
					err = fmt.Errorf("%s: %d bytes, want %d", pf.sha, n, pf.size)
				}
				return err
			})
		}
		if err := g.Wait(); err != nil {
			b.Fatal(err)
		}
	}
	took := time.Since(start)
	b.ReportMetric(float64(total)*float64(b.N)/1e6/took.Seconds(), "MB/s")
}

// skipRace skips a benchmark under the race detector, whose runtime
// makes the genform under test (this test binary) far slower and larger.
func skipRace(b *testing.B) {
	if harness.RaceEnabled {
		b.Skip("the figures mean nothing under the race detector")
	}
}

// TestPull is the benchmarks' case at a small size, for its correctness
// alone: 20 images of 1 MiB and a video of 64 MiB are pulled, every byte
// checked, and each file has its recorded time.
func TestPull(t *testing.T) {
	for _, tc := range []struct {
		kind string
		n    int
		size int64
	}{{"image", 20, 1 << 20}, {"video", 1, 64 << 20}} {
		t.Run(tc.kind, func(t *testing.T) {
			f := newPullFixture(t, tc.kind, tc.n, tc.size)
			dir := f.workdir(t)
			r := f.pull(t, dir)
			if r.code != 0 {
				t.Fatalf("pull:\n%s", r)
			}
			want := regexp.MustCompile(fmt.Sprintf(`Done\. %d files? fetched from the store \(.*\), 0 already in place`, tc.n))
			if !want.MatchString(r.stdout) {
				t.Errorf("pull does not say it fetched the %d files:\n%s", tc.n, r)
			}
			f.verify(t, dir, 1)
		})
	}
}

// pullFixture is a bucket holding the outputs of n instances of one
// resource, and what a working copy's state records of them.
type pullFixture struct {
	srv         *s3test.Server
	kind        string // "image" or "video"
	name        string // the resource's name
	files       []pullFile
	contentType string
	ext         string
	config      string
}

// pullFile is one recorded output.
type pullFile struct {
	addr      addrs.Instance
	dir, path string // relative to the working directory, slash-separated
	sha       string
	size      int64
	seed      uint64 // its bytes are pullBytes(seed, size)
}

// pullModTime is the modification time every output is recorded with.
var pullModTime = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

// pullBytes are the bytes of an output: a ChaCha8 stream of seed, random
// to the store and the disk, made again to check a pulled file.
func pullBytes(seed uint64, size int64) io.Reader {
	var s [32]byte
	binary.LittleEndian.PutUint64(s[:], seed)
	copy(s[8:], "genform pull benchmark")
	return io.LimitReader(rand.NewChaCha8(s), size)
}

// newPullFixture starts an S3 server and puts in its bucket the outputs
// of n instances of kind ("image": image.p[0..n-1] with one output each;
// "video": video.clip, one output), each of size bytes.
func newPullFixture(tb testing.TB, kind string, n int, size int64) *pullFixture {
	tb.Helper()
	f := &pullFixture{srv: s3test.Start(tb), kind: kind}
	switch kind {
	case "image":
		f.name, f.contentType, f.ext = "p", "image/png", "png"
		f.config = fmt.Sprintf("image %q {\n  count        = %d\n  prompt       = \"tile ${count.index}\"\n  image_number = 1\n}\n", f.name, n)
	case "video":
		f.name, f.contentType, f.ext = "clip", "video/mp4", "mp4"
		f.config = fmt.Sprintf("video %q {\n  prompt   = \"a lighthouse at dusk\"\n  duration = 8\n}\n", f.name)
	default:
		tb.Fatalf("no pull fixture for %q", kind)
	}
	seed := rand.Uint64()
	for i := range n {
		r := addrs.Resource{Kind: addrs.Image, Name: f.name}
		addr := r.Instance(addrs.IntKey(i))
		dir := fmt.Sprintf("generated/image/%s/%d", f.name, i)
		if kind == "video" {
			r.Kind = addrs.Video
			addr = r.Instance(addrs.NoKey)
			dir = "generated/video/" + f.name
		}
		f.files = append(f.files, pullFile{addr: addr, dir: dir, path: dir + "/0." + f.ext, size: size, seed: seed + uint64(i)})
	}

	// Hashing and uploading, 8 files at a time (a large one in parts, as
	// apply uploads it, several at once): a 1 GiB video is made twice
	// from its seed rather than held.
	ctx := context.Background()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i := range f.files {
		pf := &f.files[i]
		g.Go(func() error {
			h := sha256.New()
			if _, err := io.Copy(h, pullBytes(pf.seed, pf.size)); err != nil {
				return err
			}
			pf.sha = hex.EncodeToString(h.Sum(nil))
			key := "sha256/" + pf.sha[:2] + "/" + pf.sha
			_, err := f.srv.Client().PutObject(gctx, f.srv.Bucket, key, pullBytes(pf.seed, pf.size), pf.size,
				minio.PutObjectOptions{ContentType: f.contentType, PartSize: blobstore.PartSize})
			if err != nil {
				return fmt.Errorf("putting %s: %w", key, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		tb.Fatal(err)
	}
	return f
}

// workdir makes a working copy that has the configuration and the state
// but none of the files.
func (f *pullFixture) workdir(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.gen.hcl"), []byte(f.config), 0o644); err != nil {
		tb.Fatal(err)
	}
	st, err := boltstate.Open(filepath.Join(dir, ".genform", "state.db"), statefile.Options{Create: true, Command: "bench"})
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	endpoint := addrs.Text2Image
	if f.kind == "video" {
		endpoint = addrs.Text2Video
	}
	const batch = 500
	for start := 0; start < len(f.files); start += batch {
		err := st.Update(func(tx *statefile.Tx) error {
			for _, pf := range f.files[start:min(start+batch, len(f.files))] {
				gid := "gen-" + pf.sha[:16]
				media := "http://127.0.0.1:8787/media/" + gid + "/0." + f.ext
				err := tx.Record(&statefile.Resource{
					Addr: pf.addr, Endpoint: endpoint, Fingerprint: "bench-" + pf.sha[:8],
					Request:      []byte(`{"prompt":"bench"}`),
					GenerationID: gid, CreationID: gid, Status: "succeed", Dir: pf.dir,
					Outputs: []statefile.Output{{
						Index: 0, ID: gid + "-0", MediaURL: media, Path: pf.path,
						Size: pf.size, ModTime: pullModTime, SHA256: pf.sha, ContentType: f.contentType, Stored: true,
					}},
				})
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

// pullRun is what one genform pull did and cost.
type pullRun struct {
	result
	rss int64         // the genform process's peak resident memory, bytes
	cpu time.Duration // its user and system time (with the launcher's few ms)
}

// pull runs genform pull in dir through the peak-rss launcher, and
// returns what it did and cost.
func (f *pullFixture) pull(tb testing.TB, dir string) pullRun {
	tb.Helper()
	cmd, stdout, stderr := genformCmd(tb, dir, childEnv(f.srv.Env()...), "pull")
	start := time.Now()
	rss, err := harness.RunMeasured(tb, cmd)
	took := time.Since(start)
	r := pullRun{result: result{args: []string{"pull"}, stdout: stdout.String(), stderr: stderr.String(), took: took}, rss: rss}
	if cmd.ProcessState == nil {
		tb.Fatalf("running genform pull: %v", err)
	}
	r.code = cmd.ProcessState.ExitCode()
	// The launcher's usage, as wait4 reports it, includes that of the
	// genform it waited for.
	r.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return r
}

// verify checks that every output is in dir with its recorded size and
// time, and the bytes of every every-th one (and of the last) against
// the ones made from its seed and its recorded hash.
func (f *pullFixture) verify(tb testing.TB, dir string, every int) {
	tb.Helper()
	buf := make([]byte, 1<<20)
	for i, pf := range f.files {
		p := filepath.Join(dir, filepath.FromSlash(pf.path))
		fi, err := os.Stat(p)
		if err != nil {
			tb.Fatalf("%s: %v", pf.addr, err)
		}
		if fi.Size() != pf.size || !fi.ModTime().Equal(pullModTime) {
			tb.Fatalf("%s: %s is %d bytes of %s, want %d of %s", pf.addr, pf.path, fi.Size(), fi.ModTime(), pf.size, pullModTime)
		}
		if i%every != 0 && i != len(f.files)-1 {
			continue
		}
		file, err := os.Open(p)
		if err != nil {
			tb.Fatal(err)
		}
		h := sha256.New()
		_, err = io.CopyBuffer(h, io.TeeReader(file, &compareWriter{want: pullBytes(pf.seed, pf.size), buf: buf}), make([]byte, 1<<20))
		file.Close()
		if err != nil {
			tb.Fatalf("%s: %s: %v", pf.addr, pf.path, err)
		}
		if sum := hex.EncodeToString(h.Sum(nil)); sum != pf.sha {
			tb.Fatalf("%s: %s has sha256 %s, recorded %s", pf.addr, pf.path, sum, pf.sha)
		}
	}
	left, err := filepath.Glob(filepath.Join(dir, "generated", f.kind, f.name, "*", ".genform-pull-*"))
	if err == nil && len(left) > 0 {
		tb.Fatalf("pull left temporary files: %v", left)
	}
}

// compareWriter fails a write whose bytes are not the next ones of want.
type compareWriter struct {
	want io.Reader
	buf  []byte
	off  int64
}

func (c *compareWriter) Write(p []byte) (int, error) {
	for done := 0; done < len(p); {
		chunk := p[done:min(len(p), done+len(c.buf))]
		if _, err := io.ReadFull(c.want, c.buf[:len(chunk)]); err != nil {
			return done, fmt.Errorf("longer than its bytes at offset %d", c.off)
		}
		if !bytes.Equal(chunk, c.buf[:len(chunk)]) {
			return done, fmt.Errorf("differs from its bytes within %d bytes of offset %d", len(chunk), c.off)
		}
		done += len(chunk)
		c.off += int64(len(chunk))
	}
	return len(p), nil
}

// benchPull pulls f's outputs into a new working copy each round and
// reports the rate (decimal MB/s of the files' bytes over the command's
// wall time, process start included), the seconds of a pull, the
// largest peak resident memory of the genform process, and its CPU time
// (user and system, the kernel's copying of the bytes included) per GB:
// the wall time on this machine's virtual disk varies by half from run
// to run, the CPU time much less.
func benchPull(b *testing.B, f *pullFixture) {
	var total int64
	for _, pf := range f.files {
		total += pf.size
	}
	var took, cpu time.Duration
	var peak int64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		dir := f.workdir(b)
		// The state and the previous round's files reach the disk before
		// the pull starts, not during it.
		syncDisk()
		b.StartTimer()
		r := f.pull(b, dir)
		b.StopTimer()
		if r.code != 0 {
			b.Fatalf("pull:\n%s", r.result)
		}
		took += r.took
		cpu += r.cpu
		peak = max(peak, r.rss)
		f.verify(b, dir, 50)
		b.Logf("%d files, %.0f MB in %s: %.0f MB/s, peak RSS %.1f MiB, CPU %.2f s", len(f.files), float64(total)/1e6,
			r.took.Round(time.Millisecond), float64(total)/1e6/r.took.Seconds(), float64(r.rss)/(1<<20), r.cpu.Seconds())
		// The working copy stays until the benchmark ends: on ext4, files
		// created right after thousands were deleted cost more (see
		// docs/performance.md), which would be measured as the pull's.
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(total)*float64(b.N)/1e6/took.Seconds(), "MB/s")
	b.ReportMetric(float64(peak)/(1<<20), "MiB-peak-rss")
	b.ReportMetric(took.Seconds()/float64(b.N), "s/pull")
	b.ReportMetric(cpu.Seconds()/(float64(total)*float64(b.N)/1e9), "cpu-s/GB")
}

// syncDisk writes everything dirty to the disk: what the setup wrote is
// not written back while a pull is measured.
func syncDisk() { syscall.Sync() }
