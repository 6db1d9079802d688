package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/genform/genform/reconcile"
)

// markdownLimit keeps a pull-request comment under the 65,536 characters
// code hosts accept, with room for what the CI recipe adds around it.
const markdownLimit = 60000

// renderPlanMarkdown writes the plan as a pull-request comment: the summary
// line, a table of the changed resources with action and reason, a word
// diff of every changed prompt, and a warning block when anything is
// deleted or replaced. Long plans are cut with a note of what was left out.
func renderPlanMarkdown(w io.Writer, p *reconcile.Plan, serviceLine string) {
	var b strings.Builder
	fmt.Fprintf(&b, "### genform plan\n\n**%s**\n", summaryLine(p))
	if line := costLine(p); line != "" && p.HasChanges() {
		fmt.Fprintf(&b, "\n**%s**\n", mdEscape(line))
	}
	fmt.Fprintf(&b, "\nService: %s\n", mdEscape(serviceLine))
	var changed []*reconcile.Change
	var destructive []string
	for _, c := range p.Changes {
		if c.Action == reconcile.NoOp {
			continue
		}
		changed = append(changed, c)
		if c.Action == reconcile.Delete || c.Action == reconcile.Replace {
			destructive = append(destructive, fmt.Sprintf("`%s` (%s)", c.Addr, c.Action))
		}
	}
	if len(changed) == 0 {
		io.WriteString(w, b.String())
		return
	}
	// The warning block goes first so that cutting a long plan never
	// drops it.
	if len(destructive) > 0 {
		list := strings.Join(destructive, ", ")
		if len(list) > 2000 {
			list = list[:2000] + fmt.Sprintf(" … (%d in all)", len(destructive))
		}
		fmt.Fprintf(&b, "\n> [!WARNING]\n> This plan deletes or replaces %d resource%s; their current files are removed: %s\n", len(destructive), plural(len(destructive)), list)
	}
	priced := p.Prices != nil
	if priced {
		b.WriteString("\n| | Resource | Action | Reason | Cost |\n|---|---|---|---|---|\n")
	} else {
		b.WriteString("\n| | Resource | Action | Reason |\n|---|---|---|---|\n")
	}
	footer := func(left int) string {
		return fmt.Sprintf("\n_… %d more changed resource%s not shown to keep this comment under %d characters; run `genform plan` to see them all._\n", left, plural(left), markdownLimit)
	}
	var diffs strings.Builder
	shown := 0
	for i, c := range changed {
		row := fmt.Sprintf("| `%s` | `%s` | %s | %s |", strings.TrimSpace(actionSymbol(c.Action)), c.Addr, c.Action, mdEscape(reasonText(c)))
		if priced {
			cost := changeCost(p, c)
			if cost == "" {
				cost = "0"
			}
			row += " " + mdEscape(cost) + " |"
		}
		row += "\n"
		var diff string
		attrs, _, _ := redact(c, sensitiveValue{})
		for _, a := range attrs {
			if a.Name != "prompt" && a.Name != "negative_prompt" {
				continue
			}
			before, _ := a.Before.(string)
			after, _ := a.After.(string)
			if a.Unknown || before == after || before == "" && c.Action != reconcile.Replace {
				continue
			}
			diff += fmt.Sprintf("\n**`%s`** %s:\n\n%s\n", c.Addr, a.Name,
				renderWordDiff(wordDiff(before, after), func(s string) string {
					return "~~" + mdEscape(strings.TrimSuffix(strings.TrimPrefix(s, "[-"), "-]")) + "~~"
				}, func(s string) string {
					return "**" + mdEscape(strings.TrimSuffix(strings.TrimPrefix(s, "{+"), "+}")) + "**"
				}))
		}
		left := len(changed) - i
		if b.Len()+len(row)+diffs.Len()+len(diff)+len(footer(left))+40 > markdownLimit {
			break
		}
		b.WriteString(row)
		diffs.WriteString(diff)
		shown++
	}
	if diffs.Len() > 0 {
		b.WriteString("\n#### Prompt changes\n")
		b.WriteString(diffs.String())
	}
	if left := len(changed) - shown; left > 0 {
		b.WriteString(footer(left))
	}
	io.WriteString(w, b.String())
}

// mdEscape keeps a value from breaking a table row or turning into markup.
func mdEscape(s string) string {
	r := strings.NewReplacer("|", `\|`, "\n", " ", "*", `\*`, "_", `\_`, "~", `\~`, "`", "'", "<", "&lt;", ">", "&gt;")
	return r.Replace(s)
}
