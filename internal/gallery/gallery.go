package gallery

import (
	"bufio"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
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
	"github.com/genform/genform/internal/secrets"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// EmbedLimit is the most output bytes the gallery embeds in one
// page. Past it browsers grow slow to open the file and mail systems refuse
// it, so the user is asked to choose -link instead. A variable so tests can
// lower it.
var EmbedLimit int64 = 200 << 20

//go:embed gallery.html.tmpl compare.html.tmpl style.tmpl
var templates embed.FS

var galleryTemplate = template.Must(template.ParseFS(templates, "gallery.html.tmpl", "style.tmpl"))

// Page is what the template renders.
type Page struct {
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
	Since    uint64
	Replaced int
	// Added counts the resources generated since the serial that had no
	// generation before (new in the configuration).
	Added       int
	ChangedOnly bool

	EmbedBytes int64 // total size of the files to embed
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
	// New is set on a resource first generated since the page's serial:
	// there is nothing before it.
	New bool
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

// Build reads the state records and the files they name. Files are
// opened to hash them and read their pixel size; their bytes are read again
// only while the page is written. What h hides shows as (sensitive).
func Build(snap *statefile.Snapshot, stateFile, pageDir string, link bool, h *secrets.Hider) *Page {
	wd, _ := os.Getwd()
	title := "genform gallery"
	if base := filepath.Base(wd); base != "" && base != "." && base != string(filepath.Separator) {
		title += " — " + base
	}
	page := &Page{
		Title:     title,
		StateFile: filepath.ToSlash(stateFile),
		Serial:    snap.Meta.Serial,
		Written:   time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		Linked:    link,
		dir:       pageDir,
	}
	for _, a := range addrs.SortedKeys(snap.Resources) {
		rec := snap.Resources[a]
		r := galleryResourceOf(rec, h.Of(rec))
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

// Compare gives every resource generated anew after serial from the
// generation it replaced, from the history (entries, newest first), its
// files from the cache c, and marks the resources first generated after
// it as new; with changedOnly the page keeps only those resources.
func (page *Page) Compare(snap *statefile.Snapshot, entries []*statefile.Resource, c *cache.Cache, from uint64, changedOnly bool, h *secrets.Hider) {
	page.Since, page.ChangedOnly = from, changedOnly
	kept := page.Resources[:0]
	for _, r := range page.Resources {
		addr, err := addrs.ParseInstance(r.Addr)
		rec := snap.Resources[addr]
		if err == nil && rec != nil && rec.Serial > from {
			if prev := previousGeneration(rec, entries); prev != nil {
				r.Before = galleryBeforeOf(prev, c, page, h)
				page.Replaced++
			} else if len(rec.Outputs) > 0 && rec.Status == plans.StatusSucceed {
				// Generated since, with nothing before: new.
				r.New = true
				page.Added++
			}
		}
		if r.Before != nil || r.New || !changedOnly {
			kept = append(kept, r)
		}
	}
	if changedOnly {
		page.Outputs, page.Missing, page.EmbedBytes = 0, 0, 0
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
					page.EmbedBytes += m.bytes
				}
			}
		}
	}
}

// count adds an output of the page to its counts.
func (page *Page) count(m *galleryMedia) {
	page.Outputs++
	if m.missing {
		page.Missing++
	}
	if !page.Linked && m.abs != "" {
		page.EmbedBytes += m.bytes
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
func galleryBeforeOf(e *statefile.Resource, c *cache.Cache, page *Page, h *secrets.Hider) *galleryBefore {
	old := galleryResourceOf(e, h.Of(e))
	b := &galleryBefore{Prompt: old.Prompt, GenerationID: e.GenerationID}
	if !e.CreatedAt.IsZero() {
		b.Recorded = e.CreatedAt.UTC().Format("2006-01-02 15:04 UTC")
	}
	for _, o := range e.Outputs {
		m := &galleryMedia{Index: o.Index, Path: filepath.ToSlash(o.Path), SHA256: shortHash(o.SHA256), Size: ByteSize(o.Size)}
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

func galleryResourceOf(rec *statefile.Resource, rh *secrets.Record) *galleryResource {
	r := &galleryResource{
		Addr:         rec.Addr.String(),
		Kind:         rec.Addr.Resource.Kind.String(),
		Mode:         galleryModes[rec.Endpoint],
		Status:       rec.Status,
		Error:        rh.Text(rec.Error),
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
		r.Request = []galleryAttr{{"request", galleryValue(string(rh.JSON(rec.Request)))}}
		return r
	}
	attrs = rh.Attrs(attrs, secrets.Text)
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
			return fmt.Sprintf("%s,… (%s)", head, ByteSize(int64(len(v))))
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
		Size:   ByteSize(o.Size),
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
	m.Size = ByteSize(m.bytes)
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

// ByteSize formats a size the way people read it: 912 B, 14.2 KiB, 3.0 MiB.
func ByteSize(n int64) string {
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

// Write renders the page to a temporary file beside path and
// renames it into place, so a failed write never leaves half a page where
// an old one was. It returns the page's size.
func Write(path string, page *Page) (int64, error) {
	return write(path, galleryTemplate, page)
}

// write renders tmpl with data to path, as Write does.
func write(path string, tmpl *template.Template, data any) (int64, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	var n int64
	err := atomicfile.Write(path, 0o644, func(f io.Writer) error {
		w := bufio.NewWriterSize(f, 1<<20)
		cw := &countingWriter{w: w}
		if err := tmpl.Execute(cw, data); err != nil {
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
