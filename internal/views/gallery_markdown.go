package views

import (
	"fmt"
	"strings"

	"github.com/genform/genform/internal/gallery"
	"github.com/genform/genform/internal/thumbnail"
	"github.com/genform/genform/internal/worddiff"
	"github.com/genform/genform/internal/words"
)

// galleryMarker is the gallery comment's first line: a bot that posts it
// finds its earlier comment by it and edits it in place, as the plan's.
const galleryMarker = "<!-- genform:gallery -->"

// commentLimit is the most characters a code host takes in a pull
// request's comment (GitHub's 65,536); the comment stays under
// markdownLimit, leaving room for what a CI recipe adds around it.
const commentLimit = 65536

// comparisonMarkdown is comparison c as a pull request's comment: the
// marker, a summary with who can open the links and until when, then for
// each instance that differs its pictures before and after (thumbnails
// linking to the files, a column per output so a reviewer can name one),
// its prompt's word diff, seed, model and cost. Past markdownLimit the
// rest are listed by address, with how many more there are.
func comparisonMarkdown(c *gallery.Comparison) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n### genform gallery: %s against %s\n\n", galleryMarker, mdCode(c.Selected), mdCode(c.Base))
	n := len(c.Differences)
	if n == 0 {
		fmt.Fprintf(&b, "**No instance's outputs differ from %s.**\n", mdCode(c.Base))
		return b.String()
	}
	fmt.Fprintf(&b, "**%d instance%s differ%s from %s: %d new, %d changed, %d deleted.**\n\n",
		n, words.Plural(n), map[bool]string{true: "s", false: ""}[n == 1], mdCode(c.Base), c.New, c.Changed, c.Deleted)
	fmt.Fprintf(&b, "Each picture is a thumbnail (at most %d pixels on its long side) linking to its file in the object store. %s\n", thumbnail.MaxSide, mdEscape(c.LinkNote()))
	var rest []*gallery.Difference
	for i, d := range c.Differences {
		section := markdownDifference(d)
		left := n - i - 1
		// Room for this section, and the list of the rest were this the
		// last one shown.
		reserve := 0
		if left > 0 {
			reserve = 4000
		}
		if b.Len()+len(section)+reserve > markdownLimit {
			rest = c.Differences[i:]
			break
		}
		b.WriteString(section)
	}
	if len(rest) > 0 {
		fmt.Fprintf(&b, "\n_%d more instance%s differ%s, not shown to keep this comment under %d characters", len(rest), words.Plural(len(rest)),
			map[bool]string{true: "s", false: ""}[len(rest) == 1], commentLimit)
		b.WriteString(" (`genform gallery -base=" + strings.ReplaceAll(c.Base, "`", "'") + "` writes a page of them all):_ ")
		shown := 0
		for _, d := range rest {
			item := mdCode(d.Addr) + " (" + d.Change + ")"
			if b.Len()+len(item)+80 > markdownLimit {
				break
			}
			if shown > 0 {
				b.WriteString(", ")
			}
			b.WriteString(item)
			shown++
		}
		if shown < len(rest) {
			fmt.Fprintf(&b, " … and %d more", len(rest)-shown)
		}
		b.WriteString(".\n")
	}
	return b.String()
}

