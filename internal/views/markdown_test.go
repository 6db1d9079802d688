package views

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/reconcile/plans"
)

// A pull-request comment must fit what code hosts accept, however large the
// plan, say what it left out, and never lose its warning block.
func TestPlanMarkdownLimit(t *testing.T) {
	for _, n := range []int{3, 5000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			p := &plans.Plan{Service: "simulator"}
			for i := 0; i < n; i++ {
				c := &plans.Change{Addr: addrs.MustParseInstance(fmt.Sprintf("image.tile[%d]", i)), Media: 1,
					Action: plans.Replace, Reason: &plans.Reason{Code: plans.ReasonChanged, Attrs: []string{"prompt"}},
					Attrs: []plans.AttrChange{{Name: "prompt", Before: fmt.Sprintf("a red tile number %d at dusk", i), After: fmt.Sprintf("a blue tile number %d at dusk", i)}}}
				if i%10 == 0 {
					c = &plans.Change{Addr: addrs.MustParseInstance(fmt.Sprintf("image.old[%d]", i)), Action: plans.Delete, Reason: &plans.Reason{Code: plans.ReasonRemoved}}
				}
				p.Changes = append(p.Changes, c)
			}
			var b strings.Builder
			writePlanMarkdown(&b, p, "built-in simulator (outputs are synthetic)")
			out := b.String()
			if len(out) >= markdownLimit {
				t.Fatalf("%d changes rendered to %d characters, over %d", n, len(out), markdownLimit)
			}
			if !strings.Contains(out, summaryLine(p)) || !strings.Contains(out, "> [!WARNING]") {
				t.Errorf("summary line or warning block missing:\n%.500s", out)
			}
			rows := strings.Count(out, "\n| `")
			m := regexp.MustCompile(`_… (\d+) more changed resources? not shown`).FindStringSubmatch(out)
			if n == 3 {
				if m != nil || rows != 3 || !strings.Contains(out, "~~red~~ **blue**") {
					t.Errorf("a small plan must be shown whole, with its prompt diffs:\n%s", out)
				}
				return
			}
			if m == nil {
				t.Fatalf("a cut plan must say how many resources were left out:\n...%s", out[len(out)-300:])
			}
			left, _ := strconv.Atoi(m[1])
			if left+rows != n || rows == 0 {
				t.Errorf("%d rows shown + %d left out != %d changes", rows, left, n)
			}
		})
	}
}

var updateGolden = flag.Bool("update", false, "rewrite the golden files of the markdown tests")

