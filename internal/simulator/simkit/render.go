package simkit

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"math"
	"math/rand/v2"
	"sync"

	"golang.org/x/image/font/basicfont"
)

// Palette layout of every rendered picture. A small palette makes the flat
// regions compress to almost nothing; seventeen entries rather than
// sixteen make image/png store eight bits a pixel, which it copies row by
// row, instead of four, which it packs pixel by pixel at twice the cost of
// the whole deflate.
const (
	palSky      = 0 // 0..5: sky bands, darkest at the top
	skyBands    = 6
	palSun      = 6
	palRidge    = 7 // 7..9: ridges, far to near
	palAccent   = 10
	accents     = 3 // 10..12
	palBlack    = 13
	palWhite    = 14
	palStrip    = 15 // caption and watermark background
	palHalo     = 16 // ring around the sun
	paletteSize = 17
)

// Scene is a picture described by numbers drawn from a hash of what was
// asked for (prompt, seed, inputs): a sky, a sun, three ridges and a few
// shapes. It can be rendered at any size and at any instant t of an
// animation, so images, thumbnails and video frames of one request agree.
type Scene struct {
	pal     color.Palette
	horizon float64
	sunX    float64
	sunY    float64
	sunR    float64 // share of the short side
	ridges  [3]ridge
	shapes  []shape
	motion  float64 // how far things move over a whole video
	caption string
}

type ridge struct {
	base, amp float64
	waves     [3]struct{ freq, phase float64 }
	speed     float64
}

type shape struct {
	x, y, w, h float64 // centre and size, shares of width and height
	round      bool
	color      uint8
	dx, dy     float64 // drift over a whole video
}

// NewScene derives a scene from key. Equal keys give equal scenes; the
// caption is drawn as given.
func NewScene(key, caption string, motion float64) *Scene {
	sum := sha256.Sum256([]byte(key))
	r := rand.New(rand.NewPCG(binary.LittleEndian.Uint64(sum[:8]), binary.LittleEndian.Uint64(sum[8:16])))
	sc := &Scene{caption: caption, motion: motion}

	hue := r.Float64() * 360
	ridgeHue := math.Mod(hue+90+r.Float64()*180, 360)
	pal := make(color.Palette, paletteSize)
	for i := range skyBands {
		f := float64(i) / (skyBands - 1)
		pal[palSky+i] = hsv(hue+f*25, 0.75-0.45*f, 0.35+0.6*f)
	}
	pal[palSun] = hsv(math.Mod(hue+180, 360), 0.55, 1)
	for i := range 3 {
		pal[palRidge+i] = hsv(ridgeHue+float64(i)*12, 0.45+0.15*float64(i), 0.7-0.2*float64(i))
	}
	for i := range accents {
		pal[palAccent+i] = hsv(r.Float64()*360, 0.6+0.3*r.Float64(), 0.75+0.25*r.Float64())
	}
	pal[palBlack] = color.RGBA{0, 0, 0, 255}
	pal[palWhite] = color.RGBA{255, 255, 255, 255}
	pal[palStrip] = color.RGBA{24, 24, 28, 255}
	pal[palHalo] = hsv(hue+180, 0.3, 0.97)
	sc.pal = pal

	sc.horizon = 0.45 + 0.25*r.Float64()
	sc.sunX = 0.15 + 0.7*r.Float64()
	sc.sunY = 0.1 + (sc.horizon-0.2)*r.Float64()
	sc.sunR = 0.06 + 0.1*r.Float64()
	for k := range sc.ridges {
		rg := &sc.ridges[k]
		rg.base = sc.horizon + 0.08*float64(k) + 0.05*r.Float64()
		rg.amp = 0.04 + 0.08*r.Float64()
		for i := range rg.waves {
			rg.waves[i].freq = float64(1 + r.IntN(5))
			rg.waves[i].phase = r.Float64() * 2 * math.Pi
		}
		rg.speed = (0.05 + 0.1*float64(k)) * float64(1-2*r.IntN(2))
	}
	n := 2 + r.IntN(5)
	for range n {
		s := shape{
			x:     0.05 + 0.9*r.Float64(),
			y:     0.08 + (sc.horizon-0.05)*r.Float64(),
			w:     0.02 + 0.08*r.Float64(),
			round: r.IntN(2) == 0,
			color: uint8(palAccent + r.IntN(accents)),
			dx:    (r.Float64() - 0.5) * 0.4,
			dy:    (r.Float64() - 0.5) * 0.2,
		}
		if s.round {
			s.h = s.w // a circle; h is ignored
		} else {
			s.h = 0.1 + 0.4*r.Float64()
		}
		sc.shapes = append(sc.shapes, s)
	}
	return sc
}

