package plans

import (
	"testing"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
)

// A price by the megapixel follows the size the model's tables read from
// the request, each image counted in whole megapixels rounded up; a
// price by the resolution follows the video's lines. Where the size is
// not told, the price by the file applies, and without one the change
// is unpriced, never free.
func TestRateFollowsTheSize(t *testing.T) {
	mp, img := config.Money(3_000), config.Money(50_000)
	sec, sec1080 := config.Money(100_000), config.Money(400_000)
	byMP := &config.Prices{Currency: "USD", Megapixel: &mp}
	byMPOrImage := &config.Prices{Currency: "USD", Megapixel: &mp, Image: &img}
	byRes := &config.Prices{Currency: "USD", VideoSecondAt: map[int64]config.Money{1080: sec1080}}
	byResOrSecond := &config.Prices{Currency: "USD", VideoSecond: &sec, VideoSecondAt: map[int64]config.Money{1080: sec1080}}
	image := func(w, h, media int) *Change {
		m := ModelOf(addrs.ModelEndpoint("fal", "fal-ai/flux/schnell", addrs.Image), nil)
		m.Width, m.Height = w, h
		return &Change{Addr: addrs.MustParseInstance("image.a"), Action: Create, Media: media, Model: m}
	}
	video := func(w, h, seconds int) *Change {
		m := ModelOf(addrs.ModelEndpoint("fal", "fal-ai/veo3.1", addrs.Video), nil)
		m.Width, m.Height = w, h
		return &Change{Addr: addrs.MustParseInstance("video.v"), Action: Create, Media: 1, Seconds: seconds, Model: m}
	}
	for _, tc := range []struct {
		name   string
		c      *Change
		prices *config.Prices
		rate   Rate
		amount config.Money
		ok     bool
	}{
		// landscape_4_3: 786,432 pixels, one megapixel.
		{"1024x768 is one megapixel", image(1024, 768, 1), byMP, Rate{Unit: UnitMegapixel, Price: mp, Units: 1}, mp, true},
		// square_hd: 1,048,576 pixels, rounded up to two.
		{"1024x1024 is two", image(1024, 1024, 1), byMP, Rate{Unit: UnitMegapixel, Price: mp, Units: 2}, mp.Times(2), true},
		{"four of 1000x1000", image(1000, 1000, 4), byMP, Rate{Unit: UnitMegapixel, Price: mp, Units: 4}, mp.Times(4), true},
		{"size not told, by the image", image(0, 0, 3), byMPOrImage, Rate{Unit: UnitImage, Price: img, Units: 3}, img.Times(3), true},
		{"size not told, no image price", image(0, 0, 3), byMP, Rate{}, 0, false},
		{"8 s at 1080p", video(1920, 1080, 8), byRes, Rate{Unit: UnitVideoSecondAt, Price: sec1080, Units: 8, Lines: 1080}, sec1080.Times(8), true},
		{"8 s at 1080p, portrait", video(1080, 1920, 8), byRes, Rate{Unit: UnitVideoSecondAt, Price: sec1080, Units: 8, Lines: 1080}, sec1080.Times(8), true},
		{"8 s at 720p, by the second", video(1280, 720, 8), byResOrSecond, Rate{Unit: UnitVideoSecond, Price: sec, Units: 8}, sec.Times(8), true},
		{"8 s at 720p, unpriced", video(1280, 720, 8), byRes, Rate{}, 0, false},
		{"resolution not told", video(0, 0, 8), byRes, Rate{}, 0, false},
	} {
		r, ok := tc.c.Rate(tc.prices)
		if r != tc.rate || ok != tc.ok {
			t.Errorf("%s: rate %+v, %v; want %+v, %v", tc.name, r, ok, tc.rate, tc.ok)
		}
		if amount, ok := tc.c.Cost(tc.prices); amount != tc.amount || ok != tc.ok {
			t.Errorf("%s: cost %v, %v; want %v, %v", tc.name, amount, ok, tc.amount, tc.ok)
		}
	}
}
