package provider

import (
	"fmt"
	"testing"
)

// A held answer is taken once; past the bound nothing more is held, and
// a Result then reads the job again.
func TestHeld(t *testing.T) {
	var h Held[string]
	v := "succeeded"
	h.Keep("p1", &v, []byte(`{"status":"succeeded"}`))
	got, raw, ok := h.Take("p1")
	if !ok || *got != "succeeded" || string(raw) != `{"status":"succeeded"}` {
		t.Fatalf("Take = %v, %s, %v; want the answer kept", got, raw, ok)
	}
	if _, _, ok := h.Take("p1"); ok {
		t.Error("an answer was taken twice")
	}
	for i := range maxHeld + 10 {
		h.Keep(fmt.Sprint(i), &v, nil)
	}
	if _, _, ok := h.Take(fmt.Sprint(maxHeld + 5)); ok {
		t.Errorf("more than %d answers were held", maxHeld)
	}
	if _, _, ok := h.Take("0"); !ok {
		t.Error("the first answer kept was not held")
	}
}
