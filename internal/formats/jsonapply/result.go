package jsonapply

import (
	"encoding/json"
	"io"
	"time"

	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/words"
	"github.com/genform/genform/reconcile/apply"
	"github.com/zclconf/go-cty/cty"
)

// Result is the last line of apply -json.
type Result struct {
	Type      string   `json:"type"`
	Generated []string `json:"generated"`
	Resumed   []string `json:"resumed"`
	// Recovered are the generated or resumed instances whose create
	// answer was lost and whose job was found again on the provider.
	Recovered []string `json:"recovered"`
	Restored  []string `json:"restored"`
	Updated   []string `json:"updated"`
	// Uploaded are the updates that only uploaded files the object store
	// lacked.
	Uploaded []string `json:"uploaded,omitempty"`
	Moved    []string `json:"moved"`
	Deleted  []string `json:"deleted"`
	// Replaced are the generated instances whose new generation replaced
	// the one they held (its files went to the cache).
	Replaced    []string  `json:"replaced,omitempty"`
	Failed      []Failure `json:"failed"`
	Skipped     []Failure `json:"skipped"`
	Running     []Job     `json:"running"`
	Warnings    []string  `json:"warnings"`
	Interrupted bool      `json:"interrupted"`
	// Unrecorded are jobs paid for whose ids the state could not hold;
	// StateError says why.
	Unrecorded []Job  `json:"unrecorded,omitempty"`
	Unfinished []Job  `json:"unfinished,omitempty"`
	StateError string `json:"state_error,omitempty"`
	Refused    string `json:"refused,omitempty"`
	// PossiblyPaid are the generations whose create request was sent
	// without genform learning its outcome: nothing is sent for them
	// until the user imports the creation or applies with -replace.
	PossiblyPaid []PossiblyPaid `json:"possibly_paid"`
	// Unstored are the files the object store should hold and does not:
	// their uploads failed; the next apply uploads them.
	Unstored []Unstored `json:"unstored,omitempty"`
}

// Unstored is a file whose upload to the object store failed.
type Unstored struct {
	Address string `json:"address"`
	Path    string `json:"path"`
	// Generation is set for a file of a generation in the history, which
	// push uploads from the local cache.
	Generation string `json:"generation_id,omitempty"`
	Object     string `json:"object"`
	Message    string `json:"message"`
}

// PossiblyPaid is a generation that may have been paid for.
type PossiblyPaid struct {
	Address string    `json:"address"`
	SentAt  time.Time `json:"sent_at"`
	// Message is what came back instead of a job id, when this apply
	// sent the request.
	Message string `json:"message,omitempty"`
}

type Failure struct {
	Address string `json:"address"`
	Message string `json:"message"`
}

type Job struct {
	Address      string `json:"address"`
	GenerationID string `json:"generation_id"`
}

// WriteResult writes the result line. Every list that is always there is
// a list, [] when empty, never null: a script iterates over it without a
// check first (jq's .failed[] fails on null). The lists that are absent
// when empty (uploaded, unrecorded, unfinished, unstored) stay absent.
func WriteResult(w io.Writer, res *apply.Result, warnings []string) error {
	failures := func(list []apply.Failure) []Failure {
		out := make([]Failure, 0, len(list))
		for _, f := range list {
			out = append(out, Failure{Address: f.Addr.String(), Message: f.Err.Error()})
		}
		return out
	}
	doc := Result{
		Type:        "result",
		Generated:   addrList(res.Generated),
		Resumed:     addrList(res.Resumed),
		Recovered:   addrList(res.Recovered),
		Restored:    addrList(res.Restored),
		Updated:     addrList(res.Updated),
		Uploaded:    addrs.Strings(res.Uploaded),
		Moved:       addrList(res.Moved),
		Deleted:     addrList(res.Deleted),
		Replaced:    addrList(res.Replaced),
		Failed:      failures(res.Failed),
		Skipped:     failures(res.Skipped),
		Running:     make([]Job, 0, len(res.Running)),
		Warnings:    append(make([]string, 0, len(warnings)), warnings...),
		Interrupted: res.Interrupted,
	}
	for _, j := range res.Running {
		doc.Running = append(doc.Running, Job{Address: j.Addr.String(), GenerationID: j.GenerationID})
	}
	for _, j := range res.Unrecorded {
		doc.Unrecorded = append(doc.Unrecorded, Job{Address: j.Addr.String(), GenerationID: j.GenerationID})
	}
	for _, j := range res.Unfinished {
		doc.Unfinished = append(doc.Unfinished, Job{Address: j.Addr.String(), GenerationID: j.GenerationID})
	}
	doc.PossiblyPaid = []PossiblyPaid{}
	for _, pp := range res.PossiblyPaid {
		j := PossiblyPaid{Address: pp.Addr.String(), SentAt: pp.SentAt.UTC()}
		if pp.Err != nil {
			j.Message = pp.Err.Error()
		}
		doc.PossiblyPaid = append(doc.PossiblyPaid, j)
	}
	for _, u := range res.Unstored {
		doc.Unstored = append(doc.Unstored, Unstored{Address: u.Addr.String(), Path: u.Path, Generation: u.Generation, Object: u.Object, Message: u.Err.Error()})
	}
	if res.StateErr != nil {
		doc.StateError = res.StateErr.Error()
	}
	if res.Refused != nil {
		doc.Refused = words.ServiceError(res.Refused, true)
	}
	return json.NewEncoder(w).Encode(doc)
}

// addrList is list as strings, [] when empty.
func addrList(list []addrs.Instance) []string {
	if len(list) == 0 {
		return []string{}
	}
	return addrs.Strings(list)
}

// Outputs is the line apply -json ends with when the configuration
// declares outputs: each one's value (left out when sensitive), type and
// whether it is known, as genform output -json gives them.
type Outputs struct {
	Type    string                 `json:"type"` // "outputs"
	Outputs map[string]OutputValue `json:"outputs"`
}

// OutputValue is one output of the outputs line.
type OutputValue struct {
	Value     any             `json:"value,omitempty"`
	Type      json.RawMessage `json:"type"`
	Sensitive bool            `json:"sensitive"`
	Known     bool            `json:"known"`
}

// WriteOutputs writes the outputs line of outs, with values by name.
func WriteOutputs(w io.Writer, outs []*config.Output, values map[string]cty.Value) error {
	line := Outputs{Type: "outputs", Outputs: make(map[string]OutputValue, len(outs))}
	for _, o := range outs {
		v := values[o.Name]
		ty, err := ctyjson.MarshalType(v.Type())
		if err != nil {
			ty = json.RawMessage(`"dynamic"`)
		}
		ov := OutputValue{Type: ty, Sensitive: o.Sensitive, Known: v.IsWhollyKnown()}
		if !o.Sensitive {
			ov.Value = config.JSONValue(v)
		}
		line.Outputs[o.Name] = ov
	}
	return json.NewEncoder(w).Encode(line)
}