// markdownCases are plans of each kind of change, as a reviewer meets
// them in a pull request. Their comments are compared with the golden
// files in testdata/markdown (go test ./cli -run TestPlanMarkdownGolden
// -update rewrites them).
var markdownCases = map[string]*plans.Plan{
	"create": {Service: "simulator", Changes: []*plans.Change{{
		Addr: addrs.MustParseInstance("image.hero"), Action: plans.Create, Media: 2,
		Reason: &plans.Reason{Code: plans.ReasonNew},
		Attrs: []plans.AttrChange{
			{Name: "prompt", After: "a lighthouse at dusk, oil on canvas"},
			{Name: "image_number", After: json.Number("2")},
			{Name: "aspect_ratio", After: "16:9"},
			{Name: "seed", After: json.Number("42")},
			{Name: "dir", After: "generated/image/hero"},
		},
	}}},
	"replace_cascade": {Service: "simulator", Changes: []*plans.Change{
		{
			Addr: addrs.MustParseInstance("image.hero"), Action: plans.Replace, Media: 1,
			Reason: &plans.Reason{Code: plans.ReasonChanged, Attrs: []string{"prompt", "aspect_ratio"}},
			Attrs: []plans.AttrChange{
				{Name: "prompt", Before: "a lighthouse at dusk", After: "a lighthouse at dawn"},
				{Name: "aspect_ratio", Before: "16:9", After: "1:1"},
			},
		},
		{
			Addr: addrs.MustParseInstance("video.motion"), Action: plans.Replace, Media: 1, Seconds: 4,
			Reason: &plans.Reason{Code: plans.ReasonUpstream, Upstream: []addrs.Resource{addrs.MustParseInstance("image.hero").Resource}},
			Attrs: []plans.AttrChange{
				{Name: "prompt", Before: "slow dolly in", After: "slow dolly out"},
				{Name: "source_image", Before: "https://cdn.example/hero/0.png", Unknown: true},
			},
		},
	}},
	"update": {Service: "simulator", Changes: []*plans.Change{{
		Addr: addrs.MustParseInstance("video.motion"), Action: plans.Update, Media: 1,
		Reason: &plans.Reason{Code: plans.ReasonLocal, Local: []plans.LocalChange{
			{What: plans.DirMoved, From: "generated/video/motion", To: "media/motion"},
			{What: plans.WatermarkChanged},
		}},
		Attrs: []plans.AttrChange{
			{Name: "dir", Before: "generated/video/motion", After: "media/motion"},
			{Name: "watermark_free", Before: false, After: true},
		},
	}}},
	"redownload": {Service: "simulator", Changes: []*plans.Change{{
		Addr: addrs.MustParseInstance("image.banner"), Action: plans.Update, Media: 4, MediaDefault: true, Redownload: []int{0, 2},
		Reason: &plans.Reason{Code: plans.ReasonLocal, Local: []plans.LocalChange{
			{What: plans.OutputMissing, Output: 0, Path: "generated/image/banner/0.png"},
			{What: plans.OutputModified, Output: 2, Path: "generated/image/banner/2.png", Stored: true},
		}},
	}}},
	"default_count": {Service: "simulator", Changes: []*plans.Change{
		{
			Addr: addrs.MustParseInstance(`image.tile["a"]`), Action: plans.Create, Media: 4, MediaDefault: true,
			Reason: &plans.Reason{Code: plans.ReasonNew},
			Attrs: []plans.AttrChange{
				{Name: "prompt", After: "a tile"},
				{Name: "image_number", After: json.Number("4")},
			},
		},
		{
			Addr: addrs.MustParseInstance("image.hero"), Action: plans.Replace, Media: 4, MediaDefault: true,
			Reason: &plans.Reason{Code: plans.ReasonChanged, Attrs: []string{"prompt"}},
			Attrs:  []plans.AttrChange{{Name: "prompt", Before: "a lighthouse at dusk", After: "a lighthouse at dawn"}},
		},
		{
			Addr: addrs.MustParseInstance("image.pair"), Action: plans.Replace, Media: 2,
			Reason: &plans.Reason{Code: plans.ReasonChanged, Attrs: []string{"prompt"}},
			Attrs:  []plans.AttrChange{{Name: "prompt", Before: "two boats", After: "two ships"}},
		},
	}},
	"move": {Service: "simulator", Changes: []*plans.Change{{
		Addr: addrs.MustParseInstance("image.cover"), PrevAddr: addrs.MustParseInstance("image.hero"), Action: plans.Move, Media: 1,
		Reason: &plans.Reason{Code: plans.ReasonRenamed},
		Attrs:  []plans.AttrChange{{Name: "dir", Before: "generated/image/hero", After: "generated/image/cover"}},
	}}},
	"restore": {Service: "simulator", Changes: []*plans.Change{{
		Addr: addrs.MustParseInstance("image.hero"), Action: plans.Restore, Media: 1, GenerationID: "6f1c0d2e",
		Reason: &plans.Reason{Code: plans.ReasonRestored, GenerationID: "6f1c0d2e", CreationID: "6f1c0d2e",
			Holder: addrs.MustParseInstance("image.hero"), Cached: true},
		Attrs: []plans.AttrChange{{Name: "prompt", Before: "a lighthouse at dawn", After: "a lighthouse at dusk"}},
	}}},
	"delete": {Service: "simulator", Changes: []*plans.Change{{
		Addr: addrs.MustParseInstance("image.gone"), Action: plans.Delete,
		Reason: &plans.Reason{Code: plans.ReasonRemoved},
		Before: map[string]any{"prompt": "a storm | at *sea*", "dir": "generated/image/gone"},
	}}},
}

