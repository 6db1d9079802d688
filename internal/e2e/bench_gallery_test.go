package e2e

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"golang.org/x/sync/errgroup"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/blobstore/s3test"
	"github.com/genform/genform/internal/simulator/simkit"
	"github.com/genform/genform/statefile"
	"github.com/genform/genform/statefile/boltstate"
)

// The benchmark of genform gallery -base -format=markdown: a pull
// request's workspace (pr-1) that changed every one of N images (500, or
// GENFORM_BENCH_GALLERY_FILES) against default, against a real S3 server
// (versitygw on loopback). Its yardstick is downloading those N files from
// the same store: genform pull of the pull request's files into a
// working copy that lacks them, and the same objects fetched by the test
// process into io.Discard, 8 at a time. The states are written directly,
// as the applies would have left them, and every output is put in the
// bucket beforehand, none of it timed; pr-1's files are on disk, as after
// its apply, default's only in the store.
//
// The pictures (GENFORM_BENCH_GALLERY_KIND) are "photo", 1280×720 PNGs
// whose grain compresses as little as a photograph's (about 1.3 MB each,
// what a service answering PNG makes), or "sim", the reference
// simulator's renders at the same size (flat colours, about 40 KB). Each
// file differs from the others by a text chunk: the pixels, and so the
// work of decoding them, are the same.

func galleryBenchFiles() int {
	if n, err := strconv.Atoi(os.Getenv("GENFORM_BENCH_GALLERY_FILES")); err == nil && n > 0 {
		return n
	}
	return 500
}

// galleryBench is a store holding the outputs of both workspaces, and
// the files, configuration and states of a working copy.
type galleryBench struct {
	srv          *s3test.Server
	n            int
	before       [][]byte // default's outputs
	after        [][]byte // pr-1's outputs
	config       string
	bytesPerFile int
}

// pngVariant is data, a PNG, with a tEXt chunk naming i before its
// IEND: other bytes, the same pixels.
func pngVariant(data []byte, i int) []byte {
	text := []byte("Comment\x00variant " + strconv.Itoa(i))
	var chunk bytes.Buffer
	binary.Write(&chunk, binary.BigEndian, uint32(len(text)))
	body := append([]byte("tEXt"), text...)
	chunk.Write(body)
	binary.Write(&chunk, binary.BigEndian, crc32.ChecksumIEEE(body))
	end := len(data) - 12 // IEND: length, type, CRC
	out := append([]byte(nil), data[:end]...)
	out = append(out, chunk.Bytes()...)
	return append(out, data[end:]...)
}

