package thumbnail

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	stddraw "image/draw"
	_ "image/gif" // a GIF's (a simulator's video's) first frame
	_ "image/jpeg"

	"golang.org/x/image/draw"
	_ "golang.org/x/image/webp"
)

// MaxSide is the most pixels a thumbnail has on its long side.
const MaxSide = 512

// MaxPixels is the largest picture a thumbnail is made of, in pixels
// (an 8K frame is 33 million): past it the picture is refused from its
// header, before its pixels take the memory.
const MaxPixels = 64 << 20

// ContentType is the type of every thumbnail's bytes.
const ContentType = "image/png"

// Thumbnail is a picture made small.
type Thumbnail struct {
	// PNG is its bytes.
	PNG []byte
	// Width and Height are its size; SourceWidth and SourceHeight the
	// size of the picture it was made of.
	Width, Height             int
	SourceWidth, SourceHeight int
}

// ErrNotPicture is wrapped by the error of bytes that are no image this
// package decodes.
var ErrNotPicture = errors.New("not a PNG, JPEG, GIF or WebP image")

// Image makes the thumbnail of the image whose bytes are data; an
// animated GIF's is that of its first frame.
func Image(data []byte) (*Thumbnail, error) {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotPicture, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || int64(cfg.Width)*int64(cfg.Height) > MaxPixels {
		return nil, fmt.Errorf("the picture is %d×%d pixels, more than the %d million a thumbnail is made of", cfg.Width, cfg.Height, MaxPixels>>20)
	}
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotPicture, err)
	}
	small := Scale(src)
	b, err := Encode(small)
	if err != nil {
		return nil, err
	}
	return &Thumbnail{PNG: b, Width: small.Rect.Dx(), Height: small.Rect.Dy(), SourceWidth: src.Bounds().Dx(), SourceHeight: src.Bounds().Dy()}, nil
}

// Fit is the size a picture of w×h pixels is shown at: the same shape,
// MaxSide on its long side (its own size when that is smaller), at least
// one pixel each way.
func Fit(w, h int) (int, int) {
	long := max(w, h)
	if long <= MaxSide {
		return w, h
	}
	return max(1, (w*MaxSide+long/2)/long), max(1, (h*MaxSide+long/2)/long)
}

// Scale makes src at most MaxSide pixels on its long side. Whole blocks
// of f×f pixels are averaged into one first (f the largest whole factor
// that leaves the long side at least MaxSide), and golang.org/x/image/draw's
// bilinear filters scale the rest: the box keeps every source pixel's
// part, where a filter alone over a factor of 8 would cost eight times
// its taps.
func Scale(src image.Image) *image.RGBA {
	b := src.Bounds()
	w, h := b.Dx(), b.Dy()
	tw, th := Fit(w, h)
	f := max(1, max(w, h)/MaxSide)
	mid := boxReduce(src, f)
	if mid.Rect.Dx() == tw && mid.Rect.Dy() == th {
		return mid
	}
	dst := image.NewRGBA(image.Rect(0, 0, tw, th))
	// After the box, what is left is a factor under 2. Under 1.5, four
	// neighbours (ApproxBiLinear) take every source pixel's part closely
	// enough at a fifth of BiLinear's cost, which widens its taps by the
	// factor; at 1.5 and over (a source of 769 to 1023 pixels, which the
	// box leaves whole) BiLinear keeps a fine pattern from aliasing.
	scaler := draw.Interpolator(draw.BiLinear)
	if 2*max(mid.Rect.Dx(), mid.Rect.Dy()) < 3*max(tw, th) {
		scaler = draw.ApproxBiLinear
	}
	scaler.Scale(dst, dst.Rect, mid, mid.Rect, draw.Src, nil)
	return dst
}

// boxReduce averages every f×f block of src into one pixel of the
// result (premultiplied RGBA); the last w%f columns and h%f rows, fewer
// than f pixels, are left out. f == 1 is a copy in RGBA.
func boxReduce(src image.Image, f int) *image.RGBA {
	b := src.Bounds()
	w, h := b.Dx()/f, b.Dy()/f
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	if f == 1 {
		if rgba, ok := src.(*image.RGBA); ok {
			for y := range h {
				copy(dst.Pix[y*dst.Stride:y*dst.Stride+4*w], rgba.Pix[rgba.PixOffset(b.Min.X, b.Min.Y+y):])
			}
			return dst
		}
	}
	rows := newRowReader(src)
	acc := make([]uint32, 4*w)
	div := uint32(f * f)
	for y := range h {
		clear(acc)
		for dy := range f {
			row := rows.row(b.Min.Y + y*f + dy)
			for x := range w {
				p := row[4*x*f : 4*(x+1)*f]
				var r, g, bl, a uint32
				for i := 0; i < len(p); i += 4 {
					r += uint32(p[i])
					g += uint32(p[i+1])
					bl += uint32(p[i+2])
					a += uint32(p[i+3])
				}
				acc[4*x] += r
				acc[4*x+1] += g
				acc[4*x+2] += bl
				acc[4*x+3] += a
			}
		}
		out := dst.Pix[y*dst.Stride:]
		for i, v := range acc {
			out[i] = uint8((v + div/2) / div)
		}
	}
	return dst
}

// rowReader gives the rows of a picture as premultiplied RGBA bytes,
// straight from the pixels of the types decoders make (RGBA, NRGBA and
// paletted PNGs, GIF frames) and through image/draw's conversions for
// the others (JPEG's YCbCr, grey).
type rowReader struct {
	src     image.Image
	buf     *image.RGBA // one row, for a type converted
	palette []color.RGBA
}

func newRowReader(src image.Image) *rowReader {
	b := src.Bounds()
	r := &rowReader{src: src}
	switch s := src.(type) {
	case *image.RGBA:
	case *image.Paletted:
		r.palette = make([]color.RGBA, 256)
		for i, c := range s.Palette {
			r.palette[i] = color.RGBAModel.Convert(c).(color.RGBA)
		}
		r.buf = image.NewRGBA(image.Rect(0, 0, b.Dx(), 1))
	default:
		r.buf = image.NewRGBA(image.Rect(0, 0, b.Dx(), 1))
	}
	return r
}

// row is row y of the picture (in its own coordinates), 4 bytes a pixel
// from its left edge; valid until the next call.
func (r *rowReader) row(y int) []uint8 {
	b := r.src.Bounds()
	switch s := r.src.(type) {
	case *image.RGBA:
		i := s.PixOffset(b.Min.X, y)
		return s.Pix[i : i+4*b.Dx()]
	case *image.NRGBA:
		i := s.PixOffset(b.Min.X, y)
		in, out := s.Pix[i:i+4*b.Dx()], r.buf.Pix
		for p := 0; p < len(in); p += 4 {
			a := uint32(in[p+3])
			out[p] = uint8((uint32(in[p])*a + 127) / 255)
			out[p+1] = uint8((uint32(in[p+1])*a + 127) / 255)
			out[p+2] = uint8((uint32(in[p+2])*a + 127) / 255)
			out[p+3] = uint8(a)
		}
		return out
	case *image.Paletted:
		i := s.PixOffset(b.Min.X, y)
		out := r.buf.Pix
		for x, ci := range s.Pix[i : i+b.Dx()] {
			c := r.palette[ci]
			out[4*x], out[4*x+1], out[4*x+2], out[4*x+3] = c.R, c.G, c.B, c.A
		}
		return out
	default:
		stddraw.Draw(r.buf, r.buf.Rect, r.src, image.Pt(b.Min.X, y), stddraw.Src)
		return r.buf.Pix
	}
}
