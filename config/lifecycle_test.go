package config

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/genform/genform/internal/addrs"
)

func onDay(s string) Options {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return Options{Today: t}
}

const retiredBlock = `
image "old" {
  provider = openai
  model    = "gpt-image-1.5"
  prompt   = "an old lighthouse"
}
`

// validate's diagnostics of a model's lifecycle, by the day: none while
// it is active; a warning, with its days left, once its retirement is
// announced; an error on the model attribute from its shutdown day,
// naming the day and the successor OpenAI names. Load itself refuses
// nothing: plan judges each instance.
func TestModelDiagnosticsByDay(t *testing.T) {
	for _, tt := range []struct {
		day      string
		severity hcl.DiagnosticSeverity
		summary  string
		says     []string
	}{
		{"2026-06-01", 0, "", nil},
		{"2026-08-01", hcl.DiagWarning, "Model deprecated", []string{"deprecated model gpt-image-1.5 on 2026-06-02", "shuts it down on 2026-12-01 (in 122 days)"}},
		{"2026-11-30", hcl.DiagWarning, "Model shuts down soon", []string{"(tomorrow)", "gpt-image-2.6-sunburst or gpt-image-2.6-flare"}},
		{"2026-12-01", hcl.DiagError, "Model shut down", []string{"OpenAI shut down model gpt-image-1.5 on 2026-12-01", "it names gpt-image-2.6-sunburst or gpt-image-2.6-flare in its place", "Outputs already made with it stay as they are"}},
	} {
		c := mustLoad(t, retiredBlock, onDay(tt.day))
		diags := c.ModelDiagnostics()
		if tt.summary == "" {
			if len(diags) != 0 {
				t.Errorf("%s: %s", tt.day, diagList(diags))
			}
			continue
		}
		if len(diags) != 1 || diags[0].Severity != tt.severity || diags[0].Summary != tt.summary {
			t.Fatalf("%s: %s, want one %q", tt.day, diagList(diags), tt.summary)
		}
		for _, s := range tt.says {
			if !strings.Contains(diags[0].Detail, s) {
				t.Errorf("%s: %q does not say %q", tt.day, diags[0].Detail, s)
			}
		}
		if r := diags[0].Subject; r == nil || r.Start.Line != 4 {
			t.Errorf("%s: the diagnostic is at %v, want the model attribute (line 4)", tt.day, r)
		}
	}
}

// plan warns of a shutdown at most 30 days ahead, and leaves a model shut
// down to the planner (ShutDownModel): an error when it would generate,
// a warning that the outputs are kept otherwise.
func TestModelWarningsAndShutDownModel(t *testing.T) {
	for _, tt := range []struct {
		day  string
		warn bool
	}{{"2026-10-31", false}, {"2026-11-01", true}, {"2026-11-30", true}, {"2026-12-01", false}} {
		c := mustLoad(t, retiredBlock, onDay(tt.day))
		if got := len(c.ModelWarnings()) == 1; got != tt.warn {
			t.Errorf("%s: warned %v, want %v: %s", tt.day, got, tt.warn, diagList(c.ModelWarnings()))
		}
	}
	ep := addrs.ModelEndpoint("openai", "gpt-image-1.5", addrs.Image)
	before := mustLoad(t, retiredBlock, onDay("2026-11-30"))
	if d := before.ShutDownModel(before.Resources[0], ep, true); d != nil {
		t.Errorf("the day before its shutdown: %s", d.Detail)
	}
	c := mustLoad(t, retiredBlock, onDay("2026-12-07"))
	if d := c.ShutDownModel(c.Resources[0], ep, true); d == nil || d.Severity != hcl.DiagError || !strings.Contains(d.Detail, "The plan would generate image.old with it") {
		t.Errorf("generating with it: %+v", d)
	}
	if d := c.ShutDownModel(c.Resources[0], ep, false); d == nil || d.Severity != hcl.DiagWarning || !strings.Contains(d.Detail, "are kept") {
		t.Errorf("keeping what it made: %+v", d)
	}
	// A dated snapshot retires with its model.
	snap := addrs.ModelEndpoint("openai", "gpt-image-1.5-2025-12-16", addrs.Image)
	if d := c.ShutDownModel(c.Resources[0], snap, true); d == nil {
		t.Error("gpt-image-1.5-2025-12-16 is not shut down with its model")
	}
	if d := c.ShutDownModel(c.Resources[0], addrs.ModelEndpoint("openai", "gpt-image-2.6-sunburst", addrs.Image), true); d != nil {
		t.Errorf("an active model: %s", d.Detail)
	}
}

// A model the tables do not list whose name is close to a listed one of
// the same kind is warned of, naming it; it is still taken. A name far
// from every listed model, or a model listed, is not.
func TestNearMissModel(t *testing.T) {
	c := mustLoad(t, `
image "typo" {
  provider = fal
  model    = "fal-ai/flux/schnel"
  prompt   = "p"
}
image "other" {
  provider = fal
  model    = "someone/own-model"
  prompt   = "p"
}
image "listed" {
  provider = fal
  model    = "fal-ai/flux/dev"
  prompt   = "p"
}
`, Options{})
	diags := c.ModelDiagnostics()
	if len(diags) != 1 || diags[0].Severity != hcl.DiagWarning || !strings.Contains(diags[0].Detail, `Did you mean "fal-ai/flux/schnell"?`) {
		t.Fatalf("validate: %s", diagList(diags))
	}
	if w := c.ModelWarnings(); len(w) != 1 || w[0].Summary != "Model not listed" {
		t.Errorf("plan: %s", diagList(w))
	}
}

// GENFORM_TODAY sets the day when Options.Today does not; a day that is
// not one is refused.
func TestTodayFromTheEnvironment(t *testing.T) {
	c := mustLoad(t, retiredBlock, Options{Environ: []string{"GENFORM_TODAY=2026-11-15"}})
	if got := c.Today().Format(time.DateOnly); got != "2026-11-15" {
		t.Errorf("today %s", got)
	}
	c = mustLoad(t, retiredBlock, Options{Today: time.Date(2026, 11, 20, 23, 0, 0, 0, time.UTC), Environ: []string{"GENFORM_TODAY=2026-11-15"}})
	if got := c.Today().Format(time.DateOnly); got != "2026-11-20" {
		t.Errorf("Options.Today is not first: %s", got)
	}
	diags := loadErrors(t, retiredBlock, Options{Environ: []string{"GENFORM_TODAY=15/11/2026"}})
	if !strings.Contains(diagList(diags), "Invalid GENFORM_TODAY") {
		t.Errorf("a bad day: %s", diagList(diags))
	}
}
