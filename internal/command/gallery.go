package command

import (
	"bufio"
	"crypto/sha256"
	_ "embed" // the page template
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html/template"
	"image"
	_ "image/gif" // DecodeConfig of the simulator's videos
	_ "image/jpeg"
	_ "image/png"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "golang.org/x/image/webp" // DecodeConfig of WebP outputs

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/atomicfile"
	"github.com/genform/genform/internal/cache"
	"github.com/genform/genform/internal/workdir"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

func init() {
	register(&command{
		name:     "gallery",
		synopsis: "Write a static HTML page showing every managed output",
		usage: `Usage: genform gallery [flags]

  Writes one HTML page showing every output recorded in the state: images
  inline, videos playable, each with its address, prompt, seed, creation id
  and status. The page needs no server and loads nothing from anywhere: by
  default every file is embedded in it, so it can be mailed or attached to
  a review as it is. It reads the state and the files; it changes nothing.

  Every resource generated anew since the state's previous serial (the one
  before the last apply, or -since=SERIAL) shows the generation it replaced
  beside the new one, both labelled with their prompts, its files taken
  from the history's cache.

Flags:
  -out=FILE            where to write the page (default gallery.html)
  -link                reference the output files by their path relative to
                       the page instead of embedding them (for outputs too
                       large to embed; the page then needs the files beside it)
  -since=SERIAL        show before and after for what was generated after
                       state serial SERIAL (default: the serial before the
                       last command that changed the state)
  -changed             show only the resources generated anew since then
  -var 'NAME=VALUE'    set a variable (repeatable)
  -var-file=FILE       read variables from a *.genvars.hcl file (repeatable)
  -lock-timeout=DUR    wait this long for the state lock (default 0s)
`,
		run: runGallery,
	})
}

// galleryEmbedLimit is the most output bytes the gallery embeds in one
// page. Past it browsers grow slow to open the file and mail systems refuse
// it, so the user is asked to choose -link instead. A variable so tests can
// lower it.
var galleryEmbedLimit int64 = 200 << 20

//go:embed gallery.html.tmpl
var galleryTemplateText string

var galleryTemplate = template.Must(template.New("gallery").Parse(galleryTemplateText))

func runGallery(env *Env, args []string) int {
	fs := flag.NewFlagSet("gallery", flag.ContinueOnError)
	out := fs.String("out", "gallery.html", "")
	link := fs.Bool("link", false, "")
	since := fs.Uint64("since", 0, "")
	changed := fs.Bool("changed", false, "")
	lockTimeout := fs.Duration("lock-timeout", 0, "")
	var vars varFlags
	vars.register(fs)
	if ok, code := parseFlags(env, commands["gallery"], fs, args); !ok {
		return code
	}
	if msg := extraArgs("gallery", "no arguments (name the page with -out=FILE)", fs, args, 0); msg != "" {
		return env.Errorf("%s", msg)
	}
	if *out == "" {
		return env.Errorf("-out is empty; name the page to write, e.g. -out=gallery.html")
	}
	cfg, _ := loadForReading(env, vars.options(env))
	if cfg == nil {
		return ExitError
	}
	// The shared lock is held until the page is written, so an apply
	// cannot replace files while they are read.
	st, err := readState(cfg, "gallery", *lockTimeout)
	if err != nil {
		return env.Errorf("%v", err)
	}
	if st == nil {
		return env.Errorf("no state: run genform apply first (there is no state file at %s)", stateWhere(cfg))
	}
	defer st.Close()
	snap, err := st.Snapshot()
	if err != nil {
		return env.Errorf("reading the state: %v", err)
	}

	outAbs, err := filepath.Abs(*out)
	if err != nil {
		return env.Errorf("-out=%s: %v", *out, err)
	}
	entries, err := st.History(addrs.Instance{})
	if err != nil {
		return env.Errorf("reading the history: %v", err)
	}
	from := snap.Meta.RunStart
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "since" {
			from = *since
		}
	})
	if from > snap.Meta.Serial {
		return env.Errorf("-since=%d is past the state's serial, %d; give a serial the state has reached ('genform show -json' prints it)", from, snap.Meta.Serial)
	}
	page := buildGallery(snap, stateWhere(cfg), filepath.Dir(outAbs), *link, newHider(cfg))
	page.compare(snap, entries, workdir.CacheOf(cfg, "."), from, *changed, newHider(cfg))
	if !*link && page.embedBytes > galleryEmbedLimit {
		return env.Errorf("the outputs total %s, more than the %s one self-contained page can hold; rerun with -link to reference the files by their relative path instead", byteSize(page.embedBytes), byteSize(galleryEmbedLimit))
	}
	size, err := writeGallery(outAbs, page)
	if err != nil {
		return env.Errorf("writing the gallery: %v", err)
	}
	fmt.Fprintf(env.Stdout, "Gallery written to %s: %d resource%s, %d output%s (%s).\n",
		*out, len(page.Resources), plural(len(page.Resources)), page.Outputs, plural(page.Outputs), byteSize(size))
	if page.Replaced > 0 || *changed {
		fmt.Fprintf(env.Stdout, "%d resource%s generated anew since serial %d, shown beside the generation%s %s replaced.\n",
			page.Replaced, plural(page.Replaced), page.Since, plural(page.Replaced), map[bool]string{true: "it", false: "they"}[page.Replaced == 1])
	}
	if page.Missing > 0 {
		fmt.Fprintf(env.Stdout, "%d output file%s missing from disk; run 'genform apply' to download %s again.\n",
			page.Missing, plural(page.Missing), map[bool]string{true: "it", false: "them"}[page.Missing == 1])
	}
	if *link {
		fmt.Fprintln(env.Stdout, "The page links to the files by relative path: keep it where it is, or copy it with them.")
	}
	return ExitOK
}

