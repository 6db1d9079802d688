package reconcile

import (
	"strings"
	"testing"
)

// TestPhaseNames checks the names progress reports give phases: no two
// alike, none empty, and a value past the names prints as what it is.
func TestPhaseNames(t *testing.T) {
	for got, want := range map[string]string{
		Phase(0).String():  "Phase(0)",
		Phase(99).String(): "Phase(99)",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	phases := map[string]bool{}
	for p := PhaseSubmitting; p <= PhaseWarning; p++ {
		if s := p.String(); s == "" || phases[s] || strings.HasPrefix(s, "Phase(") {
			t.Errorf("phase %d is named %q", p, s)
		}
		phases[p.String()] = true
	}
}
