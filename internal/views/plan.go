package views

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/fatih/color"

	"github.com/genform/genform/internal/secrets"
	"github.com/genform/genform/internal/words"
	"github.com/genform/genform/reconcile/plans"
)

// The human rendering of a plan, after Terraform's: a header naming the
// service, one block per changed instance with its symbol, why it changes
// and the attributes that differ, then one summary line.

var (
	colGreen  = color.New(color.FgGreen)
	colRed    = color.New(color.FgRed)
	colYellow = color.New(color.FgYellow)
	colCyan   = color.New(color.FgCyan)
	colBold   = color.New(color.Bold)
)

func actionColor(a plans.Action) *color.Color {
	switch a {
	case plans.Create:
		return colGreen
	case plans.Delete:
		return colRed
	case plans.Replace:
		return colYellow
	default:
		return colCyan
	}
}

// actionSymbols are the symbols the human views show in front of an
// address, after Terraform's.
var actionSymbols = [...]string{
	plans.NoOp:    " ",
	plans.Create:  "+",
	plans.Replace: "-/+",
	plans.Update:  "~",
	plans.Move:    ">",
	plans.Resume:  "…",
	plans.Restore: "<",
	plans.Delete:  "-",
}

// actionSymbol is the action's symbol in the human views.
func actionSymbol(a plans.Action) string {
	if int(a) < len(actionSymbols) {
		return actionSymbols[a]
	}
	return "?"
}

// actionVerb says what happens to c's instance; a change that also moves
// it (a moved block's instance whose request changed) says where from.
func actionVerb(c *plans.Change) string {
	if !c.PrevAddr.IsZero() && c.Action != plans.Move {
		return "has moved from " + c.PrevAddr.String() + ", and " + verbOf(c)
	}
	return verbOf(c)
}

func verbOf(c *plans.Change) string {
	switch c.Action {
	case plans.Create:
		return "will be generated"
	case plans.Replace:
		return "must be replaced (generated anew)"
	case plans.Update:
		return "will be updated in place (no new generation)"
	case plans.Move:
		return "has moved from " + c.PrevAddr.String()
	case plans.Resume:
		return "will be resumed"
	case plans.Restore:
		return "will be restored from the history (no new generation)"
	case plans.Delete:
		return "will be deleted"
	}
	return "is unchanged"
}

// writePlan writes the human plan; header is its service line.
func writePlan(out io.Writer, p *plans.Plan, header string) {
	// Streamed through one buffer: a plan of thousands of changes is tens
	// of thousands of small writes, each a system call unbuffered, and is
	// never held whole in memory.
	w := bufio.NewWriterSize(out, 64<<10)
	defer w.Flush()
	fmt.Fprintf(w, "Service: %s\n\n", header)
	if !p.HasChanges() {
		held := p.Waiting()
		if len(held) == 0 {
			fmt.Fprintln(w, colGreen.Sprint(colBold.Sprint("No changes.")+" Your media matches the configuration."))
			return
		}
		for _, c := range held {
			fmt.Fprintf(w, "%s %s: %s\n\n", colYellow.Sprint(colBold.Sprint("Warning:")), c.Addr, words.Warnings(c)[0])
		}
		fmt.Fprintln(w, colBold.Sprint(summaryLine(p)))
		return
	}
	fmt.Fprintln(w, "genform will perform the following actions:")
	var warnings []string
	for _, c := range p.Changes {
		if c.Action == plans.NoOp {
			for _, wn := range words.Warnings(c) {
				warnings = append(warnings, c.Addr.String()+": "+wn)
			}
			continue
		}
		fmt.Fprintln(w)
		renderChange(w, p, c)
		for _, wn := range words.Warnings(c) {
			warnings = append(warnings, c.Addr.String()+": "+wn)
		}
	}
	for _, wn := range warnings {
		fmt.Fprintf(w, "\n%s %s\n", colYellow.Sprint(colBold.Sprint("Warning:")), wn)
	}
	fmt.Fprintf(w, "\n%s\n", colBold.Sprint(summaryLine(p)))
	if line := words.CostLine(p); line != "" {
		fmt.Fprintln(w, line)
	}
}

