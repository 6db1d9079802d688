package words

import (
	"strings"
	"testing"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/reconcile/apply"
	"github.com/genform/genform/reconcile/plans"
)

// How many images a generation makes is said as the plan counts it: a
// count a field of input leaves out is "at least", naming the field, and
// an import that finds another count names the count, not an
// image_number the block may not set (the count of a model the tables
// do not list comes from its input).
func TestCountWords(t *testing.T) {
	addr := addrs.MustParseInstance("image.b")
	c := &plans.Change{Addr: addr, Action: plans.Create, Media: 1, Uncounted: &plans.Uncounted{Key: "input.num_images", Unknown: true}}
	if got, want := ImagesPerGeneration(c), "at least 1 image per generation (input.num_images of image.b is known only after apply)"; got != want {
		t.Errorf("ImagesPerGeneration = %q, want %q", got, want)
	}
	if !ShowsImageCount(c) {
		t.Error("a count a field leaves out is not shown")
	}
	c.Uncounted = &plans.Uncounted{Key: "input"}
	c.Uncounted.Unknown = true
	if got := Uncounted(c); !strings.Contains(got, "input of image.b is known only after apply") {
		t.Errorf("Uncounted of a whole unknown input = %q", got)
	}
	c.Uncounted = &plans.Uncounted{Key: "input.samples"}
	if got, want := Uncounted(c), "input.samples of image.b is not a whole number of at least 1"; got != want {
		t.Errorf("Uncounted = %q, want %q", got, want)
	}

	got := ImportWarning(addr, "job", apply.ImportWarning{Kind: apply.ImageCountDiffers, GotN: 1, WantN: 6}, false)
	if want := "the creation has 1 image, but image.b declares 6 a generation"; got != want {
		t.Errorf("ImportWarning = %q, want %q", got, want)
	}
}
