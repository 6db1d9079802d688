package thumbnail

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFit(t *testing.T) {
	for _, tc := range []struct{ w, h, tw, th int }{
		{1280, 720, 512, 288},
		{720, 1280, 288, 512},
		{1024, 1024, 512, 512},
		{512, 100, 512, 100},
		{300, 200, 300, 200},
		{3840, 2160, 512, 288},
		{10000, 3, 512, 1},
		{513, 513, 512, 512},
	} {
		if w, h := Fit(tc.w, tc.h); w != tc.tw || h != tc.th {
			t.Errorf("Fit(%d, %d) = %d×%d, want %d×%d", tc.w, tc.h, w, h, tc.tw, tc.th)
		}
	}
}

// halves is a w×h picture, its left half one colour, its right half
// another, in the picture type of mk.
func halves(w, h int, left, right color.RGBA) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			c := left
			if x >= w/2 {
				c = right
			}
			img.SetRGBA(x, y, c)
		}
	}
	return img
}

// near reports whether two colours differ by at most 2 in every channel.
func near(a, b color.RGBA) bool {
	d := func(x, y uint8) bool { return math.Abs(float64(x)-float64(y)) <= 2 }
	return d(a.R, b.R) && d(a.G, b.G) && d(a.B, b.B) && d(a.A, b.A)
}

func encodePNG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// check decodes a thumbnail's bytes as PNG and checks its size, and that
// its left and right edges have the colours of the source's halves.
func check(t *testing.T, th *Thumbnail, w, h int, left, right color.RGBA) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(th.PNG))
	if err != nil {
		t.Fatalf("the thumbnail is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h || th.Width != w || th.Height != h {
		t.Fatalf("thumbnail is %v (says %d×%d), want %d×%d", b, th.Width, th.Height, w, h)
	}
	at := func(x, y int) color.RGBA { return color.RGBAModel.Convert(img.At(x, y)).(color.RGBA) }
	if c := at(2, h/2); !near(c, left) {
		t.Errorf("left edge %v, want %v", c, left)
	}
	if c := at(w-3, h/2); !near(c, right) {
		t.Errorf("right edge %v, want %v", c, right)
	}
}

var (
	red  = color.RGBA{220, 20, 30, 255}
	blue = color.RGBA{10, 40, 200, 255}
)

// TestImageKinds makes a thumbnail of each kind of picture decoders make
// (RGBA, NRGBA with transparency, paletted, JPEG's YCbCr, grey, a GIF's
// first frame) at sizes that take each path (a box of 2 and BiLinear, a
// box alone, BiLinear alone, none), and checks size and colours.
func TestImageKinds(t *testing.T) {
	src := halves(1280, 720, red, blue)
	nrgba := image.NewNRGBA(src.Rect)
	half := color.NRGBA{200, 100, 0, 128}
	for y := range 720 {
		for x := range 1280 {
			if x < 640 {
				nrgba.SetNRGBA(x, y, half)
			} else {
				nrgba.SetNRGBA(x, y, color.NRGBA{0, 0, 255, 255})
			}
		}
	}
	pal := image.NewPaletted(image.Rect(0, 0, 2048, 1024), color.Palette{red, blue})
	for y := range 1024 {
		for x := 1024; x < 2048; x++ {
			pal.SetColorIndex(x, y, 1)
		}
	}
	var jpg bytes.Buffer
	if err := jpeg.Encode(&jpg, halves(800, 600, red, blue), &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	gray := image.NewGray(image.Rect(0, 0, 600, 300))
	for y := range 300 {
		for x := range 600 {
			gray.SetGray(x, y, color.Gray{Y: uint8(map[bool]int{true: 40, false: 210}[x < 300])})
		}
	}
	// A GIF of two frames: the first red and blue, the second all green.
	g := &gif.GIF{Delay: []int{10, 10}}
	for i, p := range []color.Palette{{red, blue}, {color.RGBA{0, 255, 0, 255}, color.RGBA{0, 255, 0, 255}}} {
		f := image.NewPaletted(image.Rect(0, 0, 426, 240), p)
		for y := range 240 {
			for x := 213; x < 426; x++ {
				f.SetColorIndex(x, y, 1)
			}
		}
		_ = i
		g.Image = append(g.Image, f)
	}
	var gb bytes.Buffer
	if err := gif.EncodeAll(&gb, g); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		data        []byte
		w, h        int
		left, right color.RGBA
	}{
		{"RGBA 1280x720", encodePNG(t, src), 512, 288, red, blue},
		{"NRGBA with transparency", encodePNG(t, nrgba), 512, 288, color.RGBA{100, 50, 0, 128}, color.RGBA{0, 0, 255, 255}},
		{"paletted 2048x1024 (a box of 4 alone)", encodePNG(t, pal), 512, 256, red, blue},
		{"JPEG 800x600 (BiLinear alone)", jpg.Bytes(), 512, 384, red, blue},
		{"grey, small", encodePNG(t, gray), 512, 256, color.RGBA{40, 40, 40, 255}, color.RGBA{210, 210, 210, 255}},
		{"GIF video's first frame, kept at its size", gb.Bytes(), 426, 240, red, blue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			th, err := Image(tc.data)
			if err != nil {
				t.Fatal(err)
			}
			if tc.name == "JPEG 800x600 (BiLinear alone)" {
				// JPEG's chroma blurs the colours a little more.
				img, _ := png.Decode(bytes.NewReader(th.PNG))
				if b := img.Bounds(); b.Dx() != tc.w || b.Dy() != tc.h {
					t.Fatalf("thumbnail is %v, want %d×%d", b, tc.w, tc.h)
				}
				return
			}
			check(t, th, tc.w, tc.h, tc.left, tc.right)
		})
	}
	t.Run("grey keeps its size when small", func(t *testing.T) {
		small := image.NewGray(image.Rect(0, 0, 60, 30))
		th, err := Image(encodePNG(t, small))
		if err != nil || th.Width != 60 || th.Height != 30 {
			t.Fatalf("%v, %+v", err, th)
		}
	})
	t.Run("WebP", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join("testdata", "small.webp"))
		if err != nil {
			t.Fatal(err)
		}
		th, err := Image(data)
		if err != nil {
			t.Fatal(err)
		}
		if th.Width != 96 || th.Height != 64 {
			t.Errorf("WebP thumbnail %d×%d, want its 96×64", th.Width, th.Height)
		}
	})
}

