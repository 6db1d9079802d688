package jsonproviders

import (
	"encoding/json"
	"io"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/schema"
)

// FormatVersion is the document's version.
const FormatVersion = "1"

// Document is genform providers -json.
type Document struct {
	FormatVersion string     `json:"format_version"`
	Providers     []Provider `json:"providers"`
}

// Provider is one live provider.
type Provider struct {
	Name    string   `json:"name"`
	Title   string   `json:"title"`
	KeyEnv  string   `json:"key_env"`
	BaseURL string   `json:"base_url"`
	Kinds   []string `json:"kinds"`
	// Recovery is how a create whose answer was lost is found again:
	// "exact", "listing" or "none" (it then stays possibly paid).
	Recovery    string  `json:"recovery"`
	Cancel      bool    `json:"cancel"`
	URLLifetime string  `json:"url_lifetime"`
	Limits      Limits  `json:"limits"`
	Models      []Model `json:"models"`
}

// Limits are the provider's documented limits; 0 where it documents none.
type Limits struct {
	Parallelism       int `json:"parallelism"`
	MaxParallelism    int `json:"max_parallelism"`
	RequestsPerMinute int `json:"requests_per_minute"`
}

// Model is a listed model, or with ID "*" what any other model is taken
// to accept.
type Model struct {
	ID           string   `json:"id"`
	Kinds        []string `json:"kinds"`
	Attributes   []string `json:"attributes"`
	ImageNumbers []int64  `json:"image_numbers,omitempty"`
	Durations    []int64  `json:"durations,omitempty"`
	AspectRatios []string `json:"aspect_ratios,omitempty"`
	KeyFrames    int      `json:"key_frames"`
	// Deprecated and ShutDown are the days (YYYY-MM-DD) the provider
	// announced the model's retirement and stops serving it, and
	// Successor what it names in its place; absent when none is
	// announced.
	Deprecated string `json:"deprecated,omitempty"`
	ShutDown   string `json:"shut_down,omitempty"`
	Successor  string `json:"successor,omitempty"`
}

// Encode is the document of ps.
func Encode(ps []*schema.Provider) Document {
	doc := Document{FormatVersion: FormatVersion, Providers: []Provider{}}
	for _, p := range ps {
		jp := Provider{
			Name: p.Name, Title: p.Title, KeyEnv: p.KeyEnv, BaseURL: p.BaseURL,
			Kinds:       kindNames(p.Kinds()),
			Recovery:    recovery(p.Recovery),
			Cancel:      p.Cancel,
			URLLifetime: p.URLLifetime,
			Limits:      Limits{p.Limits.Parallelism, p.Limits.MaxParallelism, p.Limits.RequestsPerMinute},
		}
		for _, m := range p.ListedModels() {
			id := m.ID
			if id == "" {
				id = "*"
			}
			jp.Models = append(jp.Models, Model{
				ID: id, Kinds: kindNames(m.Kinds), Attributes: append([]string{}, m.Attrs...),
				ImageNumbers: m.ImageNumbers, Durations: m.Durations, AspectRatios: m.AspectRatios,
				KeyFrames:  keyFrames(m.Caps),
				Deprecated: string(m.Deprecated), ShutDown: string(m.ShutDown), Successor: m.Successor,
			})
		}
		doc.Providers = append(doc.Providers, jp)
	}
	return doc
}

// Write prints the document of ps on w, indented.
func Write(w io.Writer, ps []*schema.Provider) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(Encode(ps))
}

func kindNames(ks []addrs.Kind) []string {
	names := make([]string, 0, len(ks))
	for _, k := range ks {
		names = append(names, k.String())
	}
	return names
}

func recovery(r schema.Recovery) string {
	switch r {
	case schema.RecoverExact:
		return "exact"
	case schema.RecoverByListing:
		return "listing"
	}
	return "none"
}

// keyFrames is how many key frames a video model takes; 0 for an image
// model, whose source images (an edit's) are not key frames.
func keyFrames(c schema.Caps) int {
	if !c.Makes(addrs.Video) {
		return 0
	}
	return c.MaxSourceImages
}
