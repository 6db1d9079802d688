package config

import (
	"strings"
	"testing"

	"github.com/genform/genform/internal/dirtest"
)

// TestOverlappingDirs: two resources whose directories are one, or one
// inside the other, are refused at Load with one diagnostic naming both,
// whether the directories are written or the defaults, and whichever
// instance of a count or for_each overlaps; directories side by side,
// and names that only start alike, are not.
func TestOverlappingDirs(t *testing.T) {
	const a = "image \"a\" {\n  prompt       = \"a\"\n  image_number = 1\n}\n"
	tests := []struct {
		name, src string
		want      []string // substrings of the one diagnostic; none when valid
	}{
		{"a dir inside a default dir", a + "image \"b\" {\n  prompt = \"b\"\n  dir    = \"generated/image/a/0.png\"\n}\n",
			[]string{"Overlapping output directories", `image.b writes its files to "generated/image/a/0.png", inside "generated/image/a" (its default directory`, "where image.a writes its own", "main.gen.hcl:7"}},
		{"a default dir inside a dir", a + "image \"b\" {\n  prompt = \"b\"\n  dir    = \"generated\"\n}\n",
			[]string{"Overlapping output directories", `image.a writes its files to "generated/image/a" (its default directory, <output_dir>/<kind>/<name>), inside "generated", where image.b`}},
		{"the working directory", a + "image \"b\" {\n  prompt = \"b\"\n  dir    = \".\"\n}\n",
			[]string{"Overlapping output directories", `inside ".", where image.b`}},
		{"a for_each instance inside another dir", "image \"a\" {\n  prompt = \"a\"\n  dir    = \"media\"\n}\nimage \"b\" {\n  for_each = toset([\"x\", \"y\"])\n  prompt   = \"b\"\n  dir      = \"media/${each.key}\"\n}\n",
			[]string{"Overlapping output directories", `image.b["x"] writes its files to "media/x", inside "media", where image.a`}},
		{"a dir inside a count instance's default", "image \"a\" {\n  count  = 3\n  prompt = \"a\"\n}\nimage \"b\" {\n  prompt = \"b\"\n  dir    = \"generated/image/a/2/sub\"\n}\n",
			[]string{"Overlapping output directories", `inside "generated/image/a/2" (its default directory`, "where image.a[2]"}},
		{"the same dir, written two ways", a + "image \"b\" {\n  prompt = \"b\"\n  dir    = \"generated/x/../image/a\"\n}\n",
			[]string{"Duplicate output directory", `image.a and image.b both write their files to "generated/image/a"`}},
		{"all the instances of a count in one dir, once", "image \"a\" {\n  count  = 50\n  prompt = \"a\"\n  dir    = \"out\"\n}\n",
			[]string{"Duplicate output directory", `image.a[0] and image.a[1]`}},
		{"side by side", a + "image \"b\" {\n  prompt = \"b\"\n  dir    = \"generated/image/ab\"\n}\nimage \"c\" {\n  count  = 2\n  prompt = \"c\"\n  dir    = \"media/c${count.index}\"\n}\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := loadTest(dirtest.New(t, map[string]string{"main.gen.hcl": tt.src}), Options{})
			if tt.want == nil {
				if len(diags) > 0 {
					t.Fatalf("refused: %s", diagList(diags))
				}
				return
			}
			if len(diags) != 1 {
				t.Fatalf("want one diagnostic, got %s", diagList(diags))
			}
			got := diagList(diags)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("%s\ndoes not say %q", got, w)
				}
			}
		})
	}
}
