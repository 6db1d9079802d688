package config

import (
	"strings"
	"testing"
)

// An image OpenAI answers as bytes can be the source image of a provider
// that takes data: URIs (Runway), not of one that takes only URLs (Luma):
// validate says so at the attribute, naming both providers and the way
// out.
func TestSourceImageWithoutAURL(t *testing.T) {
	const image = `
image "still" {
  provider = openai
  model    = "gpt-image-2"
  prompt   = "a harbour at noon"
}
`
	mustLoad(t, image+`
video "clip" {
  provider     = runway
  model        = "gen4_turbo"
  prompt       = "waves roll in"
  source_image = image.still.outputs[0].media_url
}
`, Options{})

	diags := loadErrors(t, image+`
video "clip" {
  provider      = luma
  model         = "ray-2"
  prompt        = "waves roll in"
  source_images = [image.still.outputs[0].media_url]
}
`, Options{})
	got := diagList(diags)
	for _, want := range []string{"Source image without a URL", "source_images of video.clip uses image.still, made on OpenAI", "Luma takes source images only as URLs", "genform providers"} {
		if !strings.Contains(got, want) {
			t.Errorf("the error does not say %q:\n%s", want, got)
		}
	}
}

// A provider's prices per model are told apart from its own prices by
// their shape, whatever the model ids look like: fal's hold a "/", OpenAI's
// and Runway's do not.
func TestPricesPerModelWithoutASlash(t *testing.T) {
	c := mustLoad(t, `
provider "openai" {
  prices = { "gpt-image-2" = { image = 0.04 } }
}
`, Options{})
	p := c.ProviderOf("openai")
	if mp := p.ModelPrices["gpt-image-2"]; mp == nil || mp.Image == nil || mp.Image.String() != "0.04" {
		t.Fatalf("model prices %v; want gpt-image-2 at 0.04 an image", p.ModelPrices)
	}
	if p.Settings.Prices != nil {
		t.Errorf("the block's own prices are %v; want none", p.Settings.Prices)
	}
}

// Prices that follow the size: megapixel, and video_second by
// resolution, per model or for a provider's every model; the service
// block, whose requests the tables do not size, refuses them.
func TestPricesBySize(t *testing.T) {
	c := mustLoad(t, `
provider "fal" {
  prices = {
    "fal-ai/flux/schnell" = { megapixel = 0.003 }
    "fal-ai/veo3.1"       = { video_second = { "720p" = 0.2, "4k" = 0.4 } }
  }
}
provider "luma" {
  prices = { video_second = { "1080p" = 0.5 }, image = 0.01 }
}
`, Options{})
	fal := c.ProviderOf("fal")
	if mp := fal.ModelPrices["fal-ai/flux/schnell"]; mp == nil || mp.Megapixel == nil || mp.Megapixel.String() != "0.003" || mp.Image != nil {
		t.Errorf("schnell's prices: %+v", mp)
	}
	if vp := fal.ModelPrices["fal-ai/veo3.1"]; vp == nil || vp.VideoSecondAt[720].String() != "0.20" || vp.VideoSecondAt[2160].String() != "0.40" || len(vp.VideoSecondAt) != 2 {
		t.Errorf("veo's prices: %+v", vp)
	}
	// An object of resolutions is the block's own video_second, not a
	// model's prices.
	luma := c.ProviderOf("luma")
	if p := luma.Settings.Prices; p == nil || p.VideoSecondAt[1080].String() != "0.50" || p.Image == nil || len(luma.ModelPrices) != 0 {
		t.Errorf("luma's prices: %+v, per model %v", p, luma.ModelPrices)
	}
	for _, tt := range []struct{ src, want string }{
		{`service {
  prices = { megapixel = 0.01 }
}`, "the service block prices by the image"},
		{`service {
  prices = { video_second = { "720p" = 0.1 } }
}`, "the service block's video_second is one number"},
		{`provider "fal" {
  prices = { video_second = { "720" = 0.1 } }
}`, `"720" is not one`},
		{`provider "fal" {
  prices = { megapixels = 0.1 }
}`, `Did you mean "megapixel"?`},
	} {
		if got := diagList(loadErrors(t, tt.src, Options{})); !strings.Contains(got, tt.want) {
			t.Errorf("%s:\n%s\nwant %q", tt.src, got, tt.want)
		}
	}
}

// The configuration hands the numbers of the common attributes to a
// provider's Body as json.Number: resolution and duration reach Runway's
// and fal's fields as they take them (Runway's resolution was refused
// whatever it was).
func TestNumbersReachTheProviders(t *testing.T) {
	c := mustLoad(t, `
video "runway" {
  provider     = runway
  model        = "veo3.1"
  prompt       = "p"
  aspect_ratio = "16:9"
  resolution   = 1080
}
video "veo" {
  provider   = fal
  model      = "fal-ai/veo3.1"
  prompt     = "p"
  resolution = 2160
  duration   = 6
}
video "kling" {
  provider     = fal
  model        = "fal-ai/kling-video/v3/standard/image-to-video"
  prompt       = "p"
  source_image = "https://example.com/a.png"
  duration     = 12
}
`, Options{})
	insts := expandAll(t, c, nil)
	for addr, want := range map[string][]string{
		"video.runway": {`"ratio":"1920:1080"`},
		"video.veo":    {`"resolution":"4k"`, `"duration":"6s"`},
		"video.kling":  {`"duration":"12"`, `"start_image_url":"https://example.com/a.png"`},
	} {
		req := string(insts[addr].Request)
		for _, w := range want {
			if !strings.Contains(req, w) {
				t.Errorf("%s: request %s lacks %s", addr, req, w)
			}
		}
	}
}
