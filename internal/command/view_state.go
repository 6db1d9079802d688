package command

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/genform/genform/internal/formats/jsonplan"

	"github.com/genform/genform/internal/secrets"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/statefile"
)

// The renderings of the state: the JSON document of show -json, which is
// a documented, versioned format scripts rely on (README "State and JSON
// formats"), and the human views of show and state show. The JSON types
// here are that format: the statefile records are an on-disk concern and
// may change without it changing.

// stateDocument is the JSON form of the state (show -json).
type stateDocument struct {
	FormatVersion string `json:"format_version"`
	Lineage       string `json:"lineage"`
	Serial        uint64 `json:"serial"`
	// Service is the service the configuration points at, which the
	// fingerprints are computed for.
	Service   string              `json:"service,omitempty"`
	Resources []stateResourceJSON `json:"resources"`
	Intents   []stateIntentJSON   `json:"intents"`
	// History lists every generation recorded (for one address, those it
	// held), newest first.
	History []historyEntryJSON `json:"history"`
}

type stateResourceJSON struct {
	Address       string            `json:"address"`
	Resource      string            `json:"resource"`
	Kind          string            `json:"kind"`
	Endpoint      string            `json:"endpoint"`
	Fingerprint   string            `json:"fingerprint"`
	GenerationID  string            `json:"generation_id"`
	CreationID    string            `json:"creation_id"`
	Status        string            `json:"status"`
	Error         string            `json:"error,omitempty"`
	Dir           string            `json:"dir"`
	WatermarkFree bool              `json:"watermark_free"`
	Request       json.RawMessage   `json:"request"`
	Attributes    map[string]any    `json:"attributes"`
	Detail        json.RawMessage   `json:"detail,omitempty"`
	Outputs       []stateOutputJSON `json:"outputs"`
	DependsOn     []string          `json:"depends_on"`
	Protected     bool              `json:"protected"`
	CreatedAt     string            `json:"created_at,omitempty"`
	UpdatedAt     string            `json:"updated_at,omitempty"`
	// Failure is the generation that failed after the one recorded.
	Failure *stateFailureJSON `json:"failure,omitempty"`
}

type stateFailureJSON struct {
	Endpoint     string          `json:"endpoint"`
	Fingerprint  string          `json:"fingerprint"`
	Request      json.RawMessage `json:"request"`
	Attributes   map[string]any  `json:"attributes"`
	GenerationID string          `json:"generation_id"`
	Error        string          `json:"error"`
	At           string          `json:"at,omitempty"`
}

type stateOutputJSON struct {
	Index        int    `json:"index"`
	ID           string `json:"id"`
	MediaURL     string `json:"media_url"`
	ThumbnailURL string `json:"thumbnail_url"`
	Path         string `json:"path"`
	Size         int64  `json:"size"`
	ModTime      string `json:"mtime,omitempty"`
	SHA256       string `json:"sha256"`
	ContentType  string `json:"content_type"`
}

type stateIntentJSON struct {
	Address      string `json:"address"`
	Kind         string `json:"kind"`
	Endpoint     string `json:"endpoint"`
	Fingerprint  string `json:"fingerprint"`
	GenerationID string `json:"generation_id"`
	CreatedAt    string `json:"created_at,omitempty"`
	SubmittedAt  string `json:"submitted_at,omitempty"`
}

func jsonTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// resourceJSON is one record in the JSON format, with what rh hides
// replaced by sensitiveText.
func resourceJSON(rec *statefile.Resource, protected bool, rh *secrets.Record) stateResourceJSON {
	r := stateResourceJSON{
		Address:       rec.Addr.String(),
		Resource:      rec.Addr.Resource.String(),
		Kind:          rec.Addr.Resource.Kind.String(),
		Endpoint:      rec.Endpoint.Path(),
		Fingerprint:   rec.Fingerprint,
		GenerationID:  rec.GenerationID,
		CreationID:    rec.CreationID,
		Status:        rec.Status,
		Error:         rec.Error,
		Dir:           rec.Dir,
		WatermarkFree: rec.WatermarkFree,
		Request:       rh.JSON(rec.Request),
		Attributes:    rh.Attrs(secrets.RecordAttrs(rec), secrets.Text),
		Detail:        rh.JSON(rec.Detail),
		Outputs:       []stateOutputJSON{},
		DependsOn:     make([]string, 0, len(rec.Deps)),
		Protected:     protected,
		CreatedAt:     jsonTime(rec.CreatedAt),
		UpdatedAt:     jsonTime(rec.UpdatedAt),
	}
	if len(r.Request) == 0 {
		r.Request = json.RawMessage("null")
	}
	for _, d := range rec.Deps {
		r.DependsOn = append(r.DependsOn, d.String())
	}
	if f := rec.Failure; f != nil {
		r.Failure = &stateFailureJSON{Endpoint: f.Endpoint.Path(), Fingerprint: f.Fingerprint, Request: rh.JSON(f.Request),
			Attributes: rh.Attrs(secrets.FailureAttrs(f), secrets.Text), GenerationID: f.GenerationID, Error: rh.Text(f.Error), At: jsonTime(f.At)}
		if len(r.Failure.Request) == 0 {
			r.Failure.Request = json.RawMessage("null")
		}
	}
	for _, o := range rec.Outputs {
		r.Outputs = append(r.Outputs, stateOutput(o))
	}
	return r
}

func stateOutput(o statefile.Output) stateOutputJSON {
	return stateOutputJSON{
		Index: o.Index, ID: o.ID, MediaURL: o.MediaURL, ThumbnailURL: o.ThumbnailURL,
		Path: o.Path, Size: o.Size, ModTime: jsonTime(o.ModTime), SHA256: o.SHA256, ContentType: o.ContentType,
	}
}