// markdownDifference is one instance's section.
func markdownDifference(d *gallery.Difference) string {
	var s strings.Builder
	head := mdCode(d.Addr) + " · " + d.Change
	if d.Cost != "" {
		head += " · " + mdEscape(d.Cost)
	}
	fmt.Fprintf(&s, "\n#### %s\n\n", head)
	cols := 0
	for _, side := range []*gallery.Side{d.Before, d.After} {
		if side != nil {
			cols = max(cols, len(side.Pictures))
		}
	}
	cols = max(cols, 1)
	s.WriteString("| |")
	for i := range cols {
		fmt.Fprintf(&s, " #%d |", i)
	}
	s.WriteString("\n|---|")
	s.WriteString(strings.Repeat(":---:|", cols))
	s.WriteString("\n")
	var problems []string
	row := func(label string, side *gallery.Side, none string) {
		fmt.Fprintf(&s, "| **%s** |", label)
		for i := range cols {
			switch {
			case side == nil:
				if i == 0 {
					fmt.Fprintf(&s, " _%s_ |", none)
				} else {
					s.WriteString(" |")
				}
			case i >= len(side.Pictures):
				s.WriteString(" – |")
			default:
				p := side.Pictures[i]
				fmt.Fprintf(&s, " %s |", mdPicture(d.Addr+" "+label+" "+p.Label(), p))
				if p.Problem != "" {
					problems = append(problems, fmt.Sprintf("%s %s: %s", label, p.Label(), mdEscape(p.Problem)))
				}
			}
		}
		s.WriteString("\n")
	}
	row("before", d.Before, "new")
	row("after", d.After, "deleted")
	s.WriteString("\n")
	for _, p := range problems {
		fmt.Fprintf(&s, "> %s\n", p)
	}
	if len(problems) > 0 {
		s.WriteString("\n")
	}
	now, was := d.After, d.Before
	if now == nil {
		now, was = d.Before, nil
	}
	switch {
	case d.PromptDiff != nil:
		fmt.Fprintf(&s, "- **prompt:** %s\n", mdWords(d.PromptDiff))
	case now.Prompt != "":
		fmt.Fprintf(&s, "- **prompt:** %s\n", mdEscape(now.Prompt))
	}
	if now.NegativePrompt != "" || was != nil && was.NegativePrompt != "" {
		neg := mdEscape(now.NegativePrompt)
		if was != nil && was.NegativePrompt != now.NegativePrompt {
			neg = mdWords(worddiff.Diff(was.NegativePrompt, now.NegativePrompt))
		}
		fmt.Fprintf(&s, "- **negative prompt:** %s\n", neg)
	}
	fmt.Fprintf(&s, "- **seed:** %s\n", changed(was, now, func(x *gallery.Side) string { return x.Seed }, mdEscape))
	fmt.Fprintf(&s, "- **model:** %s\n", changed(was, now, func(x *gallery.Side) string { return x.Model }, mdCode))
	if now.Error != "" {
		fmt.Fprintf(&s, "- **error:** %s\n", mdEscape(now.Error))
	}
	if d.Cost != "" {
		fmt.Fprintf(&s, "- **cost:** %s\n", mdEscape(d.CostNote()))
	}
	return s.String()
}

// changed is a value of now, with the one it replaces when was had
// another: "43 (was 42)".
func changed(was, now *gallery.Side, of func(*gallery.Side) string, format func(string) string) string {
	v := format(of(now))
	if was != nil && of(was) != of(now) {
		v += " (was " + format(of(was)) + ")"
	}
	return v
}

// mdWords is a word diff, removed words struck through and added ones
// in bold.
func mdWords(ops []worddiff.Op) string {
	return worddiff.Render(ops, func(s string) string {
		return "~~" + mdEscape(strings.TrimSuffix(strings.TrimPrefix(s, "[-"), "-]")) + "~~"
	}, func(s string) string {
		return "**" + mdEscape(strings.TrimSuffix(strings.TrimPrefix(s, "{+"), "+}")) + "**"
	})
}

// mdPicture is a picture in a table cell: its thumbnail linking to its
// file, a link to the file alone when there is no thumbnail, or what
// went wrong.
func mdPicture(alt string, p *gallery.Picture) string {
	alt = strings.NewReplacer("[", "(", "]", ")", "|", "/").Replace(alt)
	switch {
	case p.Thumb != "":
		return fmt.Sprintf("[![%s](%s)](%s)", alt, mdURL(p.Thumb), mdURL(p.Full))
	case p.Full != "" && p.Video:
		return fmt.Sprintf("[▶ video %s](%s)", p.Label(), mdURL(p.Full))
	case p.Full != "":
		return fmt.Sprintf("[file %s](%s)", p.Label(), mdURL(p.Full))
	default:
		return "_not shown_"
	}
}

// mdURL keeps a link's URL from ending the Markdown link early or
// breaking the table's row.
func mdURL(u string) string {
	return strings.NewReplacer("(", "%28", ")", "%29", "|", "%7C", " ", "%20", "<", "%3C", ">", "%3E").Replace(u)
}