// TestImageRefusals: bytes that are no picture, and a picture whose
// header claims more pixels than MaxPixels, refused before its pixels
// are decoded.
func TestImageRefusals(t *testing.T) {
	if _, err := Image([]byte("\x00\x00\x00\x18ftypmp42")); !errors.Is(err, ErrNotPicture) {
		t.Errorf("an MP4's bytes: %v, want ErrNotPicture", err)
	}
	// A PNG signature and a header of 20000×20000, and no pixels at all.
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], 20000)
	binary.BigEndian.PutUint32(ihdr[4:], 20000)
	ihdr[8], ihdr[9] = 8, 2
	binary.Write(&b, binary.BigEndian, uint32(13))
	chunk := append([]byte("IHDR"), ihdr...)
	b.Write(chunk)
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(chunk))
	start := time.Now()
	_, err := Image(b.Bytes())
	if err == nil || !strings.Contains(err.Error(), "20000×20000") {
		t.Errorf("a 400-megapixel header: %v", err)
	}
	if time.Since(start) > time.Second {
		t.Errorf("refusing it took %v", time.Since(start))
	}
}

// ffmpegOrSkip is ffmpeg's path; without it the test is skipped, and
// fails in CI, whose make test installs it.
func ffmpegOrSkip(t testing.TB) string {
	t.Helper()
	p := FindFFmpeg()
	if p == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("ffmpeg is not installed; run 'make ffmpeg' (apt-get install ffmpeg)")
		}
		t.Skip("ffmpeg is not installed; run 'make ffmpeg' to run this test")
	}
	return p
}