// FrameOptions says what to draw over the scene.
type FrameOptions struct {
	T         float64   // instant in the animation, 0..1
	Caption   bool      // the caption strip along the bottom
	Watermark bool      // the SIMULATED box (plain video only)
	Timeline  bool      // a progress bar under the caption, for videos
	Keyframes []float64 // afc: key frame positions marked on the timeline, 0..1
	TextScale int       // the size of the caption letters, 1 and up
}

// Render draws the scene at w x h. It writes rows of palette indices
// directly: no image/draw, no per-pixel interfaces.
func (sc *Scene) Render(w, h int, o FrameOptions) *image.Paletted {
	img := image.NewPaletted(image.Rect(0, 0, w, h), sc.pal)
	short := float64(min(w, h))
	t := o.T
	horizon := int(sc.horizon * float64(h))

	// Ridge tops per column, for each layer, moving sideways over time.
	tops := make([]int32, 3*w)
	minTop := h
	for k, rg := range sc.ridges {
		shift := rg.speed * t * sc.motion
		for x := range w {
			u := float64(x)/float64(w) + shift
			y := rg.base
			for _, wv := range rg.waves {
				y += rg.amp / 3 * math.Sin(2*math.Pi*wv.freq*u+wv.phase)
			}
			top := int32(y * float64(h))
			tops[k*w+x] = top
			minTop = min(minTop, int(top))
		}
	}

	sunX := (sc.sunX + 0.25*t*sc.motion) * float64(w)
	sunY := (sc.sunY - 0.08*t*sc.motion) * float64(h)
	sunR := sc.sunR * short
	haloR := sunR * 1.2
	type span struct {
		cx, cy, rx, ry float64
		round          bool
		c              uint8
	}
	spans := make([]span, len(sc.shapes))
	for i, s := range sc.shapes {
		cx := (s.x + s.dx*t*sc.motion) * float64(w)
		cy := (s.y + s.dy*t*sc.motion) * float64(h)
		rx := s.w * float64(w) / 2
		ry := s.h * float64(h) / 2
		if s.round {
			rx = s.w * short / 2
			ry = rx
		}
		spans[i] = span{cx, cy, rx, ry, s.round, s.color}
	}

	for y := range h {
		row := img.Pix[y*img.Stride : y*img.Stride+w]
		base := uint8(palRidge + 2)
		if y < horizon {
			base = uint8(palSky + y*skyBands/max(horizon, 1))
		}
		fill(row, base)
		fy := float64(y) + 0.5
		if dy := fy - sunY; math.Abs(dy) < haloR {
			dx := math.Sqrt(haloR*haloR - dy*dy)
			fillSpan(row, int(sunX-dx), int(sunX+dx), palHalo)
			if math.Abs(dy) < sunR {
				dx := math.Sqrt(sunR*sunR - dy*dy)
				fillSpan(row, int(sunX-dx), int(sunX+dx), palSun)
			}
		}
		for _, s := range spans {
			dy := fy - s.cy
			if math.Abs(dy) >= s.ry {
				continue
			}
			dx := s.rx
			if s.round {
				dx = math.Sqrt(s.rx*s.rx - dy*dy)
			}
			fillSpan(row, int(s.cx-dx), int(s.cx+dx), s.c)
		}
		if y >= minTop {
			t0, t1, t2 := tops[:w], tops[w:2*w], tops[2*w:3*w]
			y32 := int32(y)
			for x := range row {
				switch {
				case y32 >= t2[x]:
					row[x] = palRidge + 2
				case y32 >= t1[x]:
					row[x] = palRidge + 1
				case y32 >= t0[x]:
					row[x] = palRidge
				}
			}
		}
	}

	scale := max(o.TextScale, 1)
	lineH := glyphH * scale
	bottom := h
	if o.Timeline {
		barH := max(h/60, 3)
		fillRect(img, 0, h-barH, w, h, palStrip)
		fillRect(img, 0, h-barH, int(float64(w)*t+0.5), h, palWhite)
		for _, k := range o.Keyframes {
			x := int(k * float64(w))
			fillRect(img, x-1, h-barH, x+1, h, palSun)
		}
		bottom = h - barH
	}
	if o.Caption && sc.caption != "" {
		pad, padX := 2*scale, 5*scale
		stripH := lineH + 2*pad
		fillRect(img, 0, bottom-stripH, w, bottom, palStrip)
		maxChars := (w - 2*padX) / (glyphAdvance * scale)
		drawText(img, padX, bottom-stripH+pad, ellipsize(sc.caption, maxChars), scale, palWhite)
	}
	if o.Watermark {
		const mark = "SIMULATED"
		ws := max(scale, int(short/120))
		pad := 2 * ws
		bw := len(mark)*glyphAdvance*ws + 2*pad
		bh := glyphH*ws + 2*pad
		x0, y0 := w-bw-pad, pad
		fillRect(img, x0, y0, x0+bw, y0+bh, palStrip)
		drawText(img, x0+pad, y0+pad, mark, ws, palWhite)
	}
	return img
}

