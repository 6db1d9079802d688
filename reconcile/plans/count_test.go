package plans

import (
	"fmt"
	"testing"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/configtest"
)

// instances loads src and expands every resource with nothing known of
// the others (what a plan sees of a resource not yet generated), by
// address.
func instances(t *testing.T, src string) map[string]*config.Instance {
	t.Helper()
	cfg := configtest.Load(t, t.TempDir(), `
provider "fal" {
  base_url = "http://127.0.0.1:1"
}
provider "replicate" {
  base_url = "http://127.0.0.1:1"
}
provider "runway" {
  base_url = "http://127.0.0.1:1"
}
provider "openai" {
  base_url = "http://127.0.0.1:1"
}
`+src)
	out := map[string]*config.Instance{}
	for _, r := range cfg.Resources {
		insts, diags := cfg.Expand(r, config.Scope{})
		if diags.HasErrors() {
			t.Fatalf("%s: %v", r.Addr(), diags)
		}
		for _, inst := range insts {
			out[inst.Addr.String()] = inst
		}
	}
	return out
}

// The count fields of a live provider's input set how many files a
// generation makes, and so what a plan counts and prices: a whole number
// (or a string of one) multiplies the count; several multiply together;
// a value the plan cannot count is named, and taken as 1; fields that are
// not counts (steps, guidance) change nothing.
func TestCountOfInputFields(t *testing.T) {
	cases := []struct {
		name, block string
		media       int
		def         bool
		uncounted   *Uncounted
	}{
		{name: "no input: one file, the default of a model the tables do not list", media: 1,
			block: `provider = fal
  model = "fal-ai/fast-sdxl"`},
		{name: "fields that are not counts", media: 1,
			block: `provider = fal
  model = "fal-ai/fast-sdxl"
  input = { num_inference_steps = 40, guidance_scale = 3.5, steps = 8 }`},
		{name: "fal num_images", media: 3,
			block: `provider = fal
  model = "fal-ai/fast-sdxl"
  input = { num_images = 3 }`},
		{name: "Seedream: num_images generations of max_images", media: 6,
			block: `provider = fal
  model = "fal-ai/bytedance/seedream/v4/text-to-image"
  input = { num_images = 2, max_images = 3 }`},
		{name: "every count field multiplies", media: 240,
			block: `provider = fal
  model = "fal-ai/bytedance/seedream/v4/text-to-image"
  input = { max_images = 15, batch_size = 4, number_of_images = 4 }`},
		{name: "Replicate num_outputs as a string", media: 3,
			block: `provider = replicate
  model = "stability-ai/sdxl"
  input = { num_outputs = "3" }`},
		{name: "OpenAI n on a model the tables do not list", media: 4,
			block: `provider = openai
  model = "gpt-image-9"
  input = { n = 4 }`},
		{name: "Runway outputCount of a model the tables do not list", media: 4,
			block: `provider = runway
  model = "gpt_image_9"
  input = { outputCount = 4 }`},
		{name: "a map", media: 2,
			block: `provider = fal
  model = "fal-ai/fast-sdxl"
  input = tomap({ num_images = "2", scheduler = "euler" })`},
		{name: "null is the model's default", media: 1,
			block: `provider = fal
  model = "fal-ai/fast-sdxl"
  input = { num_images = null }`},
		{name: "a listed model at its default count", media: 1, def: true,
			block: `provider = fal
  model = "fal-ai/flux/schnell"`},
		{name: "a listed model: a count field is not its default", media: 3,
			block: `provider = fal
  model = "fal-ai/flux/schnell"
  input = { max_images = 3 }`},
		{name: "a listed model: image_number times the other fields", media: 6,
			block: `provider = fal
  model = "fal-ai/flux/schnell"
  image_number = 2
  input = { max_images = 3 }`},
		{name: "a fraction", media: 3, uncounted: &Uncounted{Key: "input.num_images"},
			block: `provider = fal
  model = "fal-ai/bytedance/seedream/v4/text-to-image"
  input = { num_images = 2.5, max_images = 3 }`},
		{name: "zero", media: 1, uncounted: &Uncounted{Key: "input.num_images"},
			block: `provider = fal
  model = "fal-ai/fast-sdxl"
  input = { num_images = 0 }`},
		{name: "negative", media: 1, uncounted: &Uncounted{Key: "input.n"},
			block: `provider = openai
  model = "gpt-image-9"
  input = { n = -2 }`},
		{name: "not a number", media: 1, uncounted: &Uncounted{Key: "input.samples"},
			block: `provider = fal
  model = "fal-ai/fast-sdxl"
  input = { samples = "many" }`},
		{name: "a bool", media: 1, uncounted: &Uncounted{Key: "input.batch_size"},
			block: `provider = fal
  model = "fal-ai/fast-sdxl"
  input = { batch_size = true }`},
		{name: "far too many is bounded, not wrapped", media: maxCount,
			block: `provider = fal
  model = "fal-ai/fast-sdxl"
  input = { num_images = 100000000000, max_images = 100000000000 }`},
		{name: "another field known only after apply changes nothing", media: 2,
			block: `provider = fal
  model = "fal-ai/fast-sdxl"
  input = { image_url = image.src.outputs[0].media_url, num_images = 2 }`},
		{name: "known only after apply", media: 2, uncounted: &Uncounted{Key: "input.num_images", Unknown: true},
			block: `provider = fal
  model = "fal-ai/fast-sdxl"
  input = { num_images = length(image.src.outputs), max_images = 2 }`},
		{name: "input itself known only after apply", media: 1, uncounted: &Uncounted{Key: "input", Unknown: true},
			block: `provider = fal
  model = "fal-ai/fast-sdxl"
  input = length(image.src.outputs) > 1 ? { num_images = 2 } : { num_images = 1 }`},
	}
	src := `image "src" {
  provider = fal
  model    = "fal-ai/fast-sdxl"
  prompt   = "a source"
}
`
	for i, tc := range cases {
		src += fmt.Sprintf("image \"c%d\" {\n  prompt = \"case %d\"\n  %s\n}\n", i, i, tc.block)
	}
	insts := instances(t, src)
	for i, tc := range cases {
		inst := insts[fmt.Sprintf("image.c%d", i)]
		media, def, uncounted := CountOf(inst)
		if media != tc.media || def != tc.def {
			t.Errorf("%s: %d files, default %v; want %d, %v", tc.name, media, def, tc.media, tc.def)
		}
		if fmt.Sprint(uncounted) != fmt.Sprint(tc.uncounted) {
			t.Errorf("%s: uncounted %+v, want %+v", tc.name, uncounted, tc.uncounted)
		}
		if MediaCount(inst) != tc.media {
			t.Errorf("%s: MediaCount %d, want %d: the engine must keep as many files as the plan counts", tc.name, MediaCount(inst), tc.media)
		}
	}
}

