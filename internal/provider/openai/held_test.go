package openai

import (
	"encoding/json"
	"testing"

	"github.com/genform/genform/internal/provider"
)

func result(n int) *provider.Result {
	return &provider.Result{Outputs: []provider.Output{{Data: make([]byte, n)}}}
}

// The images handed over are kept up to the limit, then released oldest
// first; those not yet handed over are never released.
func TestHolderReleasesHandedOver(t *testing.T) {
	s := newHolder(100)
	a := s.add("a", &held{res: result(60)})
	b := s.add("b", &held{res: result(60)})
	c := s.add("c", &held{res: result(500)})
	if a != "a" || b != "b" || c != "c" {
		t.Fatalf("ids %s %s %s", a, b, c)
	}
	if dup := s.add("a", &held{res: result(1)}); dup != "a-2" {
		t.Errorf("a second a is held as %q, want a-2", dup)
	}
	if h, _ := s.handOut("a"); h.res == nil {
		t.Fatal("a was not handed over")
	}
	if h, _ := s.handOut("b"); h.res == nil {
		t.Fatal("b was not handed over")
	}
	if h, _ := s.get("a"); h.res != nil {
		t.Error("a, handed over first, is kept past the limit")
	}
	if h, _ := s.get("b"); h.res == nil {
		t.Error("b, handed over last, was released")
	}
	if h, _ := s.get("c"); h.res == nil {
		t.Error("c, never handed over, was released")
	}
	// One result larger than the limit is kept until another comes.
	if h, _ := s.handOut("c"); h.res == nil {
		t.Fatal("c was not handed over")
	}
	if h, _ := s.get("c"); h.res == nil {
		t.Error("c was released as it was handed over")
	}
	if _, ok := s.handOut("nothing"); ok {
		t.Error("an unknown id is held")
	}
}

func TestAnswerLimit(t *testing.T) {
	for _, tt := range []struct {
		n, size  any
		atLeast  int64
		atMost   int64
		describe string
	}{
		{nil, "1024x1024", 4 << 20, 8 << 20, "one square image"},
		{json.Number("10"), "1536x1024", 10 * 8 << 20, 10 * 10 << 20, "ten landscapes"},
		{nil, nil, 42 << 20, 46 << 20, "one image of the largest size"},
		{json.Number("11"), "auto", 420 << 20, 460 << 20, "a count the API refuses: the most"},
		{json.Number("2"), "99999x99999", 84 << 20, 92 << 20, "a size beyond the largest"},
	} {
		got := answerLimit(tt.n, tt.size)
		if got < tt.atLeast || got > tt.atMost {
			t.Errorf("%s: %d MiB, want from %d to %d", tt.describe, got>>20, tt.atLeast>>20, tt.atMost>>20)
		}
	}
}