func fill(row []uint8, c uint8) {
	if len(row) == 0 {
		return
	}
	row[0] = c
	for n := 1; n < len(row); n *= 2 {
		copy(row[n:], row[:n])
	}
}

func fillSpan(row []uint8, x0, x1 int, c uint8) {
	x0 = max(x0, 0)
	x1 = min(x1, len(row))
	if x0 < x1 {
		fill(row[x0:x1], c)
	}
}

func fillRect(img *image.Paletted, x0, y0, x1, y1 int, c uint8) {
	b := img.Rect
	x0, y0 = max(x0, b.Min.X), max(y0, b.Min.Y)
	x1, y1 = min(x1, b.Max.X), min(y1, b.Max.Y)
	for y := y0; y < y1; y++ {
		off := img.PixOffset(0, y)
		fillSpan(img.Pix[off:off+b.Dx()], x0, x1, c)
	}
}

// Glyphs of basicfont.Face7x13, unpacked once into bitmaps.
const (
	glyphW       = 6
	glyphH       = 13
	glyphAdvance = 7
	firstGlyph   = ' '
	lastGlyph    = '~'
)

var glyphs = sync.OnceValue(func() [][glyphH]uint8 {
	face := basicfont.Face7x13
	mask := face.Mask.(*image.Alpha)
	out := make([][glyphH]uint8, lastGlyph-firstGlyph+1)
	for i := range out {
		for y := range glyphH {
			var bits uint8
			for x := range glyphW {
				if mask.AlphaAt(x, i*glyphH+y).A >= 0x80 {
					bits |= 1 << x
				}
			}
			out[i][y] = bits
		}
	}
	return out
})

// drawText draws s with its top-left corner at (x, y), each font pixel a
// scale x scale block. Runes outside printable ASCII are drawn as '?'.
func drawText(img *image.Paletted, x, y int, s string, scale int, c uint8) {
	g := glyphs()
	for _, r := range s {
		if r < firstGlyph || r > lastGlyph {
			r = '?'
		}
		bm := g[r-firstGlyph]
		for gy, bits := range bm {
			for gx := range glyphW {
				if bits&(1<<gx) != 0 {
					px, py := x+gx*scale, y+gy*scale
					fillRect(img, px, py, px+scale, py+scale, c)
				}
			}
		}
		x += glyphAdvance * scale
	}
}

