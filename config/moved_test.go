package config

import (
	"strings"
	"testing"
)

// TestMovedTargets follows chains of moved blocks from the addresses a
// state may hold: whole resources keep their keys, an instance moves to
// the instance named, a chain ends at its last block, and what no block
// moves stays.
func TestMovedTargets(t *testing.T) {
	c := mustLoad(t, `
image "c" {
  prompt = "x"
}
image "keyed" {
  for_each = toset(["red", "blue"])
  prompt   = each.key
}
moved {
  from = image.a
  to   = image.b
}
moved {
  from = image.b
  to   = image.c
}
moved {
  from = image.counted[0]
  to   = image.keyed["red"]
}
moved {
  from = image.single
  to   = image.keyed["blue"]
}
moved {
  from = image.pair
  to   = image.keyed
}
`, Options{})
	if len(c.Moved) != 5 {
		t.Fatalf("%d moved blocks kept, want 5", len(c.Moved))
	}
	for from, want := range map[string]string{
		"image.a":          "image.c",
		"image.b":          "image.c",
		"image.counted[0]": `image.keyed["red"]`,
		"image.single":     `image.keyed["blue"]`,
		`image.pair["x"]`:  `image.keyed["x"]`,
		"image.counted[1]": "",
		"image.c":          "",
		"video.a":          "",
	} {
		got, m, ok := c.MoveTarget(inst(from))
		switch {
		case want == "" && ok:
			t.Errorf("%s moves to %s; want no move", from, got)
		case want != "" && (!ok || got.String() != want):
			t.Errorf("%s moves to %s (%v); want %s", from, got, ok, want)
		case ok && !m.From.Matches(inst(from)):
			t.Errorf("%s is moved by %s, which does not name it", from, m)
		}
	}
}

// TestMovedErrors checks every refusal of a moved block: each names the
// blocks and addresses at fault, at the line a user fixes.
func TestMovedErrors(t *testing.T) {
	tests := []struct {
		name, src, summary, detail string
		line                       int
	}{
		{"undeclared target", `
image "b" {
  prompt = "x"
}
moved {
  from = image.a
  to   = image.bb
}`, "Moved to an undeclared address", `moves image.a to image.bb, but no image block named "bb" is declared`, 7},
		{"undeclared end of a chain", `
image "z" {
  prompt = "x"
}
moved {
  from = image.a
  to   = image.b
}
moved {
  from = image.b
  to   = image.c
}`, "Moved to an undeclared address", "the chain of moves from image.a ends there", 11},
		{"undeclared instance", `
image "b" {
  count  = 2
  prompt = "x"
}
moved {
  from = image.a
  to   = image.b[2]
}`, "Moved to an undeclared address", "without that instance", 8},
		{"cycle", `
image "z" {
  prompt = "x"
}
moved {
  from = image.a
  to   = image.b
}
moved {
  from = image.b
  to   = image.a
}`, "Cycle in moved blocks", "image.a to image.b (at main.gen.hcl:5,1-6) and image.b to image.a (at main.gen.hcl:9,1-6)", 5},
		{"kinds differ", `
video "b" {
  prompt = "x"
}
moved {
  from = image.a
  to   = video.b
}`, "Moved block changes the kind", "image.a, an image, to video.b, a video", 7},
		{"from still declared", `
image "a" {
  prompt = "x"
}
image "b" {
  prompt = "x"
}
moved {
  from = image.a
  to   = image.b
}`, "Moved object still exists", "image.a is still declared at main.gen.hcl:2", 9},
		{"instance still declared", `
image "a" {
  count  = 2
  prompt = "x"
}
moved {
  from = image.a[1]
  to   = image.a[0]
}`, "Moved object still exists", "the configuration still makes image.a[1]", 7},
		{"ambiguous", `
image "b" {
  prompt = "x"
}
image "c" {
  prompt = "x"
}
moved {
  from = image.a
  to   = image.b
}
moved {
  from = image.a
  to   = image.c
}`, "Ambiguous moved blocks", "already moves image.a", 13},
		{"same address", `
image "a" {
  prompt = "x"
}
moved {
  from = image.a
  to   = image.a
}`, "Redundant moved block", "moves image.a to itself", 5},
		{"not an address", `
image "a" {
  prompt = "x"
}
moved {
  from = "image.b"
  to   = image.a
}`, "Invalid from address", "without quotes", 6},
		{"attribute", `
image "a" {
  prompt = "x"
}
moved {
  from = image.b.prompt
  to   = image.a
}`, "Invalid from address", "only an instance key may follow the name", 6},
		{"label", `
image "a" {
  prompt = "x"
}
moved "x" {
  from = image.b
  to   = image.a
}`, "Extraneous label for moved", "", 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diags := loadErrors(t, tt.src, Options{})
			for _, d := range diags {
				if d.Summary == tt.summary && strings.Contains(d.Detail, tt.detail) && d.Subject != nil && d.Subject.Start.Line == tt.line {
					return
				}
			}
			t.Fatalf("want %q saying %q at line %d; got\n%s", tt.summary, tt.detail, tt.line, diagList(diags))
		})
	}
}

// TestMovedLeftInPlace keeps a moved block whose from is gone and whose
// to is declared: it is what a configuration holds after the move was
// applied, and loads cleanly.
func TestMovedLeftInPlace(t *testing.T) {
	c := mustLoad(t, `
image "b" {
  count  = 1
  prompt = "x"
}
moved {
  from = image.a
  to   = image.b[0]
}`, Options{})
	if got, _, ok := c.MoveTarget(inst("image.a")); !ok || got.String() != "image.b[0]" {
		t.Fatalf("image.a moves to %s, %v", got, ok)
	}
}
