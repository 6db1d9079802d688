package simulator

import (
	"fmt"
	"image"
	"strconv"
	"strings"

	"github.com/genform/genform/internal/provider/reference/rules"
	"github.com/genform/genform/internal/simulator/simkit"
)

// Sizes of rendered videos: small on purpose, since a GIF's size grows with
// every pixel of every frame.
const videoShortSide = 240

// Motion of each video generation mode: 'smooth' is documented as extensive
// motion, so it moves most.
var genModeMotion = map[string]float64{"standard": 0.6, "smooth": 1.2, "enhanced": 1.0}

// Names of the media files of a job, the last element of their URL path.
const (
	assetVideo       = "video.gif"
	assetVideoNoMark = "video-nowm.gif"
	assetVideoThumb  = "video-thumb.png"
)

func imageAsset(i int) string      { return fmt.Sprintf("image-%d.png", i) }
func imageThumbAsset(i int) string { return fmt.Sprintf("image-%d-thumb.png", i) }

// imageSize is the size of each image of a text2image request: the
// resolution is the short side.
func (r *request) imageSize() (int, int) { return simkit.PictureSize(r.aspectRatio, r.resolution) }

// videoSize is the size of a video request's frames: its aspect ratio for
// text2video, the source images' proportion for afc when given, 16:9 else.
func (r *request) videoSize() (int, int) {
	switch {
	case r.kind == kindText2Video:
		return simkit.PictureSize(r.aspectRatio, videoShortSide)
	case r.kind == kindAFC && r.inputWidth > 0 && r.inputHeight > 0:
		ratio := float64(r.inputWidth) / float64(r.inputHeight)
		return simkit.SizeForRatio(min(max(ratio, 1.0/3), 3), videoShortSide)
	default:
		return simkit.PictureSize("16:9", videoShortSide)
	}
}

// imageScene is the scene of image i rendered with seed: everything that
// should change the picture is in the key, and nothing else, so equal
// requests with equal seeds render equal bytes.
func (r *request) imageScene(i int, seed int64) *simkit.Scene {
	key := strings.Join([]string{"image", r.prompt, r.negativePrompt, strconv.FormatInt(seed, 10), strconv.Itoa(i)}, "\x00")
	return simkit.NewScene(key, r.prompt, 0)
}

func (r *request) videoScene(seed int64) *simkit.Scene {
	parts := []string{"video", string(r.kind), r.prompt, r.negativePrompt, strconv.FormatInt(seed, 10), r.genMode}
	parts = append(parts, r.sourceImages...)
	for _, f := range r.frameIndices {
		parts = append(parts, strconv.Itoa(f))
	}
	caption := r.prompt
	if caption == "" {
		caption = map[kind]string{kindImage2Video: "image to video", kindAFC: "key frame conditioning"}[r.kind]
	}
	motion, ok := genModeMotion[r.genMode]
	if !ok {
		motion = 1
	}
	return simkit.NewScene(strings.Join(parts, "\x00"), caption, motion)
}

// renderAsset renders one media file of a succeeded job made from r,
// with seed, and returns its bytes and content type; ok is false when
// the job has no such file.
func (r *request) renderAsset(asset string, seed int64) (data []byte, contentType string, ok bool, err error) {
	if !r.kind.isVideo() {
		var i int
		var thumb bool
		switch {
		case sscanExact(asset, "image-%d.png", &i):
		case sscanExact(asset, "image-%d-thumb.png", &i):
			thumb = true
		default:
			return nil, "", false, nil
		}
		if i < 0 || i >= r.imageNumber {
			return nil, "", false, nil
		}
		w, h := r.imageSize()
		if thumb {
			w, h = simkit.ThumbSize(w, h)
		}
		img := r.imageScene(i, seed).Render(w, h, simkit.FrameOptions{Caption: true, TextScale: min(w, h) / 360})
		data, err := simkit.EncodePNG(img)
		return data, "image/png", true, err
	}
	switch asset {
	case assetVideo, assetVideoNoMark:
		data, err := simkit.EncodeGIF(r.videoFrames(seed, asset == assetVideo), rules.FPS)
		return data, "image/gif", true, err
	case assetVideoThumb:
		w, h := r.videoSize()
		tw, th := simkit.ThumbSize(w, h)
		img := r.videoScene(seed).Render(tw, th, simkit.FrameOptions{Caption: true})
		data, err := simkit.EncodePNG(img)
		return data, "image/png", true, err
	}
	return nil, "", false, nil
}

// videoFrames renders duration x fps frames with seed; t runs from 0 on
// the first to 1 on the last so the timeline bar ends full.
func (r *request) videoFrames(seed int64, watermark bool) []*image.Paletted {
	sc := r.videoScene(seed)
	w, h := r.videoSize()
	n := r.duration * rules.FPS
	var keys []float64
	for _, f := range r.frameIndices {
		keys = append(keys, float64(f)/float64(n-1))
	}
	frames := make([]*image.Paletted, n)
	for i := range frames {
		frames[i] = sc.Render(w, h, simkit.FrameOptions{
			T:         float64(i) / float64(n-1),
			Caption:   true,
			Watermark: watermark,
			Timeline:  true,
			Keyframes: keys,
		})
	}
	return frames
}

// renderAvatar draws the picture of a user, named by the user id.
func renderAvatar(userID string) ([]byte, error) {
	return simkit.EncodePNG(simkit.NewScene("avatar\x00"+userID, "", 0).Render(64, 64, simkit.FrameOptions{}))
}

// sscanExact reports whether s is exactly format with one %d filled in.
func sscanExact(s, format string, n *int) bool {
	if _, err := fmt.Sscanf(s, format, n); err != nil {
		return false
	}
	return fmt.Sprintf(format, *n) == s
}
