package views

import (
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/genform/genform/internal/secrets"
	"github.com/genform/genform/internal/words"
	"github.com/genform/genform/reconcile/plans"
)

// markdownLimit keeps a pull-request comment under the 65,536 characters
// code hosts accept, with room for what the CI recipe adds around it.
const markdownLimit = 60000

// markdownMarker is the comment's first line: a bot that posts the plan
// finds its earlier comment by it and edits it in place rather than adding
// one per push (the tfcmt convention). It renders as nothing.
const markdownMarker = "<!-- genform:plan -->"

// writePlanMarkdown writes the plan as a pull-request comment: the marker
// line, the summary and the estimated cost, a warning block when anything
// is deleted or replaced, a table of the changed resources, and for each a
// collapsible section with what the reviewer needs to judge it: a new
// resource's prompt and settings, every changed attribute as old → new
// (prompts as a word diff), a cascade's upstream change beside the
// resource's own. Long plans are cut with a count of what was left out;
// the warning block is never cut.
func writePlanMarkdown(w io.Writer, p *plans.Plan, header string) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n### genform plan\n\n**%s**\n", markdownMarker, summaryLine(p))
	if line := words.CostLine(p); line != "" && p.HasChanges() {
		fmt.Fprintf(&b, "\n**%s**\n", mdEscape(line))
	}
	fmt.Fprintf(&b, "\nService: %s\n", mdEscape(header))
	// What waits for a decision is said before anything can be cut.
	for _, c := range p.PossiblyPaid() {
		fmt.Fprintf(&b, "\n> [!CAUTION]\n> %s: %s\n", mdCode(c.Addr.String()), mdEscape(words.Warnings(c)[0]))
	}
	var changed []*plans.Change
	var destructive []string
	for _, c := range p.Changes {
		if c.Action == plans.NoOp {
			continue
		}
		changed = append(changed, c)
		if c.Action == plans.Delete || c.Action == plans.Replace {
			destructive = append(destructive, fmt.Sprintf("%s (%s)", mdCode(c.Addr.String()), c.Action))
		}
	}
	if len(changed) == 0 {
		io.WriteString(w, b.String())
		return
	}
	// The warning block goes first so that cutting a long plan never
	// drops it.
	if len(destructive) > 0 {
		// Whole entries only: a cut inside one would leave a code span open.
		list, n := "", 0
		for _, d := range destructive {
			if len(list)+len(d) > 2000 {
				break
			}
			if n > 0 {
				list += ", "
			}
			list += d
			n++
		}
		if n < len(destructive) {
			list += fmt.Sprintf(" … (%d in all)", len(destructive))
		}
		fmt.Fprintf(&b, "\n> [!WARNING]\n> This plan deletes or replaces %d resource%s; their current files are removed: %s\n", len(destructive), words.Plural(len(destructive)), list)
	}
	priced := p.Priced()
	if priced {
		b.WriteString("\n| | Resource | Action | Reason | Cost |\n|---|---|---|---|---|\n")
	} else {
		b.WriteString("\n| | Resource | Action | Reason |\n|---|---|---|---|\n")
	}
	footer := func(left int) string {
		return fmt.Sprintf("\n_… %d more changed resource%s not shown to keep this comment under %d characters; run `genform plan` to see them all._\n", left, words.Plural(left), markdownLimit)
	}
	const detailsHead = "\n#### Changes\n"
	var details strings.Builder
	shown := 0
	for i, c := range changed {
		row := fmt.Sprintf("| `%s` | %s | %s | %s |", strings.TrimSpace(actionSymbol(c.Action)), mdCode(c.Addr.String()), c.Action, mdEscape(words.Reason(c)))
		if priced {
			cost := changeCost(p, c)
			if cost == "" {
				cost = "0"
			}
			row += " " + mdEscape(cost) + " |"
		}
		row += "\n"
		section := markdownChange(p, c)
		left := len(changed) - i
		if b.Len()+len(row)+len(detailsHead)+details.Len()+len(section)+len(footer(left))+40 > markdownLimit {
			break
		}
		b.WriteString(row)
		details.WriteString(section)
		shown++
	}
	if details.Len() > 0 {
		b.WriteString(detailsHead)
		b.WriteString(details.String())
	}
	if left := len(changed) - shown; left > 0 {
		b.WriteString(footer(left))
	}
	io.WriteString(w, b.String())
}

