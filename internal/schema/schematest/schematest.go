package schematest

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/schema"
)

// BodyCase is a case of a provider's Body: what it makes of Model, Kind
// (an image when 0), Common and Input: Want, or an error (when Fails, or
// WantErr is set), holding WantErr when it is set.
type BodyCase struct {
	Name    string
	Model   string
	Kind    addrs.Kind
	Common  map[string]any
	Input   map[string]any
	Want    map[string]any
	WantErr string
	Fails   bool
}

// Bodies runs each case of p's Body as a subtest, and checks that Body
// leaves its input as it was.
func Bodies(t *testing.T, p *schema.Provider, cases []BodyCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			kind := tt.Kind
			if kind == 0 {
				kind = addrs.Image
			}
			before := map[string]any{}
			for k, v := range tt.Input {
				before[k] = v
			}
			got, err := p.Body(tt.Model, kind, tt.Common, tt.Input)
			if !CheckBody(t, got, err, tt.Fails || tt.WantErr != "", tt.WantErr, tt.Want) {
				return
			}
			if diff := cmp.Diff(before, tt.Input); diff != "" && tt.Input != nil {
				t.Errorf("Body changed its input (-before +after):\n%s", diff)
			}
		})
	}
}

// CheckBody checks what a provider's Body made: when fails, an error
// (holding wantErr, when it is set); else no error, and want. It reports
// whether Body made a body.
func CheckBody(t *testing.T, got map[string]any, err error, fails bool, wantErr string, want map[string]any) bool {
	t.Helper()
	if fails {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("Body = %v, %v; want an error saying %q", got, err, wantErr)
		}
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Body (-want +got):\n%s", diff)
	}
	return true
}
