package gallery

import (
	"fmt"
	"html/template"
	"mime"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/secrets"
	"github.com/genform/genform/internal/worddiff"
	"github.com/genform/genform/statefile"
)

// This file holds the comparison of two workspaces' states, a pull
// request's preview against the workspace it merges into: the instances
// whose outputs differ, each with what it was and what it is. Package
// operation links the pictures (thumbnails and outputs in the object
// store) and prices the generations; package views writes the
// comparison as a pull request's comment, and WriteComparison as a page.

// Comparison is what the selected workspace changed against a base.
type Comparison struct {
	// Selected and Base name the two workspaces.
	Selected, Base string
	// Differences are the instances whose outputs differ, in address
	// order.
	Differences []*Difference
	// New, Changed and Deleted count them by Change.
	New, Changed, Deleted int
	// Presign is how long the links stay valid, 0 when they are public
	// (Public names the base they are under).
	Presign time.Duration
	Public  string
	// Written is when the comparison was made; the links expire Presign
	// after it.
	Written time.Time
	// Problems lists what could not be shown as it should (an output the
	// store lacks and this machine does not have, a video without a
	// still frame), one line each, for the command's warnings.
	Problems []string
}

// The changes of an instance.
const (
	ChangeNew     = "new"
	ChangeChanged = "changed"
	ChangeDeleted = "deleted"
)

// Difference is one instance whose outputs differ between the two
// workspaces.
type Difference struct {
	Addr string
	Kind string // "image" or "video"
	// Change is ChangeNew, ChangeChanged or ChangeDeleted.
	Change string
	// Before is the base's generation, After the selected workspace's;
	// nil where the instance has none.
	Before, After *Side
	// PromptDiff is the prompt's change word by word, when both have a
	// prompt and they differ.
	PromptDiff []worddiff.Op
	// Cost is what After's generation costs at the configured prices, as
	// the plan prices it ("0.08 USD"), "unpriced" when no price is set for
	// it, "" for a deletion.
	Cost string
}

// Side is one workspace's generation of an instance.
type Side struct {
	Prompt, NegativePrompt string
	Seed                   string // "random" when the service chose it
	// Model is the endpoint the generation was made at, and the model
	// version when the provider said.
	Model        string
	GenerationID string
	Status       string
	Error        string
	Pictures     []*Picture
	// Record is the generation as the state holds it, for the operation
	// that links and prices it.
	Record *statefile.Resource `json:"-"`
}

// Picture is one output of a generation, as a reviewer sees it: a
// thumbnail linking to the file.
type Picture struct {
	Index       int
	SHA256      string
	ContentType string
	Video       bool
	Path        string
	// Thumb is the thumbnail's link and Full the output's; "" when there
	// is none (Problem says why).
	Thumb, Full string
	// Problem says why the picture is not shown as it should be.
	Problem string
}

// Label names the picture for a reviewer: "#2", the index they can say
// ("the third" is #2, counted from #0 as the files are).
func (p *Picture) Label() string { return "#" + strconv.Itoa(p.Index) }

// Compare lists the instances whose recorded outputs (their sha256s, in
// order) differ between base and selected: new in selected, changed, or
// deleted from it. What h hides shows as (sensitive).
func Compare(baseName, selectedName string, base, selected *statefile.Snapshot, h *secrets.Hider) *Comparison {
	c := &Comparison{Base: baseName, Selected: selectedName, Written: time.Now().UTC()}
	seen := map[addrs.Instance]bool{}
	for a := range base.Resources {
		seen[a] = true
	}
	for a := range selected.Resources {
		seen[a] = true
	}
	for _, a := range addrs.SortedKeys(seen) {
		before, after := base.Resources[a], selected.Resources[a]
		if before != nil && after != nil && slices.Equal(hashes(before), hashes(after)) {
			continue
		}
		d := &Difference{Addr: a.String(), Kind: a.Resource.Kind.String()}
		switch {
		case before == nil:
			d.Change = ChangeNew
			c.New++
		case after == nil:
			d.Change = ChangeDeleted
			c.Deleted++
		default:
			d.Change = ChangeChanged
			c.Changed++
		}
		if before != nil {
			d.Before = sideOf(before, h)
		}
		if after != nil {
			d.After = sideOf(after, h)
		}
		if d.Before != nil && d.After != nil && d.Before.Prompt != d.After.Prompt && d.Before.Prompt != "" && d.After.Prompt != "" {
			d.PromptDiff = worddiff.Diff(d.Before.Prompt, d.After.Prompt)
		}
		c.Differences = append(c.Differences, d)
	}
	return c
}

