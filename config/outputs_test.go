package config

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/genform/genform/internal/dirtest"
)

// A reference to an output a resource does not make is refused at Load,
// at the reference, with how many it makes and what to do; one it does
// make, or one not known until apply, is not.
func TestOutputIndexes(t *testing.T) {
	const images = `
image "one" {
  prompt       = "a"
  image_number = 1
}
image "bare" {
  prompt = "b"
}
image "counted" {
  count        = 2
  prompt       = "c"
  image_number = 2
}
image "mixed" {
  count        = 2
  prompt       = "d"
  image_number = count.index == 0 ? 1 : null
}
video "clip" {
  prompt = "e"
}
variable "n" {
  type = number
}
image "from_var" {
  prompt       = "f"
  image_number = var.n
}
image "fal" {
  provider = fal
  model    = "fal-ai/flux/dev"
  prompt   = "g"
}
image "fal_other" {
  provider = fal
  model    = "fal-ai/recraft-v3"
  prompt   = "h"
}
`
	tests := []struct {
		name, ref string
		opts      Options
		detail    string // "" when the reference is fine
	}{
		{name: "the one output", ref: "image.one.outputs[0].media_url"},
		{name: "past the one output", ref: "image.one.outputs[3].media_url",
			detail: "image.one has 1 output (image_number = 1): outputs[3] does not exist; the only valid index is 0. Refer to outputs[0], or set image_number = 4 to make outputs[3]."},
		{name: "within the default", ref: "image.bare.outputs[3].path"},
		{name: "past the default", ref: "image.bare.outputs[4].path",
			detail: "image.bare has 4 outputs (image_number is not set: 4 is the default): outputs[4] does not exist; valid indexes are 0 to 3. Refer to one of those: one generation makes at most 4 images."},
		{name: "an instance", ref: "image.counted[1].outputs[1].id"},
		{name: "past an instance's", ref: "image.counted[0].outputs[2].id",
			detail: "Each instance of image.counted has 2 outputs (image_number = 2): outputs[2] does not exist; valid indexes are 0 to 1. Refer to one of those, or set image_number = 3 (or more) to make outputs[2]."},
		{name: "an instance picked by an expression", ref: "image.counted[length(\"a\")].outputs[1].id"},
		{name: "past one picked by an expression", ref: "image.counted[length(\"a\")].outputs[2].id",
			detail: "Each instance of image.counted has 2 outputs (image_number = 2): outputs[2] does not exist"},
		{name: "instances that differ", ref: "image.mixed[0].outputs[3].id"},
		{name: "past all instances", ref: "image.mixed[0].outputs[4].id",
			detail: "The instances of image.mixed have at most 4 outputs (their image_number, or the default where it is not set)"},
		{name: "a video's one", ref: "video.clip.outputs[0].media_url"},
		{name: "past a video's one", ref: "video.clip.outputs[1].media_url",
			detail: "video.clip has 1 output (a video is one file): outputs[1] does not exist; the only valid index is 0. Refer to outputs[0]."},
		{name: "image_number not known", ref: "image.from_var.outputs[3].id"},
		{name: "image_number given", ref: "image.from_var.outputs[3].id", opts: Options{Vars: []string{"n=2"}},
			detail: "image.from_var has 2 outputs (image_number = 2)"},
		{name: "a provider's default", ref: "image.fal.outputs[1].id",
			detail: "image.fal has 1 output (image_number is not set: 1 is the default): outputs[1] does not exist; the only valid index is 0. Refer to outputs[0], or set image_number = 2 (or more) to make outputs[1]."},
		{name: "a model that counts its own", ref: "image.fal_other.outputs[3].id"},
		{name: "a computed index", ref: "image.one.outputs[length(\"abc\")].id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			opts.UnknownUnset = true // var.n, where no case gives it
			// In a resource's attribute and in an output alike.
			for _, use := range []struct{ src, line string }{
				{"video \"user\" {\n  source_image = " + tt.ref + "\n}\n", "source_image"},
				{"output \"o\" {\n  value = " + tt.ref + "\n}\n", "value"},
			} {
				_, diags := loadTest(dirtest.New(t, map[string]string{"main.gen.hcl": images + use.src}), opts)
				var got *hcl.Diagnostic
				for _, d := range diags {
					if d.Summary == "No such output" {
						got = d
					} else if d.Severity == hcl.DiagError {
						t.Fatalf("%s: unexpected error: %s", use.line, diagList(diags))
					}
				}
				switch {
				case tt.detail == "" && got != nil:
					t.Errorf("%s: refused: %s", use.line, got.Detail)
				case tt.detail == "":
				case got == nil:
					t.Errorf("%s: not refused", use.line)
				case !strings.Contains(got.Detail, tt.detail):
					t.Errorf("%s: detail %q does not contain %q", use.line, got.Detail, tt.detail)
				case got.Subject.Start.Line != strings.Count(images, "\n")+2:
					t.Errorf("%s: points at line %d, not the reference's", use.line, got.Subject.Start.Line)
				}
			}
		})
	}
}

