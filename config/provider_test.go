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