// benchPicture is one 1280×720 PNG of the kind asked for.
func benchPicture(tb testing.TB, kind string, seed uint64) []byte {
	var img image.Image
	switch kind {
	case "photo":
		rgba := image.NewRGBA(image.Rect(0, 0, 1280, 720))
		r := rand.New(rand.NewPCG(seed, 7))
		for y := range 720 {
			for x := range 1280 {
				base := 128 + 100*math.Sin(float64(x)/1280*7+float64(y)/720*3+float64(seed))
				n := float64(r.IntN(24))
				c := func(f float64) uint8 { return uint8(max(0, min(255, f))) }
				i := rgba.PixOffset(x, y)
				rgba.Pix[i], rgba.Pix[i+1], rgba.Pix[i+2], rgba.Pix[i+3] = c(base+n), c(base*0.7+n), c(200-base*0.5+n), 255
			}
		}
		img = rgba
	case "sim":
		img = simkit.NewScene("bench "+strconv.FormatUint(seed, 10), "a benchmark tile", 0).Render(1280, 720, simkit.FrameOptions{Caption: true, TextScale: 2})
	default:
		tb.Fatalf("GENFORM_BENCH_GALLERY_KIND=%s: photo or sim", kind)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

func newGalleryBench(tb testing.TB, n int) *galleryBench {
	tb.Helper()
	kind := os.Getenv("GENFORM_BENCH_GALLERY_KIND")
	if kind == "" {
		kind = "photo"
	}
	g := &galleryBench{srv: s3test.Start(tb), n: n}
	a, b := benchPicture(tb, kind, 1), benchPicture(tb, kind, 2)
	g.bytesPerFile = len(b)
	for i := range n {
		g.before = append(g.before, pngVariant(a, i))
		g.after = append(g.after, pngVariant(b, i))
	}
	g.config = fmt.Sprintf(`genform {
  store "s3" {
    path_style = true
    presign    = "168h"
  }
}

service {
  prices = { image = 0.04 }
}

image "p" {
  count        = %d
  prompt       = "tile ${count.index}"
  image_number = 1
}
`, n)
	ctx := context.Background()
	eg, gctx := errgroup.WithContext(ctx)
	eg.SetLimit(8)
	for _, set := range [][][]byte{g.before, g.after} {
		for _, data := range set {
			eg.Go(func() error {
				s := sha(data)
				_, err := g.srv.Client().PutObject(gctx, g.srv.Bucket, "sha256/"+s[:2]+"/"+s, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{ContentType: "image/png"})
				return err
			})
		}
	}
	if err := eg.Wait(); err != nil {
		tb.Fatal(err)
	}
	return g
}

// workdir lays out a working copy: the configuration, default's state,
// pr-1's state, and with files pr-1's outputs on disk.
func (g *galleryBench) workdir(tb testing.TB, files bool) string {
	tb.Helper()
	dir := tb.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.gen.hcl"), []byte(g.config), 0o644); err != nil {
		tb.Fatal(err)
	}
	mod := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	for ws, set := range map[string][][]byte{"default": g.before, "pr-1": g.after} {
		path := filepath.Join(dir, ".genform", "state.db")
		if ws != "default" {
			path = filepath.Join(dir, ".genform", "workspaces", ws, "state.db")
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		st, err := boltstate.Open(path, statefile.Options{Create: true, Command: "bench"})
		if err != nil {
			tb.Fatal(err)
		}
		err = st.Update(func(tx *statefile.Tx) error {
			for i, data := range set {
				s := sha(data)
				out := filepath.ToSlash(filepath.Join("generated", "image", "p", strconv.Itoa(i), "0.png"))
				if files && ws == "pr-1" {
					p := filepath.Join(dir, filepath.FromSlash(out))
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						return err
					}
					if err := os.WriteFile(p, data, 0o644); err != nil {
						return err
					}
					if err := os.Chtimes(p, mod, mod); err != nil {
						return err
					}
				}
				gid := ws + "-" + s[:16]
				err := tx.Record(&statefile.Resource{
					Addr:     addrs.Resource{Kind: addrs.Image, Name: "p"}.Instance(addrs.IntKey(i)),
					Endpoint: addrs.Text2Image, Fingerprint: "bench-" + s[:8],
					Request:      []byte(fmt.Sprintf(`{"prompt":"tile %d%s"}`, i, map[bool]string{true: " again"}[ws == "pr-1"])),
					GenerationID: gid, CreationID: gid, Status: "succeed", Dir: filepath.ToSlash(filepath.Dir(out)),
					Outputs: []statefile.Output{{Index: 0, ID: gid + "-0", Path: out, Size: int64(len(data)), ModTime: mod,
						SHA256: s, ContentType: "image/png", Stored: true}},
				})
				if err != nil {
					return err
				}
			}
			return nil
		})
		st.Close()
		if err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

// dropThumbnails removes every thumbnail from the store, as before a
// pull request's first comment.
func (g *galleryBench) dropThumbnails(tb testing.TB) {
	tb.Helper()
	if err := os.RemoveAll(filepath.Join(g.srv.Root, g.srv.Bucket, "thumbnail")); err != nil {
		tb.Fatal(err)
	}
}

// keepOnlyBeforeThumbnails keeps only the thumbnails of pr-1's files, as
// when another comment made default's already.
func (g *galleryBench) keepOnlyBeforeThumbnails(tb testing.TB) {
	tb.Helper()
	for _, data := range g.after {
		s := sha(data)
		os.Remove(filepath.Join(g.srv.Root, g.srv.Bucket, "thumbnail", "512-v1", s[:2], s+".png"))
	}
}

// commentRun is one comment's command: what it did, and its CPU time
// (user and system).
type commentRun struct {
	result
	cpu time.Duration
}

// comment runs the comment's command in dir and checks its result.
func (g *galleryBench) comment(tb testing.TB, dir string) commentRun {
	tb.Helper()
	args := []string{"gallery", "-base=default", "-format=markdown", "-out=comment.md"}
	cmd, stdout, stderr := genformCmd(tb, dir, childEnv(append(g.srv.Env(), "GENFORM_WORKSPACE=pr-1")...), args...)
	start := time.Now()
	err := cmd.Run()
	r := commentRun{result: result{args: args, stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}}
	if cmd.ProcessState == nil {
		tb.Fatalf("running genform gallery: %v", err)
	}
	r.code = cmd.ProcessState.ExitCode()
	r.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if r.code != 0 || r.stderr != "" || !strings.Contains(r.stdout, fmt.Sprintf("%d instances differ from default", g.n)) {
		tb.Fatalf("gallery:\n%s", r.result)
	}
	return r
}

// rawDownload fetches pr-1's objects into io.Discard, 8 at a time.
func (g *galleryBench) rawDownload(tb testing.TB) time.Duration {
	tb.Helper()
	start := time.Now()
	eg, ctx := errgroup.WithContext(context.Background())
	eg.SetLimit(8)
	for _, data := range g.after {
		eg.Go(func() error {
			s := sha(data)
			obj, err := g.srv.Client().GetObject(ctx, g.srv.Bucket, "sha256/"+s[:2]+"/"+s, minio.GetObjectOptions{})
			if err != nil {
				return err
			}
			defer obj.Close()
			n, err := io.Copy(struct{ io.Writer }{io.Discard}, obj)
			if err == nil && n != int64(len(data)) {
				err = fmt.Errorf("%s: %d bytes", s, n)
			}
			return err
		})
	}
	if err := eg.Wait(); err != nil {
		tb.Fatal(err)
	}
	return time.Since(start)
}

// BenchmarkGalleryComment is the comment for a pull request that changes
// 500 images, each round beside its yardsticks:
//
//	go test -run '^$' -bench 'GalleryComment$' -benchtime 3x ./internal/e2e
//
// It reports the seconds of genform pull of the 500 files (pull-s), of
// fetching them alone (get-s), and of three comments: the first, which
// makes and uploads the thumbnails of both sides (first-s), one whose
// base's thumbnails a previous comment made (after-only-s), and a second
// comment, which finds them all (again-s); the first comment's CPU time
// (first-cpu-s, user and system); and its time over the pull's
// (first/pull).
func BenchmarkGalleryComment(b *testing.B) {
	skipRace(b)
	g := newGalleryBench(b, galleryBenchFiles())
	var pull, get, first, afterOnly, again, firstCPU time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		dir := g.workdir(b, true)
		fresh := g.workdir(b, false)
		g.dropThumbnails(b)
		syncDisk()
		get += g.rawDownload(b)
		r := genform(b, fresh, childEnv(append(g.srv.Env(), "GENFORM_WORKSPACE=pr-1")...), "pull")
		if r.code != 0 || !regexp.MustCompile(fmt.Sprintf(`%d files fetched`, g.n)).MatchString(r.stdout) {
			b.Fatalf("pull:\n%s", r)
		}
		pull += r.took
		b.StartTimer()
		c := g.comment(b, dir)
		b.StopTimer()
		first += c.took
		firstCPU += c.cpu
		again += g.comment(b, dir).took
		g.keepOnlyBeforeThumbnails(b)
		ao := g.comment(b, dir).took
		afterOnly += ao
		b.Logf("%d files of %d KB: pull %.2fs; comment: first %.2fs (CPU %.2fs), base's thumbnails there %.2fs",
			g.n, g.bytesPerFile/1000, r.took.Seconds(), c.took.Seconds(), c.cpu.Seconds(), ao.Seconds())
		b.StartTimer()
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(pull.Seconds()/n, "pull-s")
	b.ReportMetric(get.Seconds()/n, "get-s")
	b.ReportMetric(first.Seconds()/n, "first-s")
	b.ReportMetric(afterOnly.Seconds()/n, "after-only-s")
	b.ReportMetric(again.Seconds()/n, "again-s")
	b.ReportMetric(firstCPU.Seconds()/n, "first-cpu-s")
	b.ReportMetric(first.Seconds()/pull.Seconds(), "first/pull")
}