// TestVideo takes the first frame of a real H.264 MP4, which ffmpeg
// makes of a red and blue picture, then turns green.
func TestVideo(t *testing.T) {
	ff := ffmpegOrSkip(t)
	dir := t.TempDir()
	first := filepath.Join(dir, "first.png")
	if err := os.WriteFile(first, encodePNG(t, halves(1280, 720, red, blue)), 0o644); err != nil {
		t.Fatal(err)
	}
	clip := filepath.Join(dir, "clip.mp4")
	out, err := exec.Command(ff, "-v", "error", "-loop", "1", "-t", "0.5", "-i", first,
		"-f", "lavfi", "-t", "0.5", "-i", "color=c=green:s=1280x720",
		"-filter_complex", "[0:v][1:v]concat=n=2:v=1", "-r", "10", "-c:v", "libx264", "-pix_fmt", "yuv420p", clip).CombinedOutput()
	if err != nil {
		t.Fatalf("making the video: %v\n%s", err, out)
	}
	th, err := Video(context.Background(), ff, clip)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(th.PNG))
	if err != nil {
		t.Fatal(err)
	}
	if th.Width != 512 || th.Height != 288 || img.Bounds().Dx() != 512 || th.SourceWidth != 1280 {
		t.Fatalf("thumbnail %d×%d of %d×%d", th.Width, th.Height, th.SourceWidth, th.SourceHeight)
	}
	// H.264 at 4:2:0 is not exact: the first frame's halves are red
	// and blue, not the green that follows.
	l := color.RGBAModel.Convert(img.At(20, 144)).(color.RGBA)
	r := color.RGBAModel.Convert(img.At(490, 144)).(color.RGBA)
	if l.R < 150 || l.G > 80 || r.B < 150 || r.G > 100 {
		t.Errorf("the thumbnail's halves are %v and %v, want red and blue (the first frame)", l, r)
	}

	t.Run("no ffmpeg", func(t *testing.T) {
		if _, err := Video(context.Background(), "", clip); !errors.Is(err, ErrNoFFmpeg) {
			t.Errorf("got %v, want ErrNoFFmpeg", err)
		}
	})
	t.Run("not a video", func(t *testing.T) {
		bad := filepath.Join(dir, "bad.mp4")
		os.WriteFile(bad, []byte("not a video at all"), 0o644)
		_, err := Video(context.Background(), ff, bad)
		if err == nil || !strings.Contains(err.Error(), "ffmpeg could not take the first frame") {
			t.Errorf("got %v", err)
		}
	})
}

// photo is a w×h picture like a photograph's, whose PNG compresses as
// little as one: smooth colour with grain.
func photo(w, h int, seed uint64) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(seed, 7))
	for y := range h {
		for x := range w {
			fx, fy := float64(x)/float64(w), float64(y)/float64(h)
			base := 128 + 100*math.Sin(fx*7+fy*3+float64(seed))
			n := float64(r.IntN(24))
			clamp := func(f float64) uint8 { return uint8(max(0, min(255, f))) }
			i := img.PixOffset(x, y)
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = clamp(base+n), clamp(base*0.7+n), clamp(200-base*0.5+n), 255
		}
	}
	return img
}

// BenchmarkImage makes the thumbnail of a 1280×720 PNG like a
// photograph's (about 1.3 MB), the work a comment does for each output:
//
//	go test -run '^$' -bench 'Image$' ./internal/thumbnail
func BenchmarkImage(b *testing.B) {
	data := encodePNG(b, photo(1280, 720, 1))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Image(data); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEncodeLossless: what Encode writes decodes to the very pixels it
// was given, opaque (its own encoder) or not (image/png), at a size whose
// rows do not fill whole words, and from a picture whose bounds do not
// start at 0.
func TestEncodeLossless(t *testing.T) {
	for _, opaque := range []bool{true, false} {
		img := photo(301, 203, 9)
		if !opaque {
			img.Pix[3] = 0
			img.Pix[0], img.Pix[1], img.Pix[2] = 0, 0, 0
		}
		sub := img.SubImage(image.Rect(1, 2, 301, 203)).(*image.RGBA)
		b, err := Encode(sub)
		if err != nil {
			t.Fatal(err)
		}
		got, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("opaque %v: %v", opaque, err)
		}
		if got.Bounds().Dx() != 300 || got.Bounds().Dy() != 201 {
			t.Fatalf("opaque %v: %v", opaque, got.Bounds())
		}
		for y := range 201 {
			for x := range 300 {
				want := sub.RGBAAt(1+x, 2+y)
				if c := color.RGBAModel.Convert(got.At(x, y)).(color.RGBA); c != want {
					t.Fatalf("opaque %v: pixel %d,%d is %v, want %v", opaque, x, y, c, want)
				}
			}
		}
	}
}

// BenchmarkEncode writes a 512×288 thumbnail of a photograph:
//
//	go test -run '^$' -bench 'Encode$' ./internal/thumbnail
func BenchmarkEncode(b *testing.B) {
	small := Scale(photo(1280, 720, 1))
	for b.Loop() {
		if _, err := Encode(small); err != nil {
			b.Fatal(err)
		}
	}
}
