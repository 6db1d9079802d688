package views

import (
	"encoding/json"
	"math/big"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/genform/genform/config"
)

func TestFormatCty(t *testing.T) {
	tests := []struct {
		name string
		v    cty.Value
		want string
		json string
	}{
		{"string", cty.StringVal("a \"b\""), `"a \"b\""`, `"a \"b\""`},
		{"number", cty.NumberVal(big.NewFloat(1.5)), "1.5", "1.5"},
		{"unknown", cty.UnknownVal(cty.String), "(known after apply)", "null"},
		{"null", cty.NullVal(cty.String), "null", "null"},
		{"empty list", cty.ListValEmpty(cty.String), "[]", "[]"},
		{"list", cty.TupleVal([]cty.Value{cty.StringVal("x"), cty.True}), "[\n  \"x\",\n  true,\n]", `["x",true]`},
		{"object", cty.ObjectVal(map[string]cty.Value{"b": cty.UnknownVal(cty.String), "long key": cty.NumberIntVal(2)}),
			"{\n  b          = (known after apply)\n  \"long key\" = 2\n}", `{"b":null,"long key":2}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Value(tt.v, ""); got != tt.want {
				t.Errorf("formatCty = %q, want %q", got, tt.want)
			}
			b, err := json.Marshal(config.JSONValue(tt.v))
			if err != nil || string(b) != tt.json {
				t.Errorf("ctyToJSON = %s, %v; want %s", b, err, tt.json)
			}
		})
	}
}

func TestDotQuote(t *testing.T) {
	if got, want := dotQuote(`image.v["a\b"]`), `"image.v[\"a\\b\"]"`; got != want {
		t.Errorf("dotQuote = %s, want %s", got, want)
	}
}