// markdownChange is one change's collapsible section.
func markdownChange(p *plans.Plan, c *plans.Change) string {
	var s strings.Builder
	summary := fmt.Sprintf("<code>%s</code> <code>%s</code> %s", html.EscapeString(strings.TrimSpace(actionSymbol(c.Action))), html.EscapeString(c.Addr.String()), html.EscapeString(actionVerb(c)))
	if cost := changeCost(p, c); cost != "" {
		summary += " · " + html.EscapeString(cost)
	}
	fmt.Fprintf(&s, "\n<details><summary>%s</summary>\n\n", summary)
	if r := words.Reason(c); r != "" {
		fmt.Fprintf(&s, "Why: %s\n\n", mdEscape(r))
	}
	attrs, before, _ := secrets.Redact(c, secrets.Value{})
	// How many images the generation makes, and whether the service's
	// default gives that count: beside image_number when it is listed,
	// in a line of its own when it is not.
	showCount := words.ShowsImageCount(c)
	countNote := func(a plans.AttrChange) string {
		if !showCount || !words.CountShownBy(c, a) {
			return ""
		}
		showCount = false
		if c.MediaDefault && !a.Unknown {
			return " (" + mdEscape(words.ServiceDefault) + ")"
		}
		return ""
	}
	switch c.Action {
	case plans.Create:
		// What the new resource will make: its prompt and settings.
		s.WriteString("| attribute | value |\n|---|---|\n")
		for _, a := range attrs {
			fmt.Fprintf(&s, "| %s | %s%s |\n", mdCode(a.Name), mdValue(a.Name, a.After, a.Unknown), countNote(a))
		}
		if showCount {
			fmt.Fprintf(&s, "\n%s.\n", mdEscape(upperFirst(words.ImagesPerGeneration(c))))
		}
	case plans.Delete:
		if prompt, ok := before["prompt"]; ok {
			fmt.Fprintf(&s, "Made from: %s\n", mdValue("prompt", prompt, false))
		}
		if dir, ok := before["dir"].(string); ok && dir != "" {
			fmt.Fprintf(&s, "\nFiles removed from %s.\n", mdCode(dir))
		}
	default:
		// Blocks of the section, separated by blank lines: each prompt's
		// word diff, the table of the other attributes, the job.
		var blocks []string
		var rows strings.Builder
		for _, a := range attrs {
			if isPromptAttr(a.Name) && !a.Unknown {
				if diff := mdPromptDiff(a); diff != "" {
					blocks = append(blocks, fmt.Sprintf("%s: %s", mdCode(a.Name), diff))
					continue
				}
			}
			fmt.Fprintf(&rows, "| %s | %s | %s%s |\n", mdCode(a.Name), mdValue(a.Name, a.Before, false), mdValue(a.Name, a.After, a.Unknown), countNote(a))
		}
		if rows.Len() > 0 {
			blocks = append(blocks, "| attribute | before | after |\n|---|---|---|\n"+strings.TrimSuffix(rows.String(), "\n"))
		}
		if showCount {
			blocks = append(blocks, mdEscape(upperFirst(words.ImagesPerGeneration(c)))+".")
		}
		if c.Action == plans.Update && c.Reason != nil {
			// Which files come back (or go up to the store), one a line.
			var files []string
			for _, l := range c.Reason.Local {
				if words.FileChange(l) {
					files = append(files, "- "+mdEscape(words.Local(l)))
				}
			}
			if len(files) > 0 {
				blocks = append(blocks, strings.Join(files, "\n"))
			}
		}
		if c.GenerationID != "" {
			blocks = append(blocks, "Job: "+mdCode(c.GenerationID))
		}
		if len(blocks) > 0 {
			s.WriteString(strings.Join(blocks, "\n\n") + "\n")
		}
	}
	for _, wn := range words.Warnings(c) {
		fmt.Fprintf(&s, "\n> [!CAUTION]\n> %s\n", mdEscape(wn))
	}
	s.WriteString("\n</details>\n")
	return s.String()
}

// upperFirst is s with its first letter in upper case, to start a
// sentence with words written to go inside one.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// isPromptAttr reports whether the attribute is text a reviewer reads as
// words, shown as a word diff rather than as a value.
func isPromptAttr(name string) bool { return name == "prompt" || name == "negative_prompt" }

// mdPromptDiff is a changed prompt as a word diff, removed words struck
// through and added ones in bold; "" when either side is not text.
func mdPromptDiff(a plans.AttrChange) string {
	before, okB := a.Before.(string)
	after, okA := a.After.(string)
	switch {
	case !okA:
		return ""
	case !okB && a.Before != nil:
		return ""
	case before == "":
		return "**" + mdEscape(after) + "**"
	}
	return renderWordDiff(wordDiff(before, after), func(s string) string {
		return "~~" + mdEscape(strings.TrimSuffix(strings.TrimPrefix(s, "[-"), "-]")) + "~~"
	}, func(s string) string {
		return "**" + mdEscape(strings.TrimSuffix(strings.TrimPrefix(s, "{+"), "+}")) + "**"
	})
}

// mdValue is an attribute value in a table cell: a prompt as plain text,
// anything else as code; "known after apply" and "(sensitive)" in
// italics, and an absent value as a dash.
func mdValue(name string, v any, unknown bool) string {
	switch {
	case unknown:
		return "_(known after apply)_"
	case v == nil:
		return "–"
	}
	if _, ok := v.(secrets.Value); ok {
		return "_" + secrets.Text + "_"
	}
	if s, ok := v.(string); ok && isPromptAttr(name) {
		return mdEscape(s)
	}
	return mdCode(FormatValue(v))
}

// mdCode is s as a code span that cannot break a table row.
func mdCode(s string) string {
	r := strings.NewReplacer("`", "'", "|", `\|`, "\n", " ", "\r", " ")
	return "`" + r.Replace(s) + "`"
}

// mdEscape keeps a value from breaking a table row or turning into markup.
func mdEscape(s string) string {
	r := strings.NewReplacer("|", `\|`, "\n", " ", "*", `\*`, "_", `\_`, "~", `\~`, "`", "'", "<", "&lt;", ">", "&gt;")
	return r.Replace(s)
}
