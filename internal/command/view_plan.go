package command

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/fatih/color"
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

func actionVerb(c *plans.Change) string {
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

// renderPlan writes the human plan.
func renderPlan(out io.Writer, p *plans.Plan, serviceLine string) {
	// Streamed through one buffer: a plan of thousands of changes is tens
	// of thousands of small writes, each a system call unbuffered, and is
	// never held whole in memory.
	w := bufio.NewWriterSize(out, 64<<10)
	defer w.Flush()
	fmt.Fprintf(w, "Service: %s\n\n", serviceLine)
	if !p.HasChanges() {
		fmt.Fprintln(w, colGreen.Sprint(colBold.Sprint("No changes.")+" Your media matches the configuration."))
		return
	}
	fmt.Fprintln(w, "genform will perform the following actions:")
	var warnings []string
	for _, c := range p.Changes {
		if c.Action == plans.NoOp {
			continue
		}
		fmt.Fprintln(w)
		renderChange(w, p, c)
		for _, wn := range changeWarnings(c) {
			warnings = append(warnings, c.Addr.String()+": "+wn)
		}
	}
	for _, wn := range warnings {
		fmt.Fprintf(w, "\n%s %s\n", colYellow.Sprint(colBold.Sprint("Warning:")), wn)
	}
	fmt.Fprintf(w, "\n%s\n", colBold.Sprint(summaryLine(p)))
	if line := costLine(p); line != "" {
		fmt.Fprintln(w, line)
	}
}

func renderChange(w io.Writer, p *plans.Plan, c *plans.Change) {
	col := actionColor(c.Action)
	kind, name := c.Addr.Resource.Kind, c.Addr.Resource.Name
	fmt.Fprintf(w, "  %s %s", colBold.Sprint("# "+c.Addr.String()), colBold.Sprint(actionVerb(c)))
	if r := reasonText(c); r != "" {
		fmt.Fprintf(w, ": %s", r)
	}
	fmt.Fprintln(w)
	sym := fmt.Sprintf("%3s", actionSymbol(c.Action))
	if c.Action == plans.Delete && len(c.Attrs) == 0 {
		fmt.Fprintf(w, "%s %s %q\n", col.Sprint(sym), kind, name)
		return
	}
	fmt.Fprintf(w, "%s %s %q {\n", col.Sprint(sym), kind, name)
	width := 0
	for _, a := range c.Attrs {
		width = max(width, len(a.Name))
	}
	hidden := 0
	attrs, _, _ := redact(c, sensitiveValue{})
	for _, a := range attrs {
		fmt.Fprintf(w, "      %s %-*s = %s\n", attrSymbol(c, a), width, a.Name, attrValue(c, a))
	}
	if c.Action != plans.Create && c.After != nil {
		hidden = len(c.After) - len(c.Attrs)
	}
	if hidden > 0 {
		fmt.Fprintf(w, "        # (%d unchanged attribute%s hidden)\n", hidden, plural(hidden))
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
	if _, ok := a.Before.(sensitiveValue); ok && !a.Unknown {
		return sensitiveText
	}
	after := formatValue(a.After)
	if a.Unknown {
		after = "(known after apply)"
	}
	if c.Action == plans.Create || a.Before == nil {
		return after
	}
	if a.After == nil && !a.Unknown {
		return formatValue(a.Before) + " -> null"
	}
	if bs, ok := a.Before.(string); ok {
		if as, ok := a.After.(string); ok && (a.Name == "prompt" || a.Name == "negative_prompt") {
			return `"` + renderWordDiff(wordDiff(bs, as), sprint(colRed), sprint(colGreen)) + `"`
		}
	}
	return formatValue(a.Before) + " -> " + after
}

// formatValue renders a JSON-shaped value as HCL would write it, cutting
// long strings (data URIs) so a plan stays readable.
func formatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case sensitiveValue:
		return sensitiveText
	case string:
		if len(x) > 120 {
			return strconv.Quote(x[:60] + fmt.Sprintf("… (%d bytes)", len(x)))
		}
		return strconv.Quote(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = formatValue(e)
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
			parts[i] = k + " = " + formatValue(x[k])
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

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// summaryLine is the plan's closing line, e.g.
// "Plan: 3 to generate (files: 6 images, 1 video), 1 to re-download, 1 to move, 0 to delete."
// The count before the brackets is of generations (what is paid for); the
// brackets count the files they make, which differ whenever a request asks
// for several outputs, so they say "files".
func summaryLine(p *plans.Plan) string {
	s := p.Summary()
	if !p.HasChanges() {
		return "No changes. Your media matches the configuration."
	}
	line := fmt.Sprintf("Plan: %d to generate (files: %d image%s, %d video%s), %d to re-download, %d to move, %d to delete",
		s.Generate, s.Images, plural(s.Images), s.Videos, plural(s.Videos), s.Redownload, s.Move, s.Delete)
	if s.Resume > 0 {
		line += fmt.Sprintf(", %d to resume", s.Resume)
	}
	if s.Restore > 0 {
		line += fmt.Sprintf(", %d to restore", s.Restore)
	}
	return line + "."
}

// planDocument is the public JSON form of a plan (plan -json, show -json
// PLANFILE), format_version "1": fields are only ever added. The engine's
// Plan is not this document; this encoder is what scripts rely on.
type planDocument struct {
	FormatVersion string       `json:"format_version"`
	Service       string       `json:"service"`
	Lineage       string       `json:"lineage,omitempty"`
	Serial        uint64       `json:"serial"`
	Changes       []changeJSON `json:"changes"`
	Summary       summaryJSON  `json:"summary"`
	HasChanges    bool         `json:"has_changes"`
}

// In the plan document, a value that derives from a sensitive variable is
// the string sensitiveText, and the change lists the attribute's name in
// "sensitive".

type changeJSON struct {
	Address         string `json:"address"`
	PreviousAddress string `json:"previous_address,omitempty"`
	Resource        string `json:"resource"`
	Kind            string `json:"kind"`
	Action          string `json:"action"`
	Reason          string `json:"reason,omitempty"`
	ReasonCode      string `json:"reason_code,omitempty"`
	changeValuesJSON
	Warnings []string `json:"warnings,omitempty"`
	// Cost is the change's estimate as a decimal string, present when
	// the configuration sets prices and the change makes a generation
	// ("unknown" when its kind has no price).
	Cost string `json:"cost,omitempty"`
}

// changeValuesJSON is what the plan document and the saved plan file say
// alike of a change: its attributes and where its files go. The values of
// sensitive attributes are whatever placeholder the encoder chose.
type changeValuesJSON struct {
	Attrs        []attrChangeJSON `json:"attributes,omitempty"`
	Before       map[string]any   `json:"before,omitempty"`
	After        map[string]any   `json:"after,omitempty"`
	AfterUnknown []string         `json:"after_unknown,omitempty"`
	Fingerprint  string           `json:"fingerprint,omitempty"`
	Media        int              `json:"media"`
	Seconds      int              `json:"seconds,omitempty"`
	Dir          string           `json:"dir,omitempty"`
	GenerationID string           `json:"generation_id,omitempty"`
	Redownload   []int            `json:"redownload,omitempty"`
	Sensitive    []string         `json:"sensitive,omitempty"`
}

// changeValues encodes c's values, sensitive ones as placeholder.
func changeValues(c *plans.Change, placeholder any) changeValuesJSON {
	attrs, before, after := redact(c, placeholder)
	v := changeValuesJSON{
		Before:       before,
		After:        after,
		AfterUnknown: c.AfterUnknown,
		Fingerprint:  c.Fingerprint,
		Media:        c.Media,
		Seconds:      c.Seconds,
		Dir:          c.Dir,
		GenerationID: c.GenerationID,
		Redownload:   c.Redownload,
		Sensitive:    c.Sensitive,
	}
	for _, a := range attrs {
		v.Attrs = append(v.Attrs, attrChangeJSON(a))
	}
	return v
}

// values is the change that v encodes, as far as v tells.
func (v changeValuesJSON) values(c *plans.Change) {
	c.Before, c.After, c.AfterUnknown = v.Before, v.After, v.AfterUnknown
	c.Fingerprint, c.Media, c.Seconds, c.Dir = v.Fingerprint, v.Media, v.Seconds, v.Dir
	c.GenerationID, c.Redownload, c.Sensitive = v.GenerationID, v.Redownload, v.Sensitive
	for _, a := range v.Attrs {
		c.Attrs = append(c.Attrs, plans.AttrChange(a))
	}
}

type attrChangeJSON struct {
	Name    string `json:"name"`
	Before  any    `json:"before,omitempty"`
	After   any    `json:"after,omitempty"`
	Unknown bool   `json:"unknown,omitempty"`
}

type summaryJSON struct {
	Generate   int `json:"generate"`
	Images     int `json:"images"`
	Videos     int `json:"videos"`
	Redownload int `json:"redownload"`
	Move       int `json:"move"`
	Resume     int `json:"resume"`
	Restore    int `json:"restore"`
	Delete     int `json:"delete"`
	NoOp       int `json:"no_op"`
	// Cost is the estimate, present only when the configuration sets
	// prices.
	Cost *costJSON `json:"cost,omitempty"`
}

// jsonFormatVersion is the version of the public JSON documents: the plan
// and state documents (show -json, plan -json).
const jsonFormatVersion = "1"

// summaryDocument is the plan document's summary.
func summaryDocument(p *plans.Plan) summaryJSON {
	s := p.Summary()
	return summaryJSON{
		Generate: s.Generate, Images: s.Images, Videos: s.Videos, Redownload: s.Redownload,
		Move: s.Move, Resume: s.Resume, Restore: s.Restore, Delete: s.Delete, NoOp: s.NoOp,
		Cost: costDocument(p),
	}
}

func renderPlanJSON(w io.Writer, p *plans.Plan) error {
	doc := planDocument{
		FormatVersion: jsonFormatVersion,
		Service:       p.Service,
		Lineage:       p.Lineage,
		Serial:        p.Serial,
		Changes:       make([]changeJSON, 0, len(p.Changes)),
		Summary:       summaryDocument(p),
		HasChanges:    p.HasChanges(),
	}
	for _, c := range p.Changes {
		doc.Changes = append(doc.Changes, changeDocument(p, c))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// reasonCode is the change's reason code, "" for a no-op.
func reasonCode(c *plans.Change) string {
	if c.Reason == nil {
		return ""
	}
	return c.Reason.Code.String()
}

// changeDocument is one change of the plan document.
func changeDocument(p *plans.Plan, c *plans.Change) changeJSON {
	cj := changeJSON{
		Address:          c.Addr.String(),
		Resource:         c.Addr.Resource.String(),
		Kind:             c.Kind().String(),
		Action:           c.Action.String(),
		Reason:           reasonText(c),
		ReasonCode:       reasonCode(c),
		changeValuesJSON: changeValues(c, sensitiveText),
		Warnings:         changeWarnings(c),
	}
	if p.Prices != nil && c.Action.Generates() {
		if amount, ok := c.Cost(p.Prices); ok {
			cj.Cost = amount.String()
		} else {
			cj.Cost = "unknown"
		}
	}
	if !c.PrevAddr.IsZero() {
		cj.PreviousAddress = c.PrevAddr.String()
	}
	return cj
}

func sprint(c *color.Color) func(string) string {
	return func(s string) string { return c.Sprint(s) }
}