func renderChange(w io.Writer, p *plans.Plan, c *plans.Change) {
	col := actionColor(c.Action)
	kind, name := c.Addr.Resource.Kind, c.Addr.Resource.Name
	fmt.Fprintf(w, "  %s %s", colBold.Sprint("# "+c.Addr.String()), colBold.Sprint(actionVerb(c)))
	if r := words.Reason(c); r != "" {
		fmt.Fprintf(w, ": %s", r)
	}
	fmt.Fprintln(w)
	sym := fmt.Sprintf("%3s", actionSymbol(c.Action))
	// The block is named as it is declared, and an instance of a count or
	// for_each by its key too: the instances of one block differ by it.
	head := fmt.Sprintf("%s %s %q", col.Sprint(sym), kind, name)
	if !c.Addr.Key.IsZero() {
		head += " " + c.Addr.Key.String()
	}
	if c.Action == plans.Delete && len(c.Attrs) == 0 {
		fmt.Fprintln(w, head)
		return
	}
	fmt.Fprintln(w, head+" {")
	width := 0
	for _, a := range c.Attrs {
		width = max(width, len(a.Name))
	}
	hidden := 0
	attrs, _, _ := secrets.Redact(c, secrets.Value{})
	showCount := words.ShowsImageCount(c)
	for _, a := range attrs {
		line := fmt.Sprintf("      %s %-*s = %s", attrSymbol(c, a), width, a.Name, attrValue(c, a))
		if showCount && words.CountShownBy(c, a) {
			// The count is on show; say where it comes from.
			showCount = false
			if c.MediaDefault && !a.Unknown {
				line += " # " + words.ServiceDefault
			}
		}
		fmt.Fprintln(w, line)
	}
	if c.Action != plans.Create && c.After != nil {
		hidden = len(c.After) - len(c.Attrs)
	}
	if hidden > 0 {
		fmt.Fprintf(w, "        # (%d unchanged attribute%s hidden)\n", hidden, words.Plural(hidden))
	}
	if showCount {
		// What is paid for, which the attributes above do not show: an
		// unchanged image_number, or one the service's default gives.
		fmt.Fprintf(w, "        # %s\n", words.ImagesPerGeneration(c))
	}
	if c.Action == plans.Update && c.Reason != nil {
		for _, l := range c.Reason.Local {
			if words.FileChange(l) {
				fmt.Fprintf(w, "        # %s\n", words.Local(l))
			}
		}
	}
	if c.GenerationID != "" {
		fmt.Fprintf(w, "        # job %s\n", c.GenerationID)
	}
	if cost := changeCost(p, c); cost != "" {
		fmt.Fprintf(w, "        # estimated cost: %s\n", cost)
	}
	fmt.Fprintln(w, "    }")
}

func attrSymbol(c *plans.Change, a plans.AttrChange) string {
	switch {
	case c.Action == plans.Create:
		return colGreen.Sprint("+")
	case a.Before == nil && !a.Unknown:
		return colGreen.Sprint("+")
	case a.After == nil && !a.Unknown:
		return colRed.Sprint("-")
	}
	return colYellow.Sprint("~")
}

func attrValue(c *plans.Change, a plans.AttrChange) string {
	if _, ok := a.Before.(secrets.Value); ok && !a.Unknown {
		return secrets.Text
	}
	after := FormatValue(a.After)
	if a.Unknown {
		after = "(known after apply)"
	}
	if c.Action == plans.Create || a.Before == nil {
		return after
	}
	if a.After == nil && !a.Unknown {
		return FormatValue(a.Before) + " -> null"
	}
	if bs, ok := a.Before.(string); ok {
		if as, ok := a.After.(string); ok && (a.Name == "prompt" || a.Name == "negative_prompt") {
			return `"` + renderWordDiff(wordDiff(bs, as), sprint(colRed), sprint(colGreen)) + `"`
		}
	}
	return FormatValue(a.Before) + " -> " + after
}

// FormatValue renders a JSON-shaped value as HCL would write it, cutting
// long strings (data URIs) so a plan stays readable.
func FormatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case secrets.Value:
		return secrets.Text
	case string:
		if len(x) > 120 {
			return strconv.Quote(x[:60] + fmt.Sprintf("… (%d bytes)", len(x)))
		}
		return strconv.Quote(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = FormatValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case json.Number:
		return string(x) // what json.Marshal would write, without its reflection
	case bool:
		return strconv.FormatBool(x)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + " = " + FormatValue(x[k])
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		return string(b)
	}
}

// summaryLine is the plan's closing line, e.g.
// "Plan: 3 to generate (files: 6 images, 1 video), 1 to re-download, 1 to move, 0 to delete."
// The count before the brackets is of generations (what is paid for); the
// brackets count the files they make, which differ whenever a request asks
// for several outputs, so they say "files".
func summaryLine(p *plans.Plan) string {
	s := p.Summary()
	waiting := ""
	if s.PossiblyPaid > 0 {
		waiting = fmt.Sprintf("%d possibly paid for, waiting for your decision (nothing is sent for %s)", s.PossiblyPaid, map[bool]string{true: "it", false: "them"}[s.PossiblyPaid == 1])
	}
	if s.Refused > 0 {
		if waiting != "" {
			waiting += "; "
		}
		waiting += fmt.Sprintf("%d refused by the provider for its content, waiting for a change of its request", s.Refused)
	}
	if !p.HasChanges() {
		if waiting != "" {
			return "No changes apply would make; " + waiting + "."
		}
		return "No changes. Your media matches the configuration."
	}
	line := fmt.Sprintf("Plan: %d to generate (files: %d image%s, %d video%s), %d to re-download, %d to move, %d to delete",
		s.Generate, s.Images, words.Plural(s.Images), s.Videos, words.Plural(s.Videos), s.Redownload, s.Move, s.Delete)
	if s.Upload > 0 {
		line += fmt.Sprintf(", %d to upload", s.Upload)
	}
	if s.Resume > 0 {
		line += fmt.Sprintf(", %d to resume", s.Resume)
	}
	if s.Restore > 0 {
		line += fmt.Sprintf(", %d to restore", s.Restore)
	}
	if waiting != "" {
		line += "; " + waiting
	}
	return line + "."
}

// In the plan document, a value that derives from a sensitive variable is
// the string sensitiveText, and the change lists the attribute's name in
// "sensitive".

func sprint(c *color.Color) func(string) string {
	return func(s string) string { return c.Sprint(s) }
}