// A video's count fields multiply its count as an image's do, and its
// cost is seconds times that count; the reference service's blocks have
// no input, and keep image_number.
func TestCountOfVideosAndTheReferenceService(t *testing.T) {
	insts := instances(t, `
video "clips" {
  provider = fal
  model    = "fal-ai/some-video-model"
  prompt   = "waves"
  input    = { num_videos = 2 }
}
image "ref" {
  prompt       = "a"
  image_number = 2
}
`)
	if n, def, u := CountOf(insts["video.clips"]); n != 2 || def || u != nil {
		t.Errorf("video: %d, %v, %v; want 2 videos", n, def, u)
	}
	if n, def, u := CountOf(insts["image.ref"]); n != 2 || def || u != nil {
		t.Errorf("reference service: %d, %v, %v; want image_number's 2", n, def, u)
	}

	price := config.Money(10_000) // 0.01
	prices := &config.Prices{Currency: "USD", VideoSecond: &price}
	c := &Change{Addr: addrs.MustParseInstance("video.clips"), Action: Create, Media: 2, Seconds: 5}
	if got, ok := c.Cost(prices); !ok || got != price.Times(10) {
		t.Errorf("two 5-second videos cost %v, want 0.10", got)
	}
}

// A plan's estimate counts a generation whose count is not known as a
// lower bound, and lists it for -max-cost to refuse.
func TestEstimateOfAnUncountedGeneration(t *testing.T) {
	price := config.Money(10_000)
	p := &Plan{Prices: &config.Prices{Currency: "USD", Image: &price}, Changes: []*Change{
		{Addr: addrs.MustParseInstance("image.a"), Action: Create, Media: 6},
		{Addr: addrs.MustParseInstance("image.b"), Action: Create, Media: 1, Uncounted: &Uncounted{Key: "input.num_images", Unknown: true}},
		{Addr: addrs.MustParseInstance("image.c"), Action: NoOp, Media: 1, Uncounted: &Uncounted{Key: "input.num_images"}},
	}}
	e, ok := p.Cost()
	if !ok || e.Amount != price.Times(7) || e.Images != 7 || e.Uncounted != 1 {
		t.Errorf("estimate %+v, want 7 images at 0.01 with 1 generation uncounted", e)
	}
	if got := p.Uncounted(); len(got) != 1 || got[0].Addr.String() != "image.b" {
		t.Errorf("uncounted changes %v, want image.b alone (a no-op generates nothing)", got)
	}
}