// ellipsize shortens s to at most n runes, marking the cut with "...".
func ellipsize(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n <= 3 {
		return string(r[:max(n, 0)])
	}
	return string(r[:n-3]) + "..."
}

// hsv converts a hue in degrees, saturation and value in 0..1 to RGB.
func hsv(h, s, v float64) color.RGBA {
	h = math.Mod(h, 360)
	if h < 0 {
		h += 360
	}
	c := v * s
	x := c * (1 - math.Abs(math.Mod(h/60, 2)-1))
	m := v - c
	var r, g, b float64
	switch {
	case h < 60:
		r, g, b = c, x, 0
	case h < 120:
		r, g, b = x, c, 0
	case h < 180:
		r, g, b = 0, c, x
	case h < 240:
		r, g, b = 0, x, c
	case h < 300:
		r, g, b = x, 0, c
	default:
		r, g, b = c, 0, x
	}
	to8 := func(f float64) uint8 { return uint8(math.Round((f + m) * 255)) }
	return color.RGBA{to8(r), to8(g), to8(b), 255}
}

// pngBuffers lets PNG encodes reuse their zlib state and row buffers.
type pngBuffers struct{ pool sync.Pool }

func (p *pngBuffers) Get() *png.EncoderBuffer {
	b, _ := p.pool.Get().(*png.EncoderBuffer)
	return b
}

func (p *pngBuffers) Put(b *png.EncoderBuffer) { p.pool.Put(b) }

var pngEncoder = png.Encoder{CompressionLevel: png.BestSpeed, BufferPool: &pngBuffers{}}

func EncodePNG(img image.Image) ([]byte, error) {
	var buf bytes.Buffer
	if err := pngEncoder.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("encoding png: %w", err)
	}
	return buf.Bytes(), nil
}

// EncodeGIF encodes frames played at fps, looping forever. GIF delays are
// in hundredths of a second, so the delays are spread to add up exactly:
// at 8 fps they alternate 13 and 12.
func EncodeGIF(frames []*image.Paletted, fps int) ([]byte, error) {
	if len(frames) == 0 {
		return nil, fmt.Errorf("encoding gif: no frames")
	}
	delays := make([]int, len(frames))
	for i := range delays {
		delays[i] = (i+1)*100/fps - i*100/fps
	}
	b := frames[0].Rect
	g := &gif.GIF{
		Image:  frames,
		Delay:  delays,
		Config: image.Config{ColorModel: frames[0].Palette, Width: b.Dx(), Height: b.Dy()},
	}
	var buf bytes.Buffer
	if err := gif.EncodeAll(&buf, g); err != nil {
		return nil, fmt.Errorf("encoding gif: %w", err)
	}
	return buf.Bytes(), nil
}

// PictureSize is the size of a picture with the given aspect ratio whose
// short side is short pixels; the long side is rounded to an even number.
func PictureSize(aspect string, short int) (w, h int) {
	var a, b int
	if _, err := fmt.Sscanf(aspect, "%d:%d", &a, &b); err != nil || a <= 0 || b <= 0 {
		a, b = 16, 9
	}
	return SizeForRatio(float64(a)/float64(b), short)
}

func SizeForRatio(ratio float64, short int) (w, h int) {
	long := int(math.Round(float64(short)*max(ratio, 1/ratio)/2)) * 2
	if ratio >= 1 {
		return long, short
	}
	return short, long
}

// ThumbSize scales w x h down so its long side is 320 pixels.
func ThumbSize(w, h int) (int, int) {
	const long = 320
	if w >= h {
		return long, max(1, h*long/w)
	}
	return max(1, w*long/h), long
}
