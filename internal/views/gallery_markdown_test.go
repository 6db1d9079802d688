package views

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/gallery"
	"github.com/genform/genform/internal/worddiff"
)

// presigned is a link as long as a real presigned one (about 480
// characters), so the limits are tested at their real size.
func presigned(key string) string {
	return "https://acme-media.s3.amazonaws.com/brand-x/" + key + "?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAEXAMPLEKEY%2F20261207%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261207T184649Z&X-Amz-Expires=604800&X-Amz-SignedHeaders=host&X-Amz-Signature=" + strings.Repeat("ab", 32)
}

func pictures(n int, tag string) []*gallery.Picture {
	var out []*gallery.Picture
	for i := range n {
		sha := fmt.Sprintf("%s%062d", tag, i)
		out = append(out, &gallery.Picture{Index: i, SHA256: sha, ContentType: "image/png",
			Thumb: presigned("thumbnail/512-v1/" + sha[:2] + "/" + sha + ".png"), Full: presigned("sha256/" + sha[:2] + "/" + sha)})
	}
	return out
}

func comparison(diffs ...*gallery.Difference) *gallery.Comparison {
	c := &gallery.Comparison{Selected: "pr-1", Base: "default", Differences: diffs, Presign: 168 * time.Hour,
		Written: time.Date(2026, 12, 7, 18, 0, 0, 0, time.UTC)}
	for _, d := range diffs {
		switch d.Change {
		case gallery.ChangeNew:
			c.New++
		case gallery.ChangeDeleted:
			c.Deleted++
		default:
			c.Changed++
		}
	}
	return c
}

