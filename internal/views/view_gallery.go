package views

import (
	"fmt"

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
	if page.Missing > 0 {
		fmt.Fprintf(v.Stdout, "%d output file%s missing from disk; run 'genform apply' to download %s again.\n",
			page.Missing, words.Plural(page.Missing), map[bool]string{true: "it", false: "them"}[page.Missing == 1])
	}
	if page.Linked {
		fmt.Fprintln(v.Stdout, "The page links to the files by relative path: keep it where it is, or copy it with them.")
	}
}
