package views

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/zclconf/go-cty/cty"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/formats/jsonstate"
)

// Output is the view of genform output.
type Output interface {
	// Value shows the value v of the output called name.
	Value(name string, v cty.Value) error
	// Values shows every output of outs, with values by name, sensitive
	// ones hidden.
	Values(outs []*config.Output, values map[string]cty.Value) error
}

// NewOutput is output's view in format f: Human, JSON, or Raw (one value
// as it is, for a shell).
func NewOutput(s *Streams, f Format) Output {
	switch f {
	case JSON:
		return outputJSON{s}
	case Raw:
		return outputRaw{outputHuman{s}}
	}
	return outputHuman{s}
}

// sortedOutputs is outs in name order, as every format lists them.
func sortedOutputs(outs []*config.Output) []*config.Output {
	sorted := append([]*config.Output(nil), outs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	return sorted
}

type outputHuman struct{ *Streams }

func (v outputHuman) Value(_ string, val cty.Value) error {
	fmt.Fprintln(v.Stdout, Value(val, ""))
	return nil
}

func (v outputHuman) Values(outs []*config.Output, values map[string]cty.Value) error {
	if len(outs) == 0 {
		fmt.Fprintln(v.Stdout, "No outputs. Declare output blocks in the configuration to see values here.")
		return nil
	}
	for _, o := range sortedOutputs(outs) {
		val := "<sensitive>"
		if !o.Sensitive {
			val = Value(values[o.Name], "")
		}
		fmt.Fprintf(v.Stdout, "%s = %s\n", o.Name, val)
	}
	return nil
}

// outputRaw prints one value as it is; every output at once is refused
// before any is evaluated, and then reads as the human view.
type outputRaw struct{ outputHuman }

func (v outputRaw) Value(name string, val cty.Value) error {
	s, err := RawValue(val)
	if err != nil {
		return fmt.Errorf("output %s: %w", name, err)
	}
	fmt.Fprintln(v.Stdout, s)
	return nil
}

type outputJSON struct{ *Streams }

func (v outputJSON) Value(name string, val cty.Value) error {
	b, err := json.Marshal(config.JSONValue(val))
	if err != nil {
		return fmt.Errorf("encoding output %s: %w", name, err)
	}
	fmt.Fprintln(v.Stdout, string(b))
	return nil
}

func (v outputJSON) Values(outs []*config.Output, values map[string]cty.Value) error {
	if err := jsonstate.WriteOutputs(v.Stdout, sortedOutputs(outs), values); err != nil {
		return fmt.Errorf("writing the outputs: %w", err)
	}
	return nil
}
