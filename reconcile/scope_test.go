package reconcile

import (
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/configtest"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

const scopeConfig = `
image "a" {
  prompt       = "a red apple"
  image_number = 2
}
image "b" {
  count        = length(image.a.outputs)
  prompt       = "variation ${count.index}"
  image_number = 1
}
video "v" {
  source_image = image.a.outputs[0].media_url
  prompt       = "the apple spins"
}
output "first" {
  value = image.a.outputs[0].path
}
output "video_id" {
  value = video.v.id
}
`

func loadConfigText(t *testing.T, src string) *config.Config {
	t.Helper()
	return configtest.Load(t, t.TempDir(), src)
}

// TestStateScope checks what output and import see: recorded instances
// with their paths, the rest unknown, and expansions that depend on
// recorded values done with them.
func TestStateScope(t *testing.T) {
	cfg := loadConfigText(t, scopeConfig)
	recA := &statefile.Resource{
		Addr: a("image.a"), Status: plans.StatusSucceed, CreationID: "c-a", GenerationID: "c-a",
		Dir: "generated/image/a",
		Outputs: []statefile.Output{
			{Index: 0, Path: "generated/image/a/0.png", MediaURL: "http://m/0"},
			{Index: 1, Path: "generated/image/a/1.png", MediaURL: "http://m/1"},
		},
	}
	failedA := *recA
	failedA.Status = plans.StatusFailed

	tests := []struct {
		name      string
		snap      *statefile.Snapshot
		wantInsts string
		wantErr   string // a diagnostic expected, "" for none
		wantFirst cty.Value
	}{
		{
			name:      "no state",
			snap:      nil,
			wantInsts: "image.a video.v",
			wantErr:   "Invalid count argument",
			wantFirst: cty.UnknownVal(cty.String),
		},
		{
			name:      "image recorded",
			snap:      &statefile.Snapshot{Resources: map[addrs.Instance]*statefile.Resource{a("image.a"): recA}},
			wantInsts: "image.a image.b[0] image.b[1] video.v",
			wantFirst: cty.StringVal("generated/image/a/0.png"),
		},
		{
			name:      "last generation failed",
			snap:      &statefile.Snapshot{Resources: map[addrs.Instance]*statefile.Resource{a("image.a"): &failedA}},
			wantInsts: "image.a video.v",
			wantErr:   "Invalid count argument",
			wantFirst: cty.UnknownVal(cty.String),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scope, insts, diags := StateScope(cfg, tt.snap)
			var got []string
			for _, inst := range insts {
				got = append(got, inst.Addr.String())
			}
			if strings.Join(got, " ") != tt.wantInsts {
				t.Errorf("instances %q, want %q", got, tt.wantInsts)
			}
			if tt.wantErr == "" && diags.HasErrors() {
				t.Errorf("diagnostics: %v", diags)
			}
			if tt.wantErr != "" && !strings.Contains(diags.Error(), tt.wantErr) {
				t.Errorf("diagnostics %v, want %q", diags, tt.wantErr)
			}
			outs, diags := cfg.EvalOutputs(scope)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if !outs["first"].RawEquals(tt.wantFirst) {
				t.Errorf("output first = %#v, want %#v", outs["first"], tt.wantFirst)
			}
			if outs["video_id"].IsKnown() {
				t.Errorf("output video_id = %#v; video.v is not recorded, so it is not known", outs["video_id"])
			}
		})
	}
}