// galleryPage is what the template renders.
type galleryPage struct {
	Title     string
	StateFile string
	Serial    uint64
	Written   string
	Resources []*galleryResource
	Outputs   int
	Missing   int
	InFlight  []string
	Linked    bool
	dir       string // where the page is written, for -link paths

	// Since is the serial before and after are shown from; Replaced how
	// many resources have a before, and ChangedOnly whether the page
	// shows only those.
	Since       uint64
	Replaced    int
	ChangedOnly bool

	embedBytes int64 // total size of the files to embed
}

// galleryResource is one card: a resource of the state and its outputs.
type galleryResource struct {
	Addr           string
	Kind           string // "image" or "video"
	Mode           string // "text to image", "key frames to video", ...
	Status         string // the service's last status
	Error          string
	Prompt         string
	NegativePrompt string
	Seed           string
	CreationID     string
	GenerationID   string
	Updated        string
	Request        []galleryAttr // the other request attributes
	Media          []*galleryMedia
	// Before is the generation this one replaced since the page's serial;
	// nil when there is none to show.
	Before *galleryBefore
}

// galleryBefore is a generation a newer one replaced, shown beside it.
type galleryBefore struct {
	Prompt       string
	GenerationID string
	Recorded     string
	Media        []*galleryMedia
}

// galleryAttr is one request attribute, formatted for reading.
type galleryAttr struct{ Name, Value string }

// galleryMedia is one output file.
type galleryMedia struct {
	Index       int
	Path        string
	Alt         string
	ContentType string
	Video       bool
	Image       bool
	Width       int
	Height      int
	Size        string
	SHA256      string // as recorded, shortened
	// Problem says why the file is not shown as recorded: missing,
	// changed since apply, or not an image or video.
	Problem string

	abs     string // the file to show; "" when there is none to show
	link    string // in -link mode: the URL relative to the page
	bytes   int64  // the file's size now
	missing bool
}

// Lazy reports whether the browser may load the file when it scrolls into
// view: a linked file, not an embedded one.
func (m *galleryMedia) Lazy() bool { return m.link != "" }

// Dims is "1280×720", or "" when the size is not known.
func (m *galleryMedia) Dims() string {
	if m.Width <= 0 || m.Height <= 0 {
		return ""
	}
	return fmt.Sprintf("%d×%d", m.Width, m.Height)
}

