package rules

import (
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/schema"
)

// The rules every create endpoint shares.
const (
	// FPS is the frame rate of every video: a key frame's index counts
	// frames at this rate. [published] (key frames at 0 to 31 in a
	// 4-second clip)
	FPS = 8

	// MaxRequestBytes bounds a create request's body. [simulator]
	MaxRequestBytes = 64 << 20
)

var (
	// [interface] for text-to-image. Text-to-video lists no values; the
	// simulator takes the same six. [simulator]
	aspectRatios = []string{"21:9", "16:9", "9:16", "3:4", "4:3", "1:1"}
	// The durations seen in use. [published] The interface lists none,
	// and the simulator takes exactly these. [simulator]
	durations = []int64{2, 4, 6, 8}
)

// table is the rules of each endpoint, by endpoint.
var table = map[addrs.Endpoint]*schema.Endpoint{
	addrs.Text2Image: &schema.Endpoint{
		Endpoint:           addrs.Text2Image,
		PromptRequired:     true,                // [interface]
		ImageNumbers:       []int64{1, 2, 3, 4}, // [interface]
		DefaultImageNumber: 4,                   // [interface]
		Resolutions:        []int64{720, 1080},  // [interface]
		DefaultResolution:  720,                 // [interface]
		AspectRatios:       aspectRatios,        // [interface]
		DefaultAspectRatio: "16:9",              // [interface]
	},
	addrs.Image2Video: &schema.Endpoint{
		Endpoint:        addrs.Image2Video,
		GenModes:        []string{"smooth", "enhanced"}, // [interface]
		DefaultGenMode:  "smooth",                       // [interface]
		Durations:       durations,
		DefaultDuration: 4, // [simulator]
		FPS:             FPS,
		// The one config.source_image, required by the simulator.
		// [simulator]
		MinSourceImages: 1,
		MaxSourceImages: 1,
	},
	addrs.KeyFrames: &schema.Endpoint{
		Endpoint:        addrs.KeyFrames,
		Durations:       durations,
		DefaultDuration: 4, // [published]
		MinSourceImages: 2, // [published]
		MaxSourceImages: 6, // [published]
		KeyFrames:       true,
		FPS:             FPS,
	},
	addrs.Text2Video: &schema.Endpoint{
		Endpoint:           addrs.Text2Video,
		PromptRequired:     true, // [simulator]
		AspectRatios:       aspectRatios,
		DefaultAspectRatio: "16:9",                                     // [simulator]
		GenModes:           []string{"standard", "smooth", "enhanced"}, // [interface]
		DefaultGenMode:     "standard",                                 // [interface]
		Durations:          durations,
		DefaultDuration:    4, // [simulator]
		FPS:                FPS,
	},
}

// For returns the rules of endpoint ep, or nil for no valid endpoint.
func For(ep addrs.Endpoint) *schema.Endpoint {
	return table[ep]
}