// A reference through a local is checked too, at the local.
func TestOutputIndexThroughLocal(t *testing.T) {
	diags := loadErrors(t, `
image "a" {
  prompt       = "a"
  image_number = 2
}
locals {
  third = image.a.outputs[2].media_url
}
`, Options{})
	if d := findDiag(diags, "No such output", "main.gen.hcl", 7); d == nil {
		t.Errorf("no error at the local; got:\n%s", diagList(diags))
	}
}

// A misspelt attribute of a resource or of one of its outputs is refused
// with the attributes there are and the one most likely meant.
func TestUnsupportedResourceAttribute(t *testing.T) {
	const images = `
image "a" {
  prompt       = "a"
  image_number = 1
}
image "many" {
  for_each     = toset(["x"])
  prompt       = each.key
  image_number = 1
}
`
	for _, tt := range []struct{ ref, detail string }{
		{"image.a.output[0].media_url", `image.a has no attribute "output": the attributes of an image are id, generation_id, status and outputs. Did you mean "outputs"?`},
		{"image.many[\"x\"].outptus[0].path", `Did you mean "outputs"?`},
		{"image.many[lower(\"X\")].outptus[0].path", `image.many has no attribute "outptus"`},
		{"image.many[lower(\"X\")].outputs[0].sha", `An output of image.many has no attribute "sha"`},
		{"image.a.outputs[0].media_ur", `An output of image.a has no attribute "media_ur": the attributes of each of outputs are id, media_url, thumbnail_url, path and sha256. Did you mean "media_url"?`},
		{"image.a.colour", `image.a has no attribute "colour": the attributes of an image are id, generation_id, status and outputs.`},
	} {
		diags := loadErrors(t, images+"output \"o\" {\n  value = "+tt.ref+"\n}\n", Options{})
		d := findDiag(diags, "Unsupported attribute", "main.gen.hcl", 12)
		if d == nil {
			t.Errorf("%s: no error at the reference; got:\n%s", tt.ref, diagList(diags))
			continue
		}
		if !strings.Contains(d.Detail, tt.detail) {
			t.Errorf("%s: detail %q does not contain %q", tt.ref, d.Detail, tt.detail)
		}
		if strings.HasSuffix(tt.detail, "outputs.") && strings.Contains(d.Detail, "Did you mean") {
			t.Errorf("%s: suggests a name that is not close: %s", tt.ref, d.Detail)
		}
		if len(diags) != 1 {
			t.Errorf("%s: %d diagnostics, want the one:\n%s", tt.ref, len(diags), diagList(diags))
		}
	}
}