// Src is the image or video source: a data: URI of the file read at the
// moment the template asks for it, so that only one file at a time is held
// in memory, or the relative link in -link mode.
func (m *galleryMedia) Src() (template.URL, error) {
	if m.link != "" {
		return template.URL(m.link), nil
	}
	data, err := os.ReadFile(m.abs)
	if err != nil {
		return "", fmt.Errorf("embedding %s: %w", m.Path, err)
	}
	// The content type was checked to be a well-formed image/* or video/*
	// type, and base64 has no character that could end the attribute: the
	// URI is safe to mark as trusted.
	return template.URL("data:" + m.ContentType + ";base64," + base64.StdEncoding.EncodeToString(data)), nil
}

// buildGallery reads the state records and the files they name. Files are
// opened to hash them and read their pixel size; their bytes are read again
// only while the page is written. What h hides shows as (sensitive).
func buildGallery(snap *statefile.Snapshot, stateFile, pageDir string, link bool, h *hider) *galleryPage {
	wd, _ := os.Getwd()
	title := "genform gallery"
	if base := filepath.Base(wd); base != "" && base != "." && base != string(filepath.Separator) {
		title += " — " + base
	}
	page := &galleryPage{
		Title:     title,
		StateFile: filepath.ToSlash(stateFile),
		Serial:    snap.Meta.Serial,
		Written:   time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		Linked:    link,
		dir:       pageDir,
	}
	for _, a := range addrs.SortedKeys(snap.Resources) {
		rec := snap.Resources[a]
		r := galleryResourceOf(rec, h.of(rec))
		for _, o := range rec.Outputs {
			m := galleryMediaOf(rec, o, r, pageDir, link)
			r.Media = append(r.Media, m)
			page.count(m)
		}
		page.Resources = append(page.Resources, r)
	}
	for _, a := range addrs.SortedKeys(snap.Intents) {
		page.InFlight = append(page.InFlight, a.String())
	}
	return page
}

// compare gives every resource generated anew after serial from the
// generation it replaced, from the history (entries, newest first), its
// files from the cache c; with changedOnly the page keeps only those
// resources.
func (page *galleryPage) compare(snap *statefile.Snapshot, entries []*statefile.Resource, c *cache.Cache, from uint64, changedOnly bool, h *hider) {
	page.Since, page.ChangedOnly = from, changedOnly
	kept := page.Resources[:0]
	for _, r := range page.Resources {
		addr, err := addrs.ParseInstance(r.Addr)
		rec := snap.Resources[addr]
		if err == nil && rec != nil && rec.Serial > from {
			if prev := previousGeneration(rec, entries); prev != nil {
				r.Before = galleryBeforeOf(prev, c, page, h)
				page.Replaced++
			}
		}
		if r.Before != nil || !changedOnly {
			kept = append(kept, r)
		}
	}
	if changedOnly {
		page.Outputs, page.Missing, page.embedBytes = 0, 0, 0
		for _, r := range kept {
			for _, m := range r.Media {
				page.count(m)
			}
		}
	}
	page.Resources = kept
	if page.Linked {
		return
	}
	for _, r := range kept {
		if r.Before != nil {
			for _, m := range r.Before.Media {
				if m.abs != "" {
					page.embedBytes += m.bytes
				}
			}
		}
	}
}

// count adds an output of the page to its counts.
func (page *galleryPage) count(m *galleryMedia) {
	page.Outputs++
	if m.missing {
		page.Missing++
	}
	if !page.Linked && m.abs != "" {
		page.embedBytes += m.bytes
	}
}

// previousGeneration is the newest generation the history holds of rec's
// instance before the one rec holds, with outputs to show; nil when there
// is none (a new resource).
func previousGeneration(rec *statefile.Resource, entries []*statefile.Resource) *statefile.Resource {
	for _, e := range entries {
		if e.Addr != rec.Addr || e.GenerationID == rec.GenerationID || e.Status != plans.StatusSucceed || len(e.Outputs) == 0 {
			continue
		}
		if e.Serial != 0 && rec.Serial != 0 && e.Serial >= rec.Serial {
			continue // recorded after the one shown: not what it replaced
		}
		return e
	}
	return nil
}

