package jsonplan

import (
	"encoding/json"
	"io"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/secrets"
	"github.com/genform/genform/internal/words"
	"github.com/genform/genform/reconcile/plans"
)

// Document is the public JSON form of a plan (plan -json, show -json
// PLANFILE), format_version "1": fields are only ever added. The engine's
// Plan is not this document; this encoder is what scripts rely on.
type Document struct {
	FormatVersion string   `json:"format_version"`
	Service       string   `json:"service"`
	Lineage       string   `json:"lineage,omitempty"`
	Serial        uint64   `json:"serial"`
	Changes       []Change `json:"changes"`
	Summary       Summary  `json:"summary"`
	HasChanges    bool     `json:"has_changes"`
}

type Change struct {
	Address         string `json:"address"`
	PreviousAddress string `json:"previous_address,omitempty"`
	// ModuleAddress is the module instance the resource is declared in,
	// absent for the root module's, as Terraform's plan gives it.
	ModuleAddress string `json:"module_address,omitempty"`
	Resource      string `json:"resource"`
	Kind          string `json:"kind"`
	Action        string `json:"action"`
	Reason        string `json:"reason,omitempty"`
	ReasonCode    string `json:"reason_code,omitempty"`
	Values
	Warnings []string `json:"warnings,omitempty"`
	// Cost is the change's estimate as a decimal string, present when
	// the configuration sets prices and the change makes a generation
	// ("unknown" when its kind has no price).
	Cost string `json:"cost,omitempty"`
}

// Values is what the plan document and the saved plan file say
// alike of a change: its attributes and where its files go. The values of
// sensitive attributes are whatever placeholder the encoder chose.
type Values struct {
	Attrs        []AttrChange   `json:"attributes,omitempty"`
	Before       map[string]any `json:"before,omitempty"`
	After        map[string]any `json:"after,omitempty"`
	AfterUnknown []string       `json:"after_unknown,omitempty"`
	Fingerprint  string         `json:"fingerprint,omitempty"`
	Media        int            `json:"media"`
	// MediaDefault is true when media is the service's (or the model's)
	// default count of images: the block sets no image_number, or sets
	// that same count.
	MediaDefault bool `json:"media_default,omitempty"`
	Seconds      int  `json:"seconds,omitempty"`
	// AtMost is true when media or seconds is known only after apply and
	// is the most the service allows: the cost is an upper bound.
	AtMost bool `json:"at_most,omitempty"`
	// Uncounted names a count field of the input whose value the plan
	// cannot count (known only after apply, or not a whole number),
	// taken as 1 in media: the cost is then a lower bound.
	Uncounted    *Uncounted `json:"uncounted,omitempty"`
	Dir          string     `json:"dir,omitempty"`
	GenerationID string     `json:"generation_id,omitempty"`
	// RestoredFrom names the workspace whose state recorded the
	// generation a restore takes back, when it is not the plan's own.
	RestoredFrom string   `json:"restored_from_workspace,omitempty"`
	Redownload   []int    `json:"redownload,omitempty"`
	Sensitive    []string `json:"sensitive,omitempty"`
	// Store says how much of the recorded files' bytes the object store
	// holds, as the state recorded at upload: "all", "some" or "none";
	// absent without a store, or without recorded files.
	Store string `json:"store,omitempty"`
	// Provider and Model name the live provider's model a change is made
	// with; both absent for the reference service.
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	// ModelPrices are that model's prices, when the configuration sets
	// them.
	ModelPrices *Prices `json:"model_prices,omitempty"`
	// Width and Height are the size of each image or video frame the
	// generation makes, as the model's tables read it, for the prices by
	// the megapixel or the resolution; absent when not known.
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
}

// Uncounted is a count field of a change's input that the plan cannot
// count: key names it ("input.num_images"), unknown says its value is
// known only after apply (false: it is not a whole number of at least 1).
type Uncounted struct {
	Key     string `json:"key"`
	Unknown bool   `json:"unknown,omitempty"`
}

func encodeUncounted(u *plans.Uncounted) *Uncounted {
	if u == nil {
		return nil
	}
	return &Uncounted{Key: u.Key, Unknown: u.Unknown}
}

// EncodeValues encodes c's values, sensitive ones as placeholder.
func EncodeValues(c *plans.Change, placeholder any) Values {
	attrs, before, after := secrets.Redact(c, placeholder)
	v := Values{
		Before:       before,
		After:        after,
		AfterUnknown: c.AfterUnknown,
		Fingerprint:  c.Fingerprint,
		Media:        c.Media,
		MediaDefault: c.MediaDefault,
		Seconds:      c.Seconds,
		AtMost:       c.AtMost,
		Uncounted:    encodeUncounted(c.Uncounted),
		Dir:          c.Dir,
		GenerationID: c.GenerationID,
		Redownload:   c.Redownload,
		Sensitive:    c.Sensitive,
		Store:        c.Store.String(),
	}
	if c.Reason != nil {
		v.RestoredFrom = c.Reason.Workspace
	}
	if m := c.Model; m != nil {
		v.Provider, v.Model, v.ModelPrices = m.Endpoint.Provider(), m.Endpoint.Target(), EncodePrices(m.Prices)
		v.Width, v.Height = m.Width, m.Height
	}
	for _, a := range attrs {
		v.Attrs = append(v.Attrs, AttrChange(a))
	}
	return v
}