func TestPlanMarkdownGolden(t *testing.T) {
	for name, p := range markdownCases {
		t.Run(name, func(t *testing.T) {
			var b strings.Builder
			writePlanMarkdown(&b, p, "built-in simulator (outputs are synthetic)")
			got := b.String()
			path := filepath.Join("testdata", "markdown", name+".md")
			if *updateGolden {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("the markdown of %s differs from %s (-want +got):\n%s", name, path, diff)
			}
			if !strings.HasPrefix(got, markdownMarker+"\n") {
				t.Errorf("the comment does not start with the marker line a bot finds it by")
			}
		})
	}
}

// With prices, every row and section carries its cost, and the total
// stands under the summary.
func TestPlanMarkdownCost(t *testing.T) {
	img, vid := config.Money(20000), config.Money(50000)
	c := markdownCases["replace_cascade"]
	p := &plans.Plan{Service: c.Service, Changes: c.Changes, Prices: &config.Prices{Image: &img, VideoSecond: &vid, Currency: "EUR"}}
	var b strings.Builder
	writePlanMarkdown(&b, p, "simulator")
	out := b.String()
	for _, want := range []string{
		"**Estimated cost: 0.22 EUR (1 image at 0.02, 4 video seconds at 0.05).**",
		"| Reason | Cost |",
		"| 0.20 EUR |",
		"<code>video.motion</code> must be replaced (generated anew) · 0.20 EUR</summary>",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the comment lacks %q:\n%s", want, out)
		}
	}
}

// An address whose key holds a table's or a code span's markup stays in
// its cell, and a long warning list is cut between entries.
func TestPlanMarkdownAddressMarkup(t *testing.T) {
	p := &plans.Plan{Service: "simulator"}
	for i := 0; i < 200; i++ {
		p.Changes = append(p.Changes, &plans.Change{Addr: addrs.MustParseInstance(fmt.Sprintf("image.tile[\"a|b`c %03d\"]", i)), Action: plans.Delete, Reason: &plans.Reason{Code: plans.ReasonRemoved}})
	}
	var b strings.Builder
	writePlanMarkdown(&b, p, "simulator")
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(line, "| `-`") {
			// Four cells: the unescaped pipes are the cell borders.
			if n := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|"); n != 5 {
				t.Fatalf("row %q has %d borders, want 5", line, n)
			}
		}
		if strings.HasPrefix(line, "> This plan") {
			if !strings.HasSuffix(line, "(200 in all)") || strings.Count(line, "`")%2 != 0 {
				t.Errorf("the warning list is cut inside an entry: …%s", line[len(line)-80:])
			}
		}
	}
}

// The text plan is written as it is rendered, through one buffer: a plan
// of 100,000 changes is never held whole, and no write carries more than
// the buffer.
func TestPlanTextIsStreamed(t *testing.T) {
	p := &plans.Plan{Service: "simulator"}
	for i := 0; i < 100000; i++ {
		p.Changes = append(p.Changes, &plans.Change{Addr: addrs.MustParseInstance(fmt.Sprintf("image.tile[%d]", i)), Media: 1,
			Action: plans.Create, Reason: &plans.Reason{Code: plans.ReasonNew},
			Attrs: []plans.AttrChange{{Name: "prompt", After: fmt.Sprintf("a red tile number %d at dusk", i)}}})
	}
	var w writeSizes
	writePlan(&w, p, "built-in simulator (outputs are synthetic)")
	if w.total < 10<<20 {
		t.Fatalf("the plan is %d bytes; the test wants one of over 10 MiB", w.total)
	}
	if w.largest > 64<<10 {
		t.Errorf("a write of %d bytes: the plan was held whole, or in large parts, before it was written", w.largest)
	}
}

// writeSizes counts what is written to it, and the largest write.
type writeSizes struct{ total, largest int }

func (w *writeSizes) Write(b []byte) (int, error) {
	w.total += len(b)
	w.largest = max(w.largest, len(b))
	return len(b), nil
}