// TestComparisonMarkdownCandidates: an image asking for several outputs
// shows each in a column of its own, numbered as its files are, so a
// reviewer can say "the third"; fewer before than after leaves a dash;
// a new and a deleted instance say so; seed, model and cost are shown
// with what they replaced.
func TestComparisonMarkdownCandidates(t *testing.T) {
	hero := &gallery.Difference{Addr: "image.hero", Kind: "image", Change: gallery.ChangeChanged, Cost: "0.12 USD",
		Before:     &gallery.Side{Prompt: "a red fox", Seed: "41", Model: "/v1/jobs/text2image", Pictures: pictures(2, "aa")},
		After:      &gallery.Side{Prompt: "a red fox at night", Seed: "42", Model: "/v1/jobs/text2image", Pictures: pictures(3, "bb")},
		PromptDiff: worddiff.Diff("a red fox", "a red fox at night")}
	fresh := &gallery.Difference{Addr: `image.tile["a|b"]`, Kind: "image", Change: gallery.ChangeNew, Cost: "unpriced",
		After: &gallery.Side{Prompt: "a *new* tile", Seed: "random", Model: "fal:fal-ai/flux/dev", Pictures: pictures(1, "cc")}}
	gone := &gallery.Difference{Addr: "image.old", Kind: "image", Change: gallery.ChangeDeleted,
		Before: &gallery.Side{Prompt: "gone", Seed: "random", Model: "/v1/jobs/text2image", Pictures: pictures(1, "dd")}}
	md := comparisonMarkdown(comparison(hero, fresh, gone))
	for _, want := range []string{
		"<!-- genform:gallery -->\n### genform gallery: `pr-1` against `default`",
		"**3 instances differ from `default`: 1 new, 1 changed, 1 deleted.**",
		"until 2026-12-14 18:00 UTC (7 days after they were made)",
		"#### `image.hero` · changed · 0.12 USD",
		"| | #0 | #1 | #2 |\n|---|:---:|:---:|:---:|\n",
		"| **before** | [![image.hero before #0](" + presigned("thumbnail/512-v1/aa/"+fmt.Sprintf("aa%062d", 0)+".png") + ")](",
		" | – |\n| **after** | [![image.hero after #0](",
		"[![image.hero after #2](",
		"- **prompt:** a red fox **at night**",
		"- **seed:** 42 (was 41)",
		"- **model:** `/v1/jobs/text2image`\n",
		"- **cost:** 0.12 USD (the configured price of this generation)",
		"#### `image.tile[\"a\\|b\"]` · new · unpriced",
		"| **before** | _new_ |",
		"- **prompt:** a \\*new\\* tile",
		"#### `image.old` · deleted\n",
		"| **after** | _deleted_ |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the comment lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "image.old` · deleted ·") || strings.Count(md, "- **cost:**") != 2 {
		t.Errorf("a deletion costs nothing, and says no cost:\n%s", md)
	}
}

// TestComparisonMarkdownProblems: a video without a still frame is
// linked and says why; a file the store lacks is named; a link holding
// parentheses cannot end the Markdown link.
func TestComparisonMarkdownProblems(t *testing.T) {
	clip := &gallery.Difference{Addr: "video.clip", Kind: "video", Change: gallery.ChangeNew, Cost: "0.40 USD",
		After: &gallery.Side{Prompt: "waves", Seed: "7", Model: "/v1/jobs/text2video", Pictures: []*gallery.Picture{
			{Index: 0, Video: true, Full: "https://cdn.example.com/m/(x)/clip", Problem: "no still frame: ffmpeg is not installed where this comment was written"},
		}}}
	lost := &gallery.Difference{Addr: "image.lost", Kind: "image", Change: gallery.ChangeNew,
		After: &gallery.Side{Prompt: "lost", Seed: "7", Model: "/v1/jobs/text2image", Pictures: []*gallery.Picture{
			{Index: 0, Problem: "not in the object store, and not on this machine"},
		}}}
	md := comparisonMarkdown(comparison(clip, lost))
	for _, want := range []string{
		"| **after** | [▶ video #0](https://cdn.example.com/m/%28x%29/clip) |",
		"> after #0: no still frame: ffmpeg is not installed where this comment was written",
		"| **after** | _not shown_ |",
		"> after #0: not in the object store, and not on this machine",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the comment lacks %q:\n%s", want, md)
		}
	}
}

// TestComparisonMarkdownLimit: a pull request that changes 500 images,
// each with three outputs and presigned links, gets a comment under
// GitHub's 65,536 characters that shows what fits, lists the rest by
// address, and says how many it could not list; every instance is shown
// or counted exactly once.
func TestComparisonMarkdownLimit(t *testing.T) {
	var diffs []*gallery.Difference
	for i := range 500 {
		diffs = append(diffs, &gallery.Difference{Addr: fmt.Sprintf("image.tiles[%d]", i), Kind: "image", Change: gallery.ChangeChanged, Cost: "0.12 USD",
			Before:     &gallery.Side{Prompt: "tile", Seed: "1", Model: "/v1/jobs/text2image", Pictures: pictures(3, fmt.Sprintf("%02x", i%256))},
			After:      &gallery.Side{Prompt: "tile two", Seed: "1", Model: "/v1/jobs/text2image", Pictures: pictures(3, "ee")},
			PromptDiff: worddiff.Diff("tile", "tile two")})
	}
	md := comparisonMarkdown(comparison(diffs...))
	if n := len([]rune(md)); n >= commentLimit || len(md) > markdownLimit {
		t.Fatalf("the comment is %d characters (%d bytes): over the limit", n, len(md))
	}
	shown := strings.Count(md, "\n#### `image.tiles[")
	m := regexp.MustCompile(`_(\d+) more instances differ, not shown to keep this comment under 65536 characters`).FindStringSubmatch(md)
	if m == nil {
		t.Fatalf("the comment does not say how many are not shown:\n%s", md[len(md)-2000:])
	}
	rest, _ := strconv.Atoi(m[1])
	listed := strings.Count(md[strings.Index(md, m[0]):], "`image.tiles[")
	more := 0
	if mm := regexp.MustCompile(` … and (\d+) more\.\n$`).FindStringSubmatch(md); mm != nil {
		more, _ = strconv.Atoi(mm[1])
	}
	if shown == 0 || shown+rest != 500 || listed+more != rest {
		t.Errorf("%d shown, %d not shown (%d listed, %d counted): want 500 in all", shown, rest, listed, more)
	}
	t.Logf("%d characters: %d shown, %d listed by address, %d counted", len(md), shown, listed, more)
}
