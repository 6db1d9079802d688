package operation

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/formats/planfile"
	"github.com/genform/genform/reconcile/plans"
)

// savedPlan is a plan as planning makes it, with values of every shape a
// change shows (numbers, nested values, markup, a sensitive attribute, a
// live model and its prices), and the plan read back from its saved file.
func savedPlan(t *testing.T) (made, read *plans.Plan) {
	t.Helper()
	money := func(s string) *config.Money {
		m, err := config.ParseMoney(s)
		if err != nil {
			t.Fatal(err)
		}
		return &m
	}
	hero := addrs.MustParseInstance("image.hero")
	made = &plans.Plan{
		Service: "simulator", Lineage: "lin", Serial: 3, ConfigHash: "hash",
		Prices: &config.Prices{Image: money("0.5"), VideoSecond: money("0.05"), Currency: "USD"},
		Changes: []*plans.Change{
			{Addr: addrs.MustParseInstance("image.a"), Action: plans.Create, Media: 1, Fingerprint: "fp-a", Dir: "generated/image/a",
				Reason: &plans.Reason{Code: plans.ReasonNew},
				Attrs: []plans.AttrChange{
					{Name: "prompt", After: "a <b>lighthouse</b> & ‘quotes’ \u2028"},
					{Name: "guidance", After: json.Number("3.75")},
				},
				After: map[string]any{
					"prompt": "a <b>lighthouse</b> & ‘quotes’ \u2028", "guidance": json.Number("3.75"), "seed": json.Number("-1"),
					"loras": []any{map[string]any{"path": "x", "scale": json.Number("0.6")}}, "dir": "generated/image/a",
				}},
			{Addr: hero, Action: plans.Replace, Media: 2, MediaDefault: true, Fingerprint: "fp-hero", Dir: "generated/image/hero", Store: plans.StoreAll,
				Model:  plans.ModelOf(addrs.ModelEndpoint("fal", "fal-ai/flux/schnell", addrs.Image), &config.Prices{Image: money("0.003"), Currency: "USD"}),
				Reason: &plans.Reason{Code: plans.ReasonChanged, Attrs: []string{"prompt"}},
				Attrs:  []plans.AttrChange{{Name: "prompt", Before: "a harbour", After: "a harbour at dusk"}},
				Before: map[string]any{"prompt": "a harbour", "model": "fal-ai/flux/schnell"},
				After:  map[string]any{"prompt": "a harbour at dusk", "model": "fal-ai/flux/schnell"}},
			{Addr: addrs.MustParseInstance("video.v"), Action: plans.Create, Media: 1, Seconds: 5, Fingerprint: "", AfterUnknown: []string{"source_image"},
				Reason:    &plans.Reason{Code: plans.ReasonNew},
				Sensitive: []string{"negative_prompt", "prompt"},
				Attrs:     []plans.AttrChange{{Name: "prompt", After: "abracadabra"}, {Name: "source_image", Unknown: true}},
				After:     map[string]any{"prompt": "abracadabra", "negative_prompt": "hocus", "duration": json.Number("5")}},
		},
	}
	path := filepath.Join(t.TempDir(), "p.plan")
	if err := planfile.Write(path, &planfile.Saved{Plan: made}); err != nil {
		t.Fatal(err)
	}
	saved, err := planfile.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return made, saved.Plan
}

// A saved plan read back matches the plan it was saved from, whatever its
// values (the sensitive ones, which the file leaves out, included): the
// check that refuses an edited file refuses no file as made.
func TestSameChangesAcceptsThePlanAsMade(t *testing.T) {
	made, read := savedPlan(t)
	for _, command := range []string{"apply", "show"} {
		if err := sameChanges(command, read, made); err != nil {
			t.Errorf("%s refuses the plan as it was saved: %v", command, err)
		}
	}
}

// Every value show prints of a saved plan, edited in the file, is refused
// by the check apply and show share, naming the field; the words of a
// reason are not compared (show prints planning's own).
func TestSameChangesRefusesEveryShownEdit(t *testing.T) {
	tests := []struct {
		name string
		edit func(p *plans.Plan)
		want string // "" when the edit is not refused
	}{
		{"the prompt after", func(p *plans.Plan) { p.Changes[0].After["prompt"] = "a castle" }, "what it shows of image.a (after)"},
		{"the prompt in the attributes", func(p *plans.Plan) { p.Changes[0].Attrs[0].After = "a castle" }, "what it shows of image.a (attributes)"},
		{"a number", func(p *plans.Plan) { p.Changes[0].After["guidance"] = json.Number("3.7500") }, "what it shows of image.a (after)"},
		{"a nested value", func(p *plans.Plan) {
			p.Changes[0].After["loras"] = []any{map[string]any{"path": "y", "scale": json.Number("0.6")}}
		}, "what it shows of image.a (after)"},
		{"the value before", func(p *plans.Plan) { p.Changes[1].Before["prompt"] = "a field" }, "what it shows of image.hero (before)"},
		{"the model", func(p *plans.Plan) {
			p.Changes[1].Model = plans.ModelOf(addrs.ModelEndpoint("fal", "fal-ai/flux/dev", addrs.Image), p.Changes[1].Model.Prices)
		}, "what it shows of image.hero (model)"},
		{"the provider", func(p *plans.Plan) { p.Changes[1].Model = nil }, "what it shows of image.hero (model)"},
		{"the model's prices", func(p *plans.Plan) {
			zero := config.Money(0)
			p.Changes[1].Model = plans.ModelOf(p.Changes[1].Model.Endpoint, &config.Prices{Image: &zero, Currency: "USD"})
		}, "what it shows of image.hero (model_prices)"},
		{"the default count", func(p *plans.Plan) { p.Changes[1].MediaDefault = false }, "what it shows of image.hero (media_default)"},
		{"the store", func(p *plans.Plan) { p.Changes[1].Store = plans.StoreNone }, "what it shows of image.hero (store)"},
		{"a sensitive value shown", func(p *plans.Plan) {
			p.Changes[2].Sensitive = []string{"negative_prompt"}
			p.Changes[2].After["prompt"] = "a castle"
		}, "what it shows of video.v (after)"},
		{"what is known after apply", func(p *plans.Plan) { p.Changes[2].AfterUnknown = nil }, "what it shows of video.v (after_unknown)"},
		{"the service's prices", func(p *plans.Plan) { zero := config.Money(0); p.Prices.Image = &zero }, "its prices are not the configuration's"},
		{"no prices", func(p *plans.Plan) { p.Prices = nil }, "its prices are not the configuration's"},
		{"the request", func(p *plans.Plan) { p.Changes[0].Fingerprint = "other" }, "the request of image.a is no longer the one the plan showed"},
		{"an action", func(p *plans.Plan) { p.Changes[0].Action = plans.Delete }, "it says delete for image.a, and planning says create"},
		{"an address", func(p *plans.Plan) { p.Changes[0].Addr = addrs.MustParseInstance("image.b") }, "it has a change for image.b, which planning does not make"},
		{"a reason's words", func(p *plans.Plan) { p.Changes[0].Reason = &plans.Reason{Code: plans.ReasonForced} }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			made, read := savedPlan(t)
			tt.edit(read)
			err := sameChanges("show", read, made)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want == "":
			case err == nil:
				t.Errorf("not refused; want %q", tt.want)
			case !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "apply would refuse it, so it is not shown"):
				t.Errorf("refused with %q; want %q, in apply's words", err, tt.want)
			}
		})
	}
}
