package simulator

import (
	"testing"
)

func BenchmarkRenderImage720(b *testing.B) {
	sc := newScene("image\x00a lighthouse at dusk\x00\x0042\x000", "a lighthouse at dusk", 0)
	b.ReportAllocs()
	for b.Loop() {
		img := sc.render(1280, 720, frameOptions{caption: true, textScale: 2})
		if _, err := encodePNG(img); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRenderOnly720(b *testing.B) {
	sc := newScene("image\x00a lighthouse at dusk\x00\x0042\x000", "a lighthouse at dusk", 0)
	for b.Loop() {
		sc.render(1280, 720, frameOptions{caption: true, textScale: 2})
	}
}

func BenchmarkVideo4s(b *testing.B) {
	j := &job{ID: "x", Seed: 7, req: &request{kind: kindText2Video, aspectRatio: "16:9", prompt: "slow dolly in", genMode: "smooth", duration: 4}}
	for b.Loop() {
		if _, err := encodeGIF(j.videoFrames(true), 8); err != nil {
			b.Fatal(err)
		}
	}
}
