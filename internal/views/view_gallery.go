package views

import (
	"fmt"
	"io"

	"github.com/genform/genform/internal/atomicfile"

	"github.com/genform/genform/internal/gallery"
	"github.com/genform/genform/internal/words"
)

// Gallery is the view of genform gallery.
type Gallery interface {
	// Written says that page was written to out, size bytes in all, and
	// what a reader of it should know.
	Written(out string, page *gallery.Page, size int64)
}

// NewGallery is gallery's view.
func NewGallery(s *Streams) Gallery { return galleryHuman{s} }

type galleryHuman struct{ *Streams }

func (v galleryHuman) Written(out string, page *gallery.Page, size int64) {
	fmt.Fprintf(v.Stdout, "Gallery written to %s: %d resource%s, %d output%s (%s).\n",
		out, len(page.Resources), words.Plural(len(page.Resources)), page.Outputs, words.Plural(page.Outputs), gallery.ByteSize(size))
	if page.Replaced > 0 || page.ChangedOnly {
		fmt.Fprintf(v.Stdout, "%d resource%s generated anew since serial %d, shown beside the generation%s %s replaced.\n",
			page.Replaced, words.Plural(page.Replaced), page.Since, words.Plural(page.Replaced), map[bool]string{true: "it", false: "they"}[page.Replaced == 1])
	}
	if page.Added > 0 {
		fmt.Fprintf(v.Stdout, "%d new resource%s generated since serial %d, marked new.\n", page.Added, words.Plural(page.Added), page.Since)
	}
	if page.Missing > 0 {
		fmt.Fprintf(v.Stdout, "%d output file%s missing from disk; run 'genform apply' to download %s again.\n",
			page.Missing, words.Plural(page.Missing), map[bool]string{true: "it", false: "them"}[page.Missing == 1])
	}
	if page.Linked {
		fmt.Fprintln(v.Stdout, "The page links to the files by relative path: keep it where it is, or copy it with them.")
	}
}

// GalleryComparison is the view of genform gallery -base: the selected
// workspace compared with another.
type GalleryComparison interface {
	// Compared writes comparison c to out ("" is the format's default:
	// standard output for the comment, gallery.html for the page), then
	// says on standard error what could not be shown.
	Compared(out string, c *gallery.Comparison) error
}

// NewGalleryComparison is gallery -base's view: the pull request's
// comment with Markdown, the page otherwise.
func NewGalleryComparison(s *Streams, f Format) GalleryComparison {
	if f == Markdown {
		return comparisonComment{s}
	}
	return comparisonPage{s}
}

type comparisonComment struct{ *Streams }

func (v comparisonComment) Compared(out string, c *gallery.Comparison) error {
	text := comparisonMarkdown(c)
	if out == "" {
		if _, err := io.WriteString(v.Stdout, text); err != nil {
			return err
		}
	} else {
		if err := atomicfile.WriteFile(out, []byte(text), 0o644); err != nil {
			return fmt.Errorf("writing the comment: %w", err)
		}
		fmt.Fprintf(v.Stdout, "Comment written to %s: %d instance%s differ%s from %s.\n", out, len(c.Differences), words.Plural(len(c.Differences)),
			map[bool]string{true: "s", false: ""}[len(c.Differences) == 1], c.Base)
	}
	v.problems(c)
	return nil
}

type comparisonPage struct{ *Streams }

func (v comparisonPage) Compared(out string, c *gallery.Comparison) error {
	if out == "" {
		out = "gallery.html"
	}
	size, err := gallery.WriteComparison(out, c)
	if err != nil {
		return fmt.Errorf("writing the gallery: %w", err)
	}
	fmt.Fprintf(v.Stdout, "Gallery written to %s: %s against %s, %d instance%s differ%s (%s).\n", out, c.Selected, c.Base,
		len(c.Differences), words.Plural(len(c.Differences)), map[bool]string{true: "s", false: ""}[len(c.Differences) == 1], gallery.ByteSize(size))
	v.problems(c)
	return nil
}

// problems warns of each picture the comparison could not show.
func (s *Streams) problems(c *gallery.Comparison) {
	for _, p := range c.Problems {
		fmt.Fprintf(s.Stderr, "Warning: %s\n", p)
	}
}
