package jsonstate

import (
	"encoding/json"
	"io"

	"github.com/genform/genform/internal/history"
	"github.com/genform/genform/internal/secrets"
	"github.com/genform/genform/statefile"
)

// HistoryDocument is the JSON form of the history (history -json).
type HistoryDocument struct {
	FormatVersion string         `json:"format_version"`
	History       []HistoryEntry `json:"history"`
}

// HistoryEntry is one generation of the history, in the history
// document and the state document alike.
type HistoryEntry struct {
	Address      string          `json:"address"`
	GenerationID string          `json:"generation_id"`
	CreationID   string          `json:"creation_id"`
	Fingerprint  string          `json:"fingerprint"`
	Endpoint     string          `json:"endpoint"`
	Status       string          `json:"status"`
	Error        string          `json:"error,omitempty"`
	Version      string          `json:"version,omitempty"`
	Usage        json.RawMessage `json:"usage,omitempty"`
	State        string          `json:"state"`
	HeldBy       string          `json:"held_by,omitempty"`
	Cached       bool            `json:"cached"`
	Attributes   map[string]any  `json:"attributes"`
	Outputs      []Output        `json:"outputs"`
	RecordedAt   string          `json:"recorded_at,omitempty"`
	UpdatedAt    string          `json:"updated_at,omitempty"`
}

func EncodeHistory(h *history.View, entries []*statefile.Resource) []HistoryEntry {
	out := make([]HistoryEntry, 0, len(entries))
	for _, e := range entries {
		rh := h.Hide(e)
		j := HistoryEntry{
			Address: e.Addr.String(), GenerationID: e.GenerationID, CreationID: e.CreationID,
			Fingerprint: e.Fingerprint, Endpoint: e.Endpoint.Path(), Status: e.Status, Error: rh.Text(e.Error),
			Version: e.Version, Usage: e.Usage,
			State: h.State(e), Cached: h.Cached(e), Attributes: rh.Attrs(secrets.RecordAttrs(e), secrets.Text), Outputs: []Output{},
			RecordedAt: Time(e.CreatedAt), UpdatedAt: Time(e.UpdatedAt),
		}
		if held := h.HeldBy(e.GenerationID); !held.IsZero() {
			j.HeldBy = held.String()
		}
		for _, o := range e.Outputs {
			j.Outputs = append(j.Outputs, encodeOutput(o))
		}
		out = append(out, j)
	}
	return out
}

// WriteHistory writes the history document of entries.
func WriteHistory(w io.Writer, h *history.View, entries []*statefile.Resource) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(HistoryDocument{FormatVersion: FormatVersion, History: EncodeHistory(h, entries)})
}