// galleryBeforeOf is generation e as the page shows it beside its
// successor, its files from the cache.
func galleryBeforeOf(e *statefile.Resource, c *cache.Cache, page *galleryPage, h *hider) *galleryBefore {
	old := galleryResourceOf(e, h.of(e))
	b := &galleryBefore{Prompt: old.Prompt, GenerationID: e.GenerationID}
	if !e.CreatedAt.IsZero() {
		b.Recorded = e.CreatedAt.UTC().Format("2006-01-02 15:04 UTC")
	}
	for _, o := range e.Outputs {
		m := &galleryMedia{Index: o.Index, Path: filepath.ToSlash(o.Path), SHA256: shortHash(o.SHA256), Size: byteSize(o.Size)}
		m.Alt = fmt.Sprintf("%s before, output %d", e.Addr, o.Index)
		if b.Prompt != "" {
			m.Alt += ": " + b.Prompt
		}
		if path, ok := c.Path(o.SHA256); ok {
			galleryFile(m, e, o, path, page.dir, page.Linked)
			m.Path = "cache: " + shortHash(o.SHA256)
		} else {
			m.Problem = "not in the local cache (pruned, or kept elsewhere): 'genform history' lists the generation"
		}
		b.Media = append(b.Media, m)
	}
	return b
}

// galleryModes names each endpoint the way a reader thinks of it.
var galleryModes = map[addrs.Endpoint]string{
	addrs.Text2Image:  "text to image",
	addrs.Image2Video: "image to video",
	addrs.KeyFrames:   "key frames to video",
	addrs.Text2Video:  "text to video",
}

func galleryResourceOf(rec *statefile.Resource, rh *recordHider) *galleryResource {
	r := &galleryResource{
		Addr:         rec.Addr.String(),
		Kind:         rec.Addr.Resource.Kind.String(),
		Mode:         galleryModes[rec.Endpoint],
		Status:       rec.Status,
		Error:        rh.text(rec.Error),
		CreationID:   rec.CreationID,
		GenerationID: rec.GenerationID,
		Seed:         "random",
	}
	if r.Mode == "" {
		r.Mode = rec.Endpoint.String()
	}
	if r.Status == "" {
		r.Status = "unknown"
	}
	if !rec.UpdatedAt.IsZero() {
		r.Updated = rec.UpdatedAt.UTC().Format("2006-01-02 15:04 UTC")
	}
	attrs, err := config.FlattenRequest(rec.Endpoint, rec.Request)
	if err != nil {
		// An endpoint this version does not know: show the body as sent.
		r.Request = []galleryAttr{{"request", galleryValue(string(rh.json(rec.Request)))}}
		return r
	}
	attrs = rh.attrs(attrs, sensitiveText)
	r.Prompt, _ = attrs["prompt"].(string)
	r.NegativePrompt, _ = attrs["negative_prompt"].(string)
	if s, ok := attrs["seed"]; ok {
		if v := galleryValue(s); v != "-1" {
			r.Seed = v
		}
	}
	names := make([]string, 0, len(attrs))
	for k := range attrs {
		switch k {
		case "prompt", "negative_prompt", "seed":
		default:
			names = append(names, k)
		}
	}
	config.SortAttrNames(names)
	for _, k := range names {
		r.Request = append(r.Request, galleryAttr{k, galleryValue(attrs[k])})
	}
	return r
}

// galleryValue formats a flattened request value for reading: data URIs
// and very long strings are shortened, lists joined.
func galleryValue(v any) string {
	switch v := v.(type) {
	case string:
		if strings.HasPrefix(v, "data:") {
			head, _, _ := strings.Cut(v, ",")
			return fmt.Sprintf("%s,… (%s)", head, byteSize(int64(len(v))))
		}
		if r := []rune(v); len(r) > 300 {
			return string(r[:300]) + "…"
		}
		return v
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = galleryValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case nil:
		return "null"
	case map[string]any:
		b, _ := json.Marshal(v)
		return galleryValue(string(b))
	default:
		return fmt.Sprint(v)
	}
}

func galleryMediaOf(rec *statefile.Resource, o statefile.Output, r *galleryResource, pageDir string, link bool) *galleryMedia {
	m := &galleryMedia{
		Index:  o.Index,
		Path:   filepath.ToSlash(o.Path),
		SHA256: shortHash(o.SHA256),
		Size:   byteSize(o.Size),
	}
	m.Alt = fmt.Sprintf("%s output %d", rec.Addr, o.Index)
	if r.Prompt != "" {
		m.Alt += ": " + r.Prompt
	}
	abs, err := filepath.Abs(filepath.FromSlash(o.Path))
	if err != nil || o.Path == "" {
		m.Problem = "no file recorded"
		return m
	}
	galleryFile(m, rec, o, abs, pageDir, link)
	return m
}