// renderStateJSON writes the state document, with what h hides replaced
// by sensitiveText, and the history entries of hist. A nil snap (no state
// file) is written as an empty state.
func renderStateJSON(w io.Writer, snap *statefile.Snapshot, service string, h *secrets.Hider, hist *historyView, entries []*statefile.Resource) error {
	doc := stateDocument{
		FormatVersion: jsonplan.FormatVersion,
		Service:       service,
		Resources:     []stateResourceJSON{},
		Intents:       []stateIntentJSON{},
		History:       []historyEntryJSON{},
	}
	if hist != nil {
		doc.History = hist.json(entries)
	}
	if snap != nil {
		doc.Lineage, doc.Serial = snap.Meta.Lineage, snap.Meta.Serial
		for _, addr := range addrs.SortedKeys(snap.Resources) {
			rec := snap.Resources[addr]
			doc.Resources = append(doc.Resources, resourceJSON(rec, snap.Protections[addr], h.Of(rec)))
		}
		for _, addr := range addrs.SortedKeys(snap.Intents) {
			it := snap.Intents[addr]
			doc.Intents = append(doc.Intents, stateIntentJSON{
				Address: it.Addr.String(), Kind: it.Addr.Resource.Kind.String(), Endpoint: it.Endpoint.Path(), Fingerprint: it.Fingerprint,
				GenerationID: it.GenerationID, CreatedAt: jsonTime(it.CreatedAt), SubmittedAt: jsonTime(it.SubmittedAt),
			})
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// renderStateSummary writes the human view of the whole state: for each
// resource what a user looks for first (status, creation id, prompt and
// files), and the submissions an apply left unfinished.
func renderStateSummary(w io.Writer, snap *statefile.Snapshot, h *secrets.Hider) {
	recorded := addrs.SortedKeys(snap.Resources)
	for i, addr := range recorded {
		rec := snap.Resources[addr]
		rh := h.Of(rec)
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s\n%s %q {\n", colBold.Sprint("# "+addr.String()+":"), addr.Resource.Kind, addr.Resource.Name)
		var rows []attrRow
		rows = append(rows, attrRow{"status", formatValue(rec.Status)}, attrRow{"creation_id", formatValue(rec.CreationID)})
		if p, ok := rh.Attrs(secrets.RecordAttrs(rec), secrets.Value{})["prompt"]; ok {
			rows = append(rows, attrRow{"prompt", formatValue(p)})
		}
		files := make([]any, 0, len(rec.Outputs))
		for _, o := range rec.Outputs {
			files = append(files, o.Path)
		}
		rows = append(rows, attrRow{"files", formatValue(files)})
		if snap.Protections[addr] {
			rows = append(rows, attrRow{"protected", "true"})
		}
		if f := rec.Failure; f != nil {
			rows = append(rows, attrRow{"last_failure", formatValue(failureNote(f, rh))})
		}
		writeRows(w, "    ", rows)
		fmt.Fprintln(w, "}")
	}
	pending := pendingIntents(snap)
	if len(pending) > 0 && len(recorded) > 0 {
		fmt.Fprintln(w)
	}
	for _, it := range pending {
		fmt.Fprintf(w, "%s %s\n", colBold.Sprint("# "+it.Addr.String()+":"), intentNote(it))
	}
}

// pendingIntents are the intents of addresses without a record, which
// the summary lists on their own; an intent beside a record is shown with
// the record.
func pendingIntents(snap *statefile.Snapshot) []*statefile.Intent {
	var list []*statefile.Intent
	for _, addr := range addrs.SortedKeys(snap.Intents) {
		if snap.Resources[addr] == nil {
			list = append(list, snap.Intents[addr])
		}
	}
	return list
}

func intentNote(it *statefile.Intent) string {
	if it.GenerationID == "" {
		return fmt.Sprintf("an interrupted apply sent a create request at %s and did not record the answer", it.CreatedAt.UTC().Format("2006-01-02 15:04:05Z"))
	}
	return fmt.Sprintf("job %s, submitted by an interrupted apply, is not finished; the next apply resumes it", it.GenerationID)
}

// renderResource writes every attribute of one record (show ADDR, state
// show ADDR): the request as the configuration names its attributes, the
// service's ids, where the files are and their hashes. What h hides shows
// as (sensitive).
func renderResource(w io.Writer, snap *statefile.Snapshot, addr addrs.Instance, h *secrets.Hider) {
	rec := snap.Resources[addr]
	rh := h.Of(rec)
	fmt.Fprintf(w, "%s\n%s %q {\n", colBold.Sprint("# "+addr.String()+":"), addr.Resource.Kind, addr.Resource.Name)
	rows := []attrRow{
		{"creation_id", formatValue(rec.CreationID)},
		{"generation_id", formatValue(rec.GenerationID)},
		{"status", formatValue(rec.Status)},
	}
	if rec.Error != "" {
		rows = append(rows, attrRow{"error", formatValue(rh.Text(rec.Error))})
	}
	rows = append(rows, attrRow{"endpoint", formatValue(rec.Endpoint.Path())})
	attrs := rh.Attrs(secrets.RecordAttrs(rec), secrets.Value{})
	for _, n := range attrNames(attrs) {
		rows = append(rows, attrRow{n, formatValue(attrs[n])})
	}
	rows = append(rows, attrRow{"dir", formatValue(rec.Dir)})
	if rec.Addr.Resource.Kind == addrs.Video {
		rows = append(rows, attrRow{"watermark_free", strconv.FormatBool(rec.WatermarkFree)})
	}
	deps := make([]any, len(rec.Deps))
	for i, d := range rec.Deps {
		deps[i] = d.String()
	}
	rows = append(rows,
		attrRow{"depends_on", formatValue(deps)},
		attrRow{"protected", strconv.FormatBool(snap.Protections[addr])},
		attrRow{"fingerprint", formatValue(rec.Fingerprint)},
		attrRow{"created_at", formatValue(jsonTime(rec.CreatedAt))},
		attrRow{"updated_at", formatValue(jsonTime(rec.UpdatedAt))},
	)
	writeRows(w, "    ", rows)
	for _, o := range rec.Outputs {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "    output {")
		orows := []attrRow{
			{"index", strconv.Itoa(o.Index)},
			{"path", formatValue(o.Path)},
			{"sha256", formatValue(o.SHA256)},
			{"size", strconv.FormatInt(o.Size, 10)},
			{"content_type", formatValue(o.ContentType)},
			{"id", formatValue(o.ID)},
			{"media_url", formatValue(o.MediaURL)},
		}
		if o.ThumbnailURL != "" {
			orows = append(orows, attrRow{"thumbnail_url", formatValue(o.ThumbnailURL)})
		}
		writeRows(w, "        ", orows)
		fmt.Fprintln(w, "    }")
	}
	if f := rec.Failure; f != nil {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "    last_failure {")
		frows := []attrRow{
			{"generation_id", formatValue(f.GenerationID)},
			{"error", formatValue(rh.Text(f.Error))},
			{"at", formatValue(jsonTime(f.At))},
		}
		attrs := rh.Attrs(secrets.FailureAttrs(f), secrets.Value{})
		for _, n := range attrNames(attrs) {
			frows = append(frows, attrRow{n, formatValue(attrs[n])})
		}
		writeRows(w, "        ", frows)
		fmt.Fprintln(w, "    }")
	}
	fmt.Fprintln(w, "}")
	if it := snap.Intents[addr]; it != nil {
		fmt.Fprintf(w, "# %s\n", intentNote(it))
	}
}

// failureNote says in one line which generation failed after the one the
// record holds, for the summary of the whole state.
func failureNote(f *statefile.Failure, rh *secrets.Record) string {
	note := "job " + f.GenerationID + " failed"
	if p, ok := secrets.FailureAttrs(f)["prompt"].(string); ok {
		if rh.Hides("prompt") || rh.Text(p) != p {
			note += " (prompt " + secrets.Text + ")"
		} else {
			note += fmt.Sprintf(" (prompt %q)", p)
		}
	}
	return note + "; the files above are the generation before it"
}

type attrRow struct{ name, value string }

// writeRows writes name = value lines with the equals signs aligned, as
// hclwrite formats a block.
func writeRows(w io.Writer, indent string, rows []attrRow) {
	width := 0
	for _, r := range rows {
		width = max(width, len(r.name))
	}
	for _, r := range rows {
		fmt.Fprintf(w, "%s%-*s = %s\n", indent, width, r.name, r.value)
	}
}

// attrNames lists m's attribute names in the order every view uses
// (config.SortAttrNames).
func attrNames(m map[string]any) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	config.SortAttrNames(names)
	return names
}

// unknownAddrError says an address is not in the state, suggesting a near
// one when there is.
func unknownAddrError(addr addrs.Instance, snap *statefile.Snapshot) error {
	var known []addrs.Instance
	if snap != nil {
		known = addrs.SortedKeys(snap.Resources)
	}
	return unknownAddrIn(addr, known)
}

// unknownAddrIn is unknownAddrError with the known addresses listed.
func unknownAddrIn(addr addrs.Instance, known []addrs.Instance) error {
	msg := fmt.Sprintf("%s is not in the state", addr)
	if s := suggest(addr.String(), addrs.Strings(known)); s != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", s)
	}
	return fmt.Errorf("%s; 'genform state list' shows the managed addresses", msg)
}

// damagedJSON names the first record of the state file at path whose
// stored JSON (the request, the creation detail, a failed request) does
// not parse. The state document embeds them as they are, and only a
// damaged file holds such bytes: records carry no checksum, so a record
// a page of the file was overwritten in the middle of can still decode.
func damagedJSON(snap *statefile.Snapshot, path string) error {
	if snap == nil {
		return nil
	}
	for _, addr := range addrs.SortedKeys(snap.Resources) {
		rec := snap.Resources[addr]
		parts := []struct {
			name string
			raw  json.RawMessage
		}{{"request", rec.Request}, {"creation detail", rec.Detail}}
		if rec.Failure != nil {
			parts = append(parts, struct {
				name string
				raw  json.RawMessage
			}{"failed request", rec.Failure.Request})
		}
		for _, p := range parts {
			if len(p.raw) > 0 && !json.Valid(p.raw) {
				return fmt.Errorf("state file %s: resource record %s holds a %s that is not JSON, so the file is damaged; restore it from version control or a backup, or forget the resource with: genform state rm %s", path, addr, p.name, addr.Shell())
			}
		}
	}
	return nil
}
