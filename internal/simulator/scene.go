package simulator

import (
	"image"

	"github.com/genform/genform/internal/simulator/simkit"
)

// scene is the shared renderer's scene (simkit.Scene) under the names the
// service's media code and its benchmarks use.
type scene struct{ *simkit.Scene }

// frameOptions says what to draw over a scene (see simkit.FrameOptions).
type frameOptions struct {
	t         float64
	caption   bool
	watermark bool
	timeline  bool
	keyframes []float64
	textScale int
}

func newScene(key, caption string, motion float64) *scene {
	return &scene{simkit.NewScene(key, caption, motion)}
}

func (sc *scene) render(w, h int, o frameOptions) *image.Paletted {
	return sc.Render(w, h, simkit.FrameOptions{T: o.t, Caption: o.caption, Watermark: o.watermark,
		Timeline: o.timeline, Keyframes: o.keyframes, TextScale: o.textScale})
}

func encodePNG(img image.Image) ([]byte, error) { return simkit.EncodePNG(img) }
func encodeGIF(frames []*image.Paletted, fps int) ([]byte, error) {
	return simkit.EncodeGIF(frames, fps)
}
