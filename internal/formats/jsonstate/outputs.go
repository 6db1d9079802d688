package jsonstate

import (
	"encoding/json"
	"io"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/genform/genform/config"
)

type OutputValue struct {
	Value     any             `json:"value"`
	Type      json.RawMessage `json:"type"`
	Sensitive bool            `json:"sensitive"`
	Known     bool            `json:"known"`
}

// WriteOutputs prints every output as Terraform's output -json does,
// sensitive values included (a script asked for them), with known saying
// whether the value is settled: an unknown value is null.
func WriteOutputs(w io.Writer, outs []*config.Output, values map[string]cty.Value) error {
	doc := make(map[string]OutputValue, len(outs))
	for _, o := range outs {
		v := values[o.Name]
		ty, err := ctyjson.MarshalType(v.Type())
		if err != nil {
			ty = json.RawMessage(`"dynamic"`)
		}
		doc[o.Name] = OutputValue{Value: config.JSONValue(v), Type: ty, Sensitive: o.Sensitive, Known: v.IsWhollyKnown()}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
