package planfile

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/reconcile/plans"
)

// TestPlanFileRoundTrip: a saved plan reads back as the plan that was
// saved, every kind of reason included, except the values of sensitive
// attributes, which the file leaves out.
func TestPlanFileRoundTrip(t *testing.T) {
	since := time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)
	hero := addrs.MustParseInstance("image.hero")
	p := &plans.Plan{
		Service: "simulator", Lineage: "lin", Serial: 7, ConfigHash: "hash",
		Targets: []addrs.Instance{hero}, Replace: []addrs.Instance{addrs.MustParseInstance(`image.tile["a b"]`)},
		Changes: []*plans.Change{
			{Addr: hero, Action: plans.NoOp, Fingerprint: "fp", Media: 2, Dir: "generated/image/hero"},
			{Addr: addrs.MustParseInstance("image.a"), Action: plans.Replace, Media: 1,
				Reason: &plans.Reason{Code: plans.ReasonChanged, Attrs: []string{"prompt", "seed"}},
				Attrs:  []plans.AttrChange{{Name: "seed", Before: json.Number("1"), After: json.Number("2")}},
				Before: map[string]any{"seed": json.Number("1"), "dir": "generated/image/a"},
				After:  map[string]any{"seed": json.Number("2"), "dir": "generated/image/a"}},
			{Addr: addrs.MustParseInstance("video.v"), Action: plans.Replace, Media: 1, AfterUnknown: []string{"source_image"},
				Reason: &plans.Reason{Code: plans.ReasonUpstream, Upstream: []addrs.Resource{hero.Resource}}},
			{Addr: addrs.MustParseInstance("video.w"), Action: plans.Replace,
				Reason: &plans.Reason{Code: plans.ReasonEndpoint, From: addrs.Text2Video, To: addrs.Image2Video}},
			{Addr: addrs.MustParseInstance("image.b[3]"), Action: plans.Create,
				Reason: &plans.Reason{Code: plans.ReasonAnswerLost, Since: since}},
			{Addr: addrs.MustParseInstance("image.c"), Action: plans.Update, Redownload: []int{1},
				Reason: &plans.Reason{Code: plans.ReasonLocal, Local: []plans.LocalChange{
					{What: plans.DirMoved, From: "x", To: "y"},
					{What: plans.OutputMissing, Output: 1, Path: "y/1.png"},
					{What: plans.ProtectionChanged, Protect: true},
					{What: plans.IntentSettled, GenerationID: "job-0", Since: since},
				}}},
			{Addr: addrs.MustParseInstance("video.t"), Action: plans.Replace,
				Reason: &plans.Reason{Code: plans.ReasonTriggered, Upstream: []addrs.Resource{hero.Resource}}},
			{Addr: addrs.MustParseInstance("image.d"), PrevAddr: addrs.MustParseInstance("image.old"), Action: plans.Move, Reason: &plans.Reason{Code: plans.ReasonRenamed}},
			{Addr: addrs.MustParseInstance("image.e"), Action: plans.Resume, GenerationID: "job-1", Reason: &plans.Reason{Code: plans.ReasonInterrupted, GenerationID: "job-1"}},
			{Addr: addrs.MustParseInstance("image.f"), Action: plans.Replace, Reason: &plans.Reason{Code: plans.ReasonFailed, Error: "boom"}},
			{Addr: addrs.MustParseInstance("image.g"), Action: plans.Replace, Reason: &plans.Reason{Code: plans.ReasonRequest, Service: "simulator"}},
			{Addr: addrs.MustParseInstance("image.h"), Action: plans.Delete, Reason: &plans.Reason{Code: plans.ReasonRemovedIntent, Since: since}},
		},
	}
	secret := &plans.Change{Addr: addrs.MustParseInstance("image.s"), Action: plans.Create, Media: 1, Sensitive: []string{"prompt"},
		Reason: &plans.Reason{Code: plans.ReasonNew},
		Attrs:  []plans.AttrChange{{Name: "prompt", After: "abracadabra"}},
		After:  map[string]any{"prompt": "abracadabra", "dir": "d"}}
	p.Changes = append(p.Changes, secret)

	path := filepath.Join(t.TempDir(), "p.plan")
	sp := &Saved{Plan: p, Vars: []string{"style=noir"}, VarFiles: []string{"a.genvars.hcl"}, Secret: []string{"tok"}, MigrateFrom: "https://gen.example.com"}
	if err := Write(path, sp); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if strings.Contains(string(raw), "abracadabra") {
		t.Fatalf("the plan file holds a sensitive value:\n%s", raw)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	// What the file leaves out: the sensitive values.
	want := *secret
	want.Attrs = []plans.AttrChange{{Name: "prompt"}}
	want.After = map[string]any{"prompt": nil, "dir": "d"}
	p.Changes[len(p.Changes)-1] = &want
	if diff := cmp.Diff(sp, got, cmpopts.IgnoreUnexported(plans.Plan{})); diff != "" {
		t.Errorf("read back (-saved +read):\n%s", diff)
	}
}
