package views

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/formats/jsonproviders"
	"github.com/genform/genform/internal/schema"
	"github.com/genform/genform/internal/words"
)

// Providers is the view of genform providers.
type Providers interface {
	// Providers shows every provider of ps: what its models make and
	// take.
	Providers(ps []*schema.Provider) error
}

// NewProviders is providers' view in format f: Human, or JSON (the
// providers document).
func NewProviders(s *Streams, f Format) Providers {
	if f == JSON {
		return providersJSON{s}
	}
	return providersHuman{s}
}

type providersHuman struct{ *Streams }

func (v providersHuman) Providers(ps []*schema.Provider) error {
	writeProviders(v.Stdout, ps)
	return nil
}

type providersJSON struct{ *Streams }

func (v providersJSON) Providers(ps []*schema.Provider) error {
	return jsonproviders.Write(v.Stdout, ps)
}

// providerFact is one line of what genform providers says of a provider.
type providerFact struct{ label, value string }

// providerFacts are what genform providers says of p, in order: the text
// and the table in the docs are both made of them, so they agree.
func providerFacts(p *schema.Provider) []providerFact {
	return []providerFact{
		{"makes", kindsText(p.Kinds())},
		{"seed", takenBy(p, schema.Seed)},
		{"negative prompt", takenBy(p, schema.NegativePrompt)},
		{"key frames", keyFrames(p)},
		{"durations", durations(p)},
		{"sizes", sizes(p)},
		{"source images", sourceForms(p)},
		{"retirements", retirements(p)},
		{"lost create", lostCreate(p)},
		{"cancel", yesNo(p.Cancel)},
		{"output URLs", p.URLLifetime},
		{"default limits", limitsText(p.Limits)},
		{"key variable", p.KeyEnv},
	}
}

// writeProviders prints every provider genform speaks, with what its models
// make and take, for genform providers.
func writeProviders(w io.Writer, ps []*schema.Provider) {
	for i, p := range ps {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s (provider %q, %s)\n", colBold.Sprint(p.Title), p.Name, p.BaseURL)
		for _, f := range providerFacts(p) {
			fmt.Fprintf(w, "  %-16s %s\n", f.label+":", f.value)
		}
		fmt.Fprintln(w, "  models:")
		for _, m := range p.ListedModels() {
			id := m.ID
			if id == "" {
				id = "any other model"
			}
			fmt.Fprintf(w, "    %s (%s): %s\n", id, kindsText(m.Kinds), strings.Join(m.Attrs, ", "))
			if l := m.Lifecycle(); l != "" {
				fmt.Fprintf(w, "      %s\n", l)
			}
		}
	}
}

// ProvidersMarkdown is the table of the providers for docs/providers.md:
// a row a provider, a column a fact.
func ProvidersMarkdown(w io.Writer, ps []*schema.Provider) {
	if len(ps) == 0 {
		return
	}
	head := []string{"Provider"}
	for _, f := range providerFacts(ps[0]) {
		head = append(head, strings.ToUpper(f.label[:1])+f.label[1:])
	}
	fmt.Fprintf(w, "| %s |\n", strings.Join(head, " | "))
	fmt.Fprintf(w, "|%s\n", strings.Repeat(" --- |", len(head)))
	for _, p := range ps {
		row := []string{fmt.Sprintf("%s (`%s`)", p.Title, p.Name)}
		for _, f := range providerFacts(p) {
			row = append(row, strings.ReplaceAll(f.value, "|", `\|`))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
}

func kindsText(ks []addrs.Kind) string {
	var names []string
	for _, k := range ks {
		names = append(names, k.String()+"s")
	}
	return strings.Join(names, " and ")
}

// takenBy names the listed models that take the common attribute name.
func takenBy(p *schema.Provider, name string) string {
	ids := p.Taking(name)
	if len(ids) == 0 {
		if p.General.Takes(name) {
			return "every model"
		}
		return "no"
	}
	return strings.Join(ids, ", ")
}

// keyFrames names how many key frames the video models take: source
// images an image model edits from (OpenAI's) are not key frames.
func keyFrames(p *schema.Provider) string {
	return grouped(p, "no", func(c schema.Caps) string {
		if c.MaxSourceImages == 0 || !c.Makes(addrs.Video) {
			return ""
		}
		return fmt.Sprintf("up to %d", c.MaxSourceImages)
	})
}

func durations(p *schema.Provider) string {
	return grouped(p, "no videos of a set length", func(c schema.Caps) string {
		if len(c.Durations) == 0 {
			return ""
		}
		return joinInts(c.Durations) + " s"
	})
}

func sizes(p *schema.Provider) string {
	return grouped(p, "the model's own", func(c schema.Caps) string { return strings.Join(c.AspectRatios, ", ") })
}

// grouped says what of each listed model of p fact tells ("" for
// nothing), naming after each value the models it is true of; none
// when no model has one.
func grouped(p *schema.Provider, none string, fact func(schema.Caps) string) string {
	var values []string
	models := map[string][]string{}
	for _, id := range p.ModelIDs() {
		v := fact(p.Models[id])
		if v == "" {
			continue
		}
		if _, seen := models[v]; !seen {
			values = append(values, v)
		}
		models[v] = append(models[v], id)
	}
	if len(values) == 0 {
		return none
	}
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = v + " (" + strings.Join(models[v], ", ") + ")"
	}
	return strings.Join(parts, "; ")
}

func sourceForms(p *schema.Provider) string {
	takes := p.General.Takes(schema.SourceImage) || p.General.Takes(schema.SourceImages) ||
		len(p.Taking(schema.SourceImage))+len(p.Taking(schema.SourceImages)) > 0
	switch {
	case !takes:
		return "none"
	case p.SourceURLsOnly:
		return "URLs only"
	}
	return "URLs or data: URIs"
}

// retirements names the listed models whose provider announced their
// shutdown, with their dates and successors; none when it announced
// none.
func retirements(p *schema.Provider) string {
	return grouped(p, "none announced", schema.Caps.Lifecycle)
}

func lostCreate(p *schema.Provider) string {
	switch {
	case p.Recovery != schema.RecoverNone:
		return "found again " + p.Recovery.String()
	case p.InlineOutputs:
		return "not found again, and nothing to adopt: it stays possibly paid until apply -replace pays again"
	}
	return "not found again: it stays possibly paid (adopt it with import)"
}
func limitsText(l schema.Limits) string {
	var parts []string
	switch {
	case l.Parallelism > 0 && l.MaxParallelism > l.Parallelism:
		parts = append(parts, fmt.Sprintf("%d job%s at once, up to %d on the top tier", l.Parallelism, words.Plural(l.Parallelism), l.MaxParallelism))
	case l.Parallelism > 0:
		parts = append(parts, fmt.Sprintf("%d job%s at once", l.Parallelism, words.Plural(l.Parallelism)))
	default:
		parts = append(parts, "no documented concurrency limit")
	}
	if l.RequestsPerMinute > 0 {
		parts = append(parts, fmt.Sprintf("%d requests a minute", l.RequestsPerMinute))
	} else {
		parts = append(parts, "no documented request rate")
	}
	return strings.Join(parts, "; ")
}

func joinInts(ns []int64) string {
	ns = slices.Sorted(slices.Values(ns))
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.FormatInt(n, 10)
	}
	if len(s) > 1 {
		return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
	}
	return strings.Join(s, ", ")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
