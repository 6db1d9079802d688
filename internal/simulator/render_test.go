package simulator

import (
	"testing"

	"github.com/genform/genform/internal/simulator/simkit"
)

func BenchmarkRenderImage720(b *testing.B) {
	sc := simkit.NewScene("image\x00a lighthouse at dusk\x00\x0042\x000", "a lighthouse at dusk", 0)
	b.ReportAllocs()
	for b.Loop() {
		img := sc.Render(1280, 720, simkit.FrameOptions{Caption: true, TextScale: 2})
		if _, err := simkit.EncodePNG(img); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRenderOnly720(b *testing.B) {
	sc := simkit.NewScene("image\x00a lighthouse at dusk\x00\x0042\x000", "a lighthouse at dusk", 0)
	for b.Loop() {
		sc.Render(1280, 720, simkit.FrameOptions{Caption: true, TextScale: 2})
	}
}

func BenchmarkVideo4s(b *testing.B) {
	r := &request{kind: kindText2Video, aspectRatio: "16:9", prompt: "slow dolly in", genMode: "smooth", duration: 4}
	for b.Loop() {
		if _, err := simkit.EncodeGIF(r.videoFrames(7, true), 8); err != nil {
			b.Fatal(err)
		}
	}
}