// An undeclared resource whose name is not close to a declared one gets
// no suggestion.
func TestUndeclaredResourceSuggestsOnlyCloseNames(t *testing.T) {
	const images = `
image "a" {
  prompt       = "a"
  image_number = 1
}
image "hero" {
  prompt       = "b"
  image_number = 1
}
`
	for ref, want := range map[string]string{
		"image.c.outputs[0].id":    "",
		"image.heor.outputs[0].id": ` Did you mean "hero"?`,
	} {
		diags := loadErrors(t, images+"output \"o\" {\n  value = "+ref+"\n}\n", Options{})
		d := findDiag(diags, "Reference to undeclared resource", "main.gen.hcl", 11)
		if d == nil {
			t.Fatalf("%s: no error; got:\n%s", ref, diagList(diags))
		}
		if got := d.Detail[strings.Index(d.Detail, "declared.")+len("declared."):]; got != want {
			t.Errorf("%s: suggestion %q, want %q", ref, got, want)
		}
	}
}

// DefaultImageNumber tells the instances that leave image_number to the
// endpoint's default from those that set it, or cannot.
func TestDefaultImageNumber(t *testing.T) {
	c := mustLoad(t, `
image "bare" {
  prompt = "a"
}
image "set" {
  prompt       = "a"
  image_number = 4
}
image "null" {
  prompt       = "a"
  image_number = null
}
image "fal" {
  provider = fal
  model    = "fal-ai/flux/dev"
  prompt   = "a"
}
image "fal_other" {
  provider = fal
  model    = "fal-ai/recraft-v3"
  prompt   = "a"
}
video "clip" {
  prompt = "a"
}
`, Options{})
	insts := expandAll(t, c, nil)
	for addr, want := range map[string]struct {
		n  int
		ok bool
	}{
		"image.bare":      {4, true},
		"image.set":       {0, false},
		"image.null":      {4, true},
		"image.fal":       {1, true},
		"image.fal_other": {0, false},
		"video.clip":      {0, false},
	} {
		n, ok := insts[addr].DefaultImageNumber()
		if n != want.n || ok != want.ok {
			t.Errorf("%s: DefaultImageNumber() = %d, %v; want %d, %v", addr, n, ok, want.n, want.ok)
		}
	}
}

// ImageNumberWarnings warns once for each block whose images rely on a
// default of more than one image, with what that makes in all.
func TestImageNumberWarnings(t *testing.T) {
	c := mustLoad(t, `
variable "names" {
  type = set(string)
}
image "banner" {
  for_each = toset(["a", "b"])
  prompt   = each.key
}
image "hero" {
  prompt = "a"
}
image "some" {
  count        = 3
  prompt       = "a"
  image_number = count.index == 0 ? 1 : null
}
image "unknown" {
  for_each = var.names
  prompt   = each.key
}
image "none" {
  count  = 0
  prompt = "a"
}
image "one" {
  prompt       = "a"
  image_number = 1
}
image "fal" {
  provider = fal
  model    = "fal-ai/flux/dev"
  prompt   = "a"
}
video "clip" {
  prompt = "a"
}
`, Options{UnknownUnset: true})
	want := map[int]string{
		5:  "image.banner sets no image_number, so the service makes 4 images a generation (its default): 8 in all for its 2 instances, each one paid for. Set image_number = 1 for one image, or image_number = 4 if 4 is what you mean.",
		9:  "image.hero sets no image_number, so the service makes 4 images a generation (its default), each one paid for. Set image_number = 1",
		12: "image.some leaves image_number unset in 2 of its 3 instances, so the service makes 4 images a generation (its default) for each of them: 8 in all",
		17: "image.unknown sets no image_number, so the service makes 4 images a generation (its default) for each of the instances its for_each makes",
	}
	got := c.ImageNumberWarnings()
	if len(got) != len(want) {
		t.Errorf("%d warnings, want %d:\n%s", len(got), len(want), diagList(got))
	}
	for _, d := range got {
		w, ok := want[d.Subject.Start.Line]
		switch {
		case d.Severity != hcl.DiagWarning || d.Summary != "image_number not set":
			t.Errorf("line %d: %v %q", d.Subject.Start.Line, d.Severity, d.Summary)
		case !ok:
			t.Errorf("unexpected warning at line %d: %s", d.Subject.Start.Line, d.Detail)
		case !strings.Contains(d.Detail, w):
			t.Errorf("line %d: %q does not contain %q", d.Subject.Start.Line, d.Detail, w)
		}
	}
}
