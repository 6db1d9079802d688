package reconcile

import (
	"testing"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/reconcile/plans"
)

// A generation's count of images comes from image_number, or from the
// service's (or the model's) default when it is unset or null; the plan
// says which, since a bare block pays for the default count.
func TestPlanMediaDefault(t *testing.T) {
	f := newFixture(t)
	cfg := f.write(`
provider "fal" {
  base_url = "http://127.0.0.1:1"
}
image "bare" {
  prompt = "a"
}
image "two" {
  prompt       = "b"
  image_number = 2
}
image "null" {
  prompt       = "c"
  image_number = null
}
image "four" {
  prompt       = "f"
  image_number = 4
}
image "model" {
  provider = fal
  model    = "fal-ai/flux/schnell"
  prompt   = "d"
}
video "clip" {
  prompt = "e"
}
`)
	p, diags := f.plan(cfg)
	if diags != "" {
		t.Fatal(diags)
	}
	want := map[string]struct {
		media int
		def   bool
	}{
		"image.bare": {4, true},
		"image.two":  {2, false},
		"image.null": {4, true},
		// The default written out is a choice, not the default.
		"image.four":  {4, false},
		"image.model": {1, true},
		"video.clip":  {1, false},
	}
	for addr, w := range want {
		c := p.Change(addrs.MustParseInstance(addr))
		if c == nil {
			t.Errorf("no change for %s", addr)
			continue
		}
		if c.Media != w.media || c.MediaDefault != w.def {
			t.Errorf("%s: media %d, default %v; want %d, %v", addr, c.Media, c.MediaDefault, w.media, w.def)
		}
	}

	// It is asked of every instance of a plan, a no-op among 100,000 as
	// much as a create: saying whether the count is the default costs
	// nothing beyond reading the count, as MediaCount always did.
	for _, r := range cfg.Resources {
		insts, _ := cfg.Expand(r, config.Scope{})
		for _, inst := range insts {
			count := testing.AllocsPerRun(100, func() { readCount(inst) })
			if n := testing.AllocsPerRun(100, func() { plans.MediaOf(inst) }); n > count {
				t.Errorf("MediaOf(%s) allocates %.0f times, reading the count %.0f", inst.Addr, n, count)
			}
		}
	}
}

// readCount reads image_number as a count, the least MediaOf must do.
func readCount(inst *config.Instance) int64 {
	v, set := inst.Attr("image_number")
	if !set || !v.IsKnown() || v.IsNull() {
		return 0
	}
	n, _ := v.AsBigFloat().Int64()
	return n
}