// Decode is the change that v encodes, as far as v tells; c's address
// is set.
func (v Values) Decode(c *plans.Change) error {
	c.Before, c.After, c.AfterUnknown = v.Before, v.After, v.AfterUnknown
	c.Fingerprint, c.Media, c.MediaDefault, c.Seconds, c.AtMost, c.Dir = v.Fingerprint, v.Media, v.MediaDefault, v.Seconds, v.AtMost, v.Dir
	c.GenerationID, c.Redownload, c.Sensitive = v.GenerationID, v.Redownload, v.Sensitive
	if u := v.Uncounted; u != nil {
		c.Uncounted = &plans.Uncounted{Key: u.Key, Unknown: u.Unknown}
	}
	st, err := plans.ParseStoreState(v.Store)
	if err != nil {
		return err
	}
	c.Store = st
	for _, a := range v.Attrs {
		c.Attrs = append(c.Attrs, plans.AttrChange(a))
	}
	if v.Provider == "" {
		return nil
	}
	prices, err := DecodePrices(v.ModelPrices)
	c.Model = plans.ModelOf(addrs.ModelEndpoint(v.Provider, v.Model, c.Kind()), prices)
	c.Model.Width, c.Model.Height = v.Width, v.Height
	return err
}

type AttrChange struct {
	Name    string `json:"name"`
	Before  any    `json:"before,omitempty"`
	After   any    `json:"after,omitempty"`
	Unknown bool   `json:"unknown,omitempty"`
}

type Summary struct {
	Generate   int `json:"generate"`
	Images     int `json:"images"`
	Videos     int `json:"videos"`
	Redownload int `json:"redownload"`
	// Upload counts the updates that only upload files the object store
	// lacks.
	Upload  int `json:"upload"`
	Move    int `json:"move"`
	Resume  int `json:"resume"`
	Restore int `json:"restore"`
	Delete  int `json:"delete"`
	NoOp    int `json:"no_op"`
	// PossiblyPaid counts the no-ops whose create request an earlier
	// apply sent without learning its outcome: nothing is sent for them
	// until the user decides (their changes carry reason_code
	// "answer_lost" and a warning).
	PossiblyPaid int `json:"possibly_paid"`
	// Refused counts the no-ops whose request the provider refused for
	// its content: nothing is sent until the request changes.
	Refused int `json:"refused"`
	// Cost is the estimate, present only when the configuration sets
	// prices.
	Cost *Cost `json:"cost,omitempty"`
}

// FormatVersion is the version of the public JSON documents: the plan
// and state documents (show -json, plan -json).
const FormatVersion = "1"

// encodeSummary is the plan document's summary.
func encodeSummary(p *plans.Plan) Summary {
	s := p.Summary()
	return Summary{
		Generate: s.Generate, Images: s.Images, Videos: s.Videos, Redownload: s.Redownload, Upload: s.Upload,
		Move: s.Move, Resume: s.Resume, Restore: s.Restore, Delete: s.Delete, NoOp: s.NoOp,
		PossiblyPaid: s.PossiblyPaid, Refused: s.Refused, Cost: encodeCost(p),
	}
}

func Write(w io.Writer, p *plans.Plan) error {
	doc := Document{
		FormatVersion: FormatVersion,
		Service:       p.Service,
		Lineage:       p.Lineage,
		Serial:        p.Serial,
		Changes:       make([]Change, 0, len(p.Changes)),
		Summary:       encodeSummary(p),
		HasChanges:    p.HasChanges(),
	}
	for _, c := range p.Changes {
		doc.Changes = append(doc.Changes, encodeChange(p, c))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// reasonCode is the change's reason code, "" for a no-op.
func reasonCode(c *plans.Change) string {
	if c.Reason == nil {
		return ""
	}
	return c.Reason.Code.String()
}

// encodeChange is one change of the plan document.
func encodeChange(p *plans.Plan, c *plans.Change) Change {
	cj := Change{
		Address:       c.Addr.String(),
		ModuleAddress: c.Addr.Resource.Module.String(),
		Resource:      c.Addr.Resource.String(),
		Kind:          c.Kind().String(),
		Action:        c.Action.String(),
		Reason:        words.Reason(c),
		ReasonCode:    reasonCode(c),
		Values:        EncodeValues(c, secrets.Text),
		Warnings:      words.Warnings(c),
	}
	if p.Priced() && c.Action.Generates() {
		if amount, ok := p.CostOf(c); ok {
			cj.Cost = amount.String()
		} else {
			cj.Cost = "unknown"
		}
	}
	if !c.PrevAddr.IsZero() {
		cj.PreviousAddress = c.PrevAddr.String()
	}
	return cj
}
