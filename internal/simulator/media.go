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

// imageSize is the size of each image of a text2image job: the resolution
// is the short side.
func (j *job) imageSize() (int, int) { return simkit.PictureSize(j.req.aspectRatio, j.req.resolution) }

// videoSize is the size of a video job's frames: its aspect ratio for
// text2video, the source images' proportion for afc when given, 16:9 else.
func (j *job) videoSize() (int, int) {
	switch {
	case j.req.kind == kindText2Video:
		return simkit.PictureSize(j.req.aspectRatio, videoShortSide)
	case j.req.kind == kindAFC && j.req.inputWidth > 0 && j.req.inputHeight > 0:
		ratio := float64(j.req.inputWidth) / float64(j.req.inputHeight)
		return simkit.SizeForRatio(min(max(ratio, 1.0/3), 3), videoShortSide)
	default:
		return simkit.PictureSize("16:9", videoShortSide)
	}
}

// imageScene is the scene of image i: everything that should change the
// picture is in the key, and nothing else, so equal requests with equal
// seeds render equal bytes.
func (j *job) imageScene(i int) *scene {
	r := j.req
	key := strings.Join([]string{"image", r.prompt, r.negativePrompt, strconv.FormatInt(j.Seed, 10), strconv.Itoa(i)}, "\x00")
	return newScene(key, r.prompt, 0)
}

func (j *job) videoScene() *scene {
	r := j.req
	parts := []string{"video", string(r.kind), r.prompt, r.negativePrompt, strconv.FormatInt(j.Seed, 10), r.genMode}
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
	return newScene(strings.Join(parts, "\x00"), caption, motion)
}

// renderAsset renders one media file of a succeeded job and returns its
// bytes and content type; ok is false when the job has no such file.
func (j *job) renderAsset(asset string) (data []byte, contentType string, ok bool, err error) {
	if !j.req.kind.isVideo() {
		var i int
		var thumb bool
		switch {
		case sscanExact(asset, "image-%d.png", &i):
		case sscanExact(asset, "image-%d-thumb.png", &i):
			thumb = true
		default:
			return nil, "", false, nil
		}
		if i < 0 || i >= j.req.imageNumber {
			return nil, "", false, nil
		}
		w, h := j.imageSize()
		if thumb {
			w, h = simkit.ThumbSize(w, h)
		}
		img := j.imageScene(i).render(w, h, frameOptions{caption: true, textScale: min(w, h) / 360})
		data, err := encodePNG(img)
		return data, "image/png", true, err
	}
	switch asset {
	case assetVideo, assetVideoNoMark:
		data, err := encodeGIF(j.videoFrames(asset == assetVideo), rules.FPS)
		return data, "image/gif", true, err
	case assetVideoThumb:
		w, h := j.videoSize()
		tw, th := simkit.ThumbSize(w, h)
		img := j.videoScene().render(tw, th, frameOptions{caption: true})
		data, err := encodePNG(img)
		return data, "image/png", true, err
	}
	return nil, "", false, nil
}

// videoFrames renders duration x fps frames; t runs from 0 on the first to
// 1 on the last so the timeline bar ends full.
func (j *job) videoFrames(watermark bool) []*image.Paletted {
	sc := j.videoScene()
	w, h := j.videoSize()
	n := j.req.duration * rules.FPS
	var keys []float64
	for _, f := range j.req.frameIndices {
		keys = append(keys, float64(f)/float64(n-1))
	}
	frames := make([]*image.Paletted, n)
	for i := range frames {
		frames[i] = sc.render(w, h, frameOptions{
			t:         float64(i) / float64(n-1),
			caption:   true,
			watermark: watermark,
			timeline:  true,
			keyframes: keys,
		})
	}
	return frames
}

// renderAvatar draws the picture of a user, named by the user id.
func renderAvatar(userID string) ([]byte, error) {
	return encodePNG(newScene("avatar\x00"+userID, "", 0).render(64, 64, frameOptions{}))
}

// sscanExact reports whether s is exactly format with one %d filled in.
func sscanExact(s, format string, n *int) bool {
	if _, err := fmt.Sscanf(s, format, n); err != nil {
		return false
	}
	return fmt.Sprintf(format, *n) == s
}