// hashes are the sha256s of rec's outputs, in their order.
func hashes(rec *statefile.Resource) []string {
	out := make([]string, len(rec.Outputs))
	for i, o := range rec.Outputs {
		out[i] = o.SHA256
	}
	return out
}

func sideOf(rec *statefile.Resource, h *secrets.Hider) *Side {
	r := galleryResourceOf(rec, h.Of(rec))
	s := &Side{
		Prompt: r.Prompt, NegativePrompt: r.NegativePrompt, Seed: r.Seed,
		Model: rec.Endpoint.String(), GenerationID: rec.GenerationID, Status: r.Status, Error: r.Error,
		Record: rec,
	}
	if rec.Version != "" {
		s.Model += " (version " + rec.Version + ")"
	}
	for _, o := range rec.Outputs {
		p := &Picture{Index: o.Index, SHA256: o.SHA256, Path: o.Path}
		p.ContentType = pictureType(o.ContentType, o.Path)
		p.Video = isVideo(p.ContentType)
		s.Pictures = append(s.Pictures, p)
	}
	return s
}

// isVideo reports whether a file of type ct is a video a browser plays:
// video/*. A GIF, a video to the services that make one, is a picture
// a browser animates, and its own first frame its thumbnail.
func isVideo(ct string) bool { return strings.HasPrefix(ct, "video/") }

// pictureType is the type of an output: the one recorded from the
// service when it is an image or video type, else the one its name's
// extension says, else application/octet-stream.
func pictureType(recorded, file string) string {
	for _, t := range []string{recorded, mime.TypeByExtension(path.Ext(file))} {
		if mt, _, err := mime.ParseMediaType(t); err == nil && (strings.HasPrefix(mt, "image/") || strings.HasPrefix(mt, "video/")) {
			return mt
		}
	}
	return "application/octet-stream"
}

// LinkNote says who can open the comparison's links, and until when.
func (c *Comparison) LinkNote() string {
	if c.Public != "" {
		return "The files are public under " + c.Public + ": anyone can open these links, for as long as the bucket keeps them."
	}
	until := c.Written.Add(c.Presign).UTC().Format("2006-01-02 15:04 UTC")
	return fmt.Sprintf("The links are presigned: anyone who has them can open them until %s (%s after they were made), and no one after.", until, lifetime(c.Presign))
}

// lifetime is a link's lifetime the way people say it: "7 days",
// "36h0m0s".
func lifetime(d time.Duration) string {
	if d > 0 && d%(24*time.Hour) == 0 {
		days := int(d / (24 * time.Hour))
		if days == 1 {
			return "1 day"
		}
		return strconv.Itoa(days) + " days"
	}
	if d%time.Hour == 0 {
		return strings.TrimSuffix(d.String(), "0m0s")
	}
	return d.String()
}

// Word is a piece of a prompt's word diff, as the page shows it.
type Word struct {
	Text           string
	Removed, Added bool
}

// Words is d's prompt diff for the page; nil when the prompt did not
// change.
func (d *Difference) Words() []Word {
	out := make([]Word, 0, len(d.PromptDiff))
	for _, op := range d.PromptDiff {
		out = append(out, Word{Text: op.Text, Removed: op.Kind == '-', Added: op.Kind == '+'})
	}
	return out
}

// CostNote is what Cost means, for a reader.
func (d *Difference) CostNote() string {
	if d.Cost == "unpriced" {
		return "unpriced: no price is configured for its model (a service or provider block's prices)"
	}
	return d.Cost + " (the configured price of this generation)"
}

// Now is the generation a reviewer reads the instance by: the selected
// workspace's, or for a deletion the base's.
func (d *Difference) Now() *Side {
	if d.After != nil {
		return d.After
	}
	return d.Before
}

// compareSide is what the page's side template shows: one workspace's
// generation of an instance, or None when it has none.
type compareSide struct {
	Label, Addr, None string
	Side              *Side
}

var compareTemplate = template.Must(template.New("compare.html.tmpl").Funcs(template.FuncMap{
	"side": func(label, addr string, s *Side, none string) compareSide {
		return compareSide{Label: label, Addr: addr, Side: s, None: none}
	},
	"short": shortHash,
}).ParseFS(templates, "compare.html.tmpl", "style.tmpl"))

// WriteComparison writes c as an HTML page at path, atomically, as Write
// does: the same cards as the gallery's, each instance's outputs before
// and after side by side, their thumbnails loaded from the object store
// and linked to the files. It returns the page's size.
func WriteComparison(path string, c *Comparison) (int64, error) {
	return write(path, compareTemplate, c)
}
