package reconcile

import (
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/catalog"
	"github.com/genform/genform/internal/dirtest"
	"github.com/genform/genform/reconcile/plans"
)

// loadOn loads src as the fixture's configuration, checked against day.
func (f *fixture) loadOn(src, day string) *config.Config {
	f.t.Helper()
	t, err := time.Parse(time.DateOnly, day)
	if err != nil {
		f.t.Fatal(err)
	}
	dirtest.Write(f.t, f.dir, map[string]string{"main.gen.hcl": src})
	cfg, diags := config.Load(f.dir, config.Options{Providers: catalog.Tables, Today: t})
	if diags.HasErrors() {
		f.t.Fatalf("config: %v", diags)
	}
	return cfg
}

const retiredModel = `
image "old" {
  provider = openai
  model    = "gpt-image-1.5"
  prompt   = "an old lighthouse"
}
`

const newBlock = `
image "new" {
  provider = openai
  model    = "gpt-image-2.6-sunburst"
  prompt   = "a new lighthouse"
}
`

// Outputs made with a model before its provider shut it down stay: the
// plan keeps them (a no-op, with a warning) and other blocks plan as
// ever; a change that would generate with it is refused, naming the
// day and the successor, unless -target leaves it out of the plan.
func TestPlanOfARetiredModel(t *testing.T) {
	f := newFixture(t)
	f.record(f.loadOn(retiredModel, "2026-10-01"))

	p, diags := f.plan(f.loadOn(retiredModel+newBlock, "2026-12-07"))
	if got := actions(p); got["image.old"] != plans.NoOp || got["image.new"] != plans.Create {
		t.Errorf("actions %v; want image.old kept, image.new created", got)
	}
	if !strings.Contains(diags, "Model shut down, outputs kept") || strings.Contains(diags, "Model shut down:") {
		t.Errorf("diagnostics %q; want only the warning that the outputs are kept", diags)
	}

	changed := strings.Replace(retiredModel, "an old lighthouse", "an older lighthouse", 1)
	_, diags = f.plan(f.loadOn(changed+newBlock, "2026-12-07"))
	for _, want := range []string{"Model shut down: OpenAI shut down model gpt-image-1.5 on 2026-12-01", "gpt-image-2.6-sunburst or gpt-image-2.6-flare", "The plan would generate image.old"} {
		if !strings.Contains(diags, want) {
			t.Errorf("a change generating with it: %q does not say %q", diags, want)
		}
	}
	p, diags = f.plan(f.loadOn(changed+newBlock, "2026-12-07"), func(in *PlanInput) {
		in.Targets = []addrs.Instance{addrs.MustParseInstance("image.new")}
	})
	if strings.Contains(diags, "Model shut down") || actions(p)["image.new"] != plans.Create {
		t.Errorf("a plan targeting another block: %v, %q", actions(p), diags)
	}

	// The day before, the change is planned, with the warning of the
	// shutdown to come.
	p, diags = f.plan(f.loadOn(changed, "2026-11-30"))
	if actions(p)["image.old"] != plans.Replace || !strings.Contains(diags, "Model shuts down soon") || strings.Contains(diags, "Model shut down") {
		t.Errorf("the day before its shutdown: %v, %q", actions(p), diags)
	}
}
