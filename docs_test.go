package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/genform/genform/internal/catalog"
	"github.com/genform/genform/internal/views"
)

// TestDocsLinks checks the project's Markdown files as GitHub shows them:
// every relative link leads to a file or folder of the repository, every
// #anchor to a heading of the page it names, and the README links every
// page of docs/. A page moved or a heading renamed breaks the links to it
// silently otherwise.
func TestDocsLinks(t *testing.T) {
	pages := markdownFiles(t)
	anchors := map[string]map[string]bool{} // page -> its heading anchors
	links := map[string][]string{}          // page -> its link targets
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		anchors[p], links[p] = scanMarkdown(string(b))
	}

	linked := map[string]bool{} // pages the README links to
	for _, p := range pages {
		for _, target := range links[p] {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			dest := p // a bare #anchor is in the page itself
			if file != "" {
				dest = filepath.Join(filepath.Dir(p), filepath.FromSlash(file))
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: link %q: %s does not exist", p, target, dest)
					continue
				}
			}
			if p == "README.md" {
				linked[dest] = true
			}
			if anchor == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			if _, ok := anchors[dest]; !ok {
				t.Errorf("%s: link %q: %s is not one of the pages checked", p, target, dest)
				continue
			}
			if !anchors[dest][anchor] {
				t.Errorf("%s: link %q: %s has no heading with anchor #%s", p, target, dest, anchor)
			}
		}
	}

	docs, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("no pages in docs/")
	}
	for _, d := range docs {
		if !linked[d] {
			t.Errorf("README.md does not link %s: every page of docs/ belongs in its \"Where to go next\"", d)
		}
	}
}

// markdownFiles lists the Markdown files a reader of the repository sees:
// all but those under testdata (golden outputs) and hidden folders.
func markdownFiles(t *testing.T) []string {
	var pages []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			pages = append(pages, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pages, "README.md") {
		t.Fatal("README.md not found")
	}
	return pages
}

var (
	fenceRE   = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})")
	headingRE = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	codeRE    = regexp.MustCompile("`+[^`]*`+")
	linkRE    = regexp.MustCompile(`!?\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
)

// scanMarkdown returns the anchors of a page's headings and the targets of
// its inline links and images, leaving out what is inside code.
func scanMarkdown(text string) (anchors map[string]bool, targets []string) {
	anchors = map[string]bool{}
	seen := map[string]int{}
	fence := ""
	var prose []string // the lines outside code blocks
	for _, line := range strings.Split(text, "\n") {
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			switch {
			case fence == "":
				fence = m[1]
				prose = append(prose, "")
				continue
			case m[1][0] == fence[0] && len(m[1]) >= len(fence) && strings.TrimSpace(line) == m[1]:
				fence = ""
				continue
			}
		}
		if fence != "" {
			continue
		}
		prose = append(prose, line)
		if m := headingRE.FindStringSubmatch(line); m != nil {
			a := githubAnchor(m[2])
			if n := seen[a]; n > 0 {
				anchors[fmt.Sprintf("%s-%d", a, n)] = true
			} else {
				anchors[a] = true
			}
			seen[a]++
		}
	}
	// Paragraph by paragraph, so that a link whose text wraps is found.
	for _, para := range strings.Split(strings.Join(prose, "\n"), "\n\n") {
		para = codeRE.ReplaceAllString(para, "")
		for _, m := range linkRE.FindAllStringSubmatch(para, -1) {
			targets = append(targets, m[2])
		}
	}
	return anchors, targets
}

// githubAnchor is the anchor GitHub gives a heading: its text without
// Markdown (code marks, emphasis, link targets), lower case, with every
// character but letters, digits, '_', '-' and spaces removed, and spaces
// turned into hyphens.
func githubAnchor(heading string) string {
	heading = linkRE.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestGithubAnchor(t *testing.T) {
	for heading, want := range map[string]string{
		"The two commands":                                         "the-two-commands",
		"What `make test` needs and installs":                      "what-make-test-needs-and-installs",
		"`genform` (optional, at most one)":                        "genform-optional-at-most-one",
		"`image \"NAME\"` (text to image)":                         "image-name-text-to-image",
		"The service's rules":                                      "the-services-rules",
		"Moving a state: `genform init`":                           "moving-a-state-genform-init",
		"History: every generation paid for comes back at no cost": "history-every-generation-paid-for-comes-back-at-no-cost",
		"Side by side with OpenTofu":                               "side-by-side-with-opentofu",
		"Retries and the create rule":                              "retries-and-the-create-rule",
		"Key-frame conditioning: `POST /v1/jobs/gen2/afc`":         "key-frame-conditioning-post-v1jobsgen2afc",
		"state_file and [links](x.md)":                             "state_file-and-links",
	} {
		if got := githubAnchor(heading); got != want {
			t.Errorf("githubAnchor(%q) = %q, want %q", heading, got, want)
		}
	}
}

var updateDocs = flag.Bool("update-docs", false, "write the tables of docs/ that are generated from the code")

// The table of providers in docs/providers.md is what genform providers
// says, made from the same tables: a provider added or changed in the
// code and not in the docs (or the other way round) fails here.
func TestProvidersTableMatchesTheCode(t *testing.T) {
	const begin, end = "<!-- begin: genform providers -->\n", "<!-- end: genform providers -->"
	b, err := os.ReadFile(filepath.Join("docs", "providers.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("docs/providers.md has no table between %q and %q", begin, end)
	}
	var want strings.Builder
	views.ProvidersMarkdown(&want, catalog.Providers())
	got := doc[i+len(begin) : j]
	if got != want.String() && *updateDocs {
		doc = doc[:i+len(begin)] + want.String() + doc[j:]
		if err := os.WriteFile(filepath.Join("docs", "providers.md"), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != want.String() {
		t.Errorf("the table of docs/providers.md differs from what the code says; run go test -run TestProvidersTableMatchesTheCode -update-docs . to write it:\n%s", want.String())
	}
}
