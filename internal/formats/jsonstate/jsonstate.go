package jsonstate

import (
	"encoding/json"
	"io"
	"time"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/history"
	"github.com/genform/genform/internal/secrets"
	"github.com/genform/genform/statefile"
)

// Document is the JSON form of the state (show -json).
type Document struct {
	FormatVersion string `json:"format_version"`
	Lineage       string `json:"lineage"`
	Serial        uint64 `json:"serial"`
	// Service is the service the configuration points at, which the
	// fingerprints are computed for.
	Service   string     `json:"service,omitempty"`
	Resources []Resource `json:"resources"`
	Intents   []Intent   `json:"intents"`
	// History lists every generation recorded (for one address, those it
	// held), newest first.
	History []HistoryEntry `json:"history"`
}

type Resource struct {
	Address string `json:"address"`
	// ModuleAddress is the module instance the resource is declared in,
	// absent for the root module's.
	ModuleAddress string `json:"module_address,omitempty"`
	Resource      string `json:"resource"`
	Kind          string `json:"kind"`
	Endpoint      string `json:"endpoint"`
	Fingerprint   string `json:"fingerprint"`
	GenerationID  string `json:"generation_id"`
	CreationID    string `json:"creation_id"`
	Status        string `json:"status"`
	Error         string `json:"error,omitempty"`
	// Version is the model version that ran, and Usage what the provider
	// reported of the job's cost or usage, when it says.
	Version       string          `json:"version,omitempty"`
	Usage         json.RawMessage `json:"usage,omitempty"`
	Dir           string          `json:"dir"`
	WatermarkFree bool            `json:"watermark_free"`
	Request       json.RawMessage `json:"request"`
	Attributes    map[string]any  `json:"attributes"`
	Detail        json.RawMessage `json:"detail,omitempty"`
	Outputs       []Output        `json:"outputs"`
	DependsOn     []string        `json:"depends_on"`
	Protected     bool            `json:"protected"`
	CreatedAt     string          `json:"created_at,omitempty"`
	UpdatedAt     string          `json:"updated_at,omitempty"`
	// Failure is the generation that failed after the one recorded.
	Failure *Failure `json:"failure,omitempty"`
}

type Failure struct {
	Endpoint     string          `json:"endpoint"`
	Fingerprint  string          `json:"fingerprint"`
	Request      json.RawMessage `json:"request"`
	Attributes   map[string]any  `json:"attributes"`
	GenerationID string          `json:"generation_id"`
	Error        string          `json:"error"`
	At           string          `json:"at,omitempty"`
}

type Output struct {
	Index        int    `json:"index"`
	ID           string `json:"id"`
	MediaURL     string `json:"media_url"`
	ThumbnailURL string `json:"thumbnail_url"`
	Path         string `json:"path"`
	Size         int64  `json:"size"`
	ModTime      string `json:"mtime,omitempty"`
	SHA256       string `json:"sha256"`
	ContentType  string `json:"content_type"`
	// Stored says whether the object store holds the file's bytes, as
	// recorded when apply uploaded them.
	Stored bool `json:"stored"`
}

type Intent struct {
	Address      string `json:"address"`
	Kind         string `json:"kind"`
	Endpoint     string `json:"endpoint"`
	Fingerprint  string `json:"fingerprint"`
	GenerationID string `json:"generation_id"`
	CreatedAt    string `json:"created_at,omitempty"`
	SubmittedAt  string `json:"submitted_at,omitempty"`
}

func Time(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// encodeResource is one record in the JSON format, with what rh hides
// replaced by sensitiveText.
func encodeResource(rec *statefile.Resource, protected bool, rh *secrets.Record) Resource {
	r := Resource{
		Address:       rec.Addr.String(),
		ModuleAddress: rec.Addr.Resource.Module.String(),
		Resource:      rec.Addr.Resource.String(),
		Kind:          rec.Addr.Resource.Kind.String(),
		Endpoint:      rec.Endpoint.Path(),
		Fingerprint:   rec.Fingerprint,
		GenerationID:  rec.GenerationID,
		CreationID:    rec.CreationID,
		Version:       rec.Version,
		Usage:         rec.Usage,
		Status:        rec.Status,
		Error:         rec.Error,
		Dir:           rec.Dir,
		WatermarkFree: rec.WatermarkFree,
		Request:       rh.JSON(rec.Request),
		Attributes:    rh.Attrs(secrets.RecordAttrs(rec), secrets.Text),
		Detail:        rh.JSON(rec.Detail),
		Outputs:       []Output{},
		DependsOn:     make([]string, 0, len(rec.Deps)),
		Protected:     protected,
		CreatedAt:     Time(rec.CreatedAt),
		UpdatedAt:     Time(rec.UpdatedAt),
	}
	if len(r.Request) == 0 {
		r.Request = json.RawMessage("null")
	}
	for _, d := range rec.Deps {
		r.DependsOn = append(r.DependsOn, d.String())
	}
	if f := rec.Failure; f != nil {
		r.Failure = &Failure{Endpoint: f.Endpoint.Path(), Fingerprint: f.Fingerprint, Request: rh.JSON(f.Request),
			Attributes: rh.Attrs(secrets.FailureAttrs(f), secrets.Text), GenerationID: f.GenerationID, Error: rh.Text(f.Error), At: Time(f.At)}
		if len(r.Failure.Request) == 0 {
			r.Failure.Request = json.RawMessage("null")
		}
	}
	for _, o := range rec.Outputs {
		r.Outputs = append(r.Outputs, encodeOutput(o))
	}
	return r
}

func encodeOutput(o statefile.Output) Output {
	return Output{
		Index: o.Index, ID: o.ID, MediaURL: o.MediaURL, ThumbnailURL: o.ThumbnailURL,
		Path: o.Path, Size: o.Size, ModTime: Time(o.ModTime), SHA256: o.SHA256, ContentType: o.ContentType, Stored: o.Stored,
	}
}

// Write writes the state document, with what h hides replaced
// by sensitiveText, and the history entries of hist. A nil snap (no state
// file) is written as an empty state.
func Write(w io.Writer, snap *statefile.Snapshot, service string, h *secrets.Hider, hist *history.View, entries []*statefile.Resource) error {
	doc := Document{
		FormatVersion: FormatVersion,
		Service:       service,
		Resources:     []Resource{},
		Intents:       []Intent{},
		History:       []HistoryEntry{},
	}
	if hist != nil {
		doc.History = EncodeHistory(hist, entries)
	}
	if snap != nil {
		doc.Lineage, doc.Serial = snap.Meta.Lineage, snap.Meta.Serial
		for _, addr := range addrs.SortedKeys(snap.Resources) {
			rec := snap.Resources[addr]
			doc.Resources = append(doc.Resources, encodeResource(rec, snap.Protections[addr], h.Of(rec)))
		}
		for _, addr := range addrs.SortedKeys(snap.Intents) {
			it := snap.Intents[addr]
			doc.Intents = append(doc.Intents, Intent{
				Address: it.Addr.String(), Kind: it.Addr.Resource.Kind.String(), Endpoint: it.Endpoint.Path(), Fingerprint: it.Fingerprint,
				GenerationID: it.GenerationID, CreatedAt: Time(it.CreatedAt), SubmittedAt: Time(it.SubmittedAt),
			})
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// FormatVersion is the version of the state, history and outputs
// documents: fields are only ever added.
const FormatVersion = "1"
