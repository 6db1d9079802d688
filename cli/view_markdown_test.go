package cli

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/genform/genform/reconcile"
)

// A pull-request comment must fit what code hosts accept, however large the
// plan, say what it left out, and never lose its warning block.
func TestPlanMarkdownLimit(t *testing.T) {
	for _, n := range []int{3, 5000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			p := &reconcile.Plan{Service: "simulator"}
			for i := 0; i < n; i++ {
				c := &reconcile.Change{Addr: mustAddr(fmt.Sprintf("image.tile[%d]", i)), Media: 1,
					Action: reconcile.Replace, Reason: &reconcile.Reason{Code: reconcile.ReasonChanged, Attrs: []string{"prompt"}},
					Attrs: []reconcile.AttrChange{{Name: "prompt", Before: fmt.Sprintf("a red tile number %d at dusk", i), After: fmt.Sprintf("a blue tile number %d at dusk", i)}}}
				if i%10 == 0 {
					c = &reconcile.Change{Addr: mustAddr(fmt.Sprintf("image.old[%d]", i)), Action: reconcile.Delete, Reason: &reconcile.Reason{Code: reconcile.ReasonRemoved}}
				}
				p.Changes = append(p.Changes, c)
			}
			var b strings.Builder
			renderPlanMarkdown(&b, p, "built-in simulator (outputs are synthetic)")
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