// galleryFile reads what m shows of output o from the file at abs: its
// pixel size, bytes, hash and type.
func galleryFile(m *galleryMedia, rec *statefile.Resource, o statefile.Output, abs, pageDir string, link bool) {
	f, err := os.Open(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			m.missing = true
			m.Problem = "file missing: run genform apply to download it again"
		} else {
			m.Problem = fmt.Sprintf("cannot read the file: %v", err)
		}
		return
	}
	defer f.Close()

	// The pixel size comes from the file's header; where that cannot be
	// read (a video/mp4, say) from the size the service reported.
	if c, _, err := image.DecodeConfig(bufio.NewReader(f)); err == nil {
		m.Width, m.Height = c.Width, c.Height
	} else {
		m.Width, m.Height = detailSize(rec.Detail)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		m.Problem = fmt.Sprintf("cannot read the file: %v", err)
		return
	}
	h := sha256.New()
	sniff := make([]byte, 512)
	n, _ := io.ReadFull(f, sniff)
	h.Write(sniff[:n])
	size, err := io.Copy(h, f)
	if err != nil {
		m.Problem = fmt.Sprintf("cannot read the file: %v", err)
		return
	}
	m.bytes = size + int64(n)
	m.Size = byteSize(m.bytes)
	if o.SHA256 != "" && hex.EncodeToString(h.Sum(nil)) != o.SHA256 {
		m.Problem = "changed on disk since apply: shown as it is now"
	}

	m.ContentType = mediaType(o.ContentType, sniff[:n])
	switch {
	case strings.HasPrefix(m.ContentType, "image/"):
		m.Image = true
	case strings.HasPrefix(m.ContentType, "video/"):
		m.Video = true
	default:
		m.Problem = fmt.Sprintf("not an image or video (%s)", m.ContentType)
		return
	}
	m.abs = abs
	if link {
		m.link = relativeLink(pageDir, abs)
	}
}

// mediaType is the type to show a file as: the content type recorded from
// the service when it is an image or video type, otherwise what the bytes
// look like. The result is a bare, well-formed type without parameters.
func mediaType(recorded string, head []byte) string {
	if t, _, err := mime.ParseMediaType(recorded); err == nil {
		if strings.HasPrefix(t, "image/") || strings.HasPrefix(t, "video/") {
			return t
		}
	}
	t, _, err := mime.ParseMediaType(http.DetectContentType(head))
	if err != nil {
		return "application/octet-stream"
	}
	return t
}

// relativeLink is the URL of file as seen from a page in pageDir: a
// relative path with every segment escaped, or a file: URL when there is no
// relative path (another drive).
func relativeLink(pageDir, file string) string {
	rel, err := filepath.Rel(pageDir, file)
	if err != nil {
		return (&url.URL{Scheme: "file", Path: filepath.ToSlash(file)}).String()
	}
	// url.URL escapes '#', '?' and spaces, and guards a first segment that
	// would read as a scheme ("a:b.png") with "./".
	return (&url.URL{Path: filepath.ToSlash(rel)}).String()
}

// detailSize reads the width and height the service reported in a
// creation detail.
func detailSize(detail json.RawMessage) (w, h int) {
	var d struct {
		Settings struct {
			Width  float64 `json:"width"`
			Height float64 `json:"height"`
		} `json:"settings"`
	}
	if json.Unmarshal(detail, &d) != nil {
		return 0, 0
	}
	return int(d.Settings.Width), int(d.Settings.Height)
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// byteSize formats a size the way people read it: 912 B, 14.2 KiB, 3.0 MiB.
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}

// writeGallery renders the page to a temporary file beside path and
// renames it into place, so a failed write never leaves half a page where
// an old one was. It returns the page's size.
func writeGallery(path string, page *galleryPage) (int64, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	var n int64
	err := atomicfile.Write(path, 0o644, func(f io.Writer) error {
		w := bufio.NewWriterSize(f, 1<<20)
		cw := &countingWriter{w: w}
		if err := galleryTemplate.Execute(cw, page); err != nil {
			return err
		}
		n = cw.n
		return w.Flush()
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
