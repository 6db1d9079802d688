package reconcile

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/genform/genform/statefile/atomicfile"
)

// planFileKind marks a saved plan, so a random JSON file is not taken for one.
const planFileKind = "genform-plan"

type planFile struct {
	Kind string `json:"kind"`
	*Plan
}

// WritePlanFile saves plan to path atomically, readable only by its owner
// (it carries variable values).
func WritePlanFile(path string, plan *Plan) error {
	b, err := json.MarshalIndent(planFile{Kind: planFileKind, Plan: plan}, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the plan: %w", err)
	}
	if err := atomicfile.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("saving the plan: %w", err)
	}
	return nil
}

// ReadPlanFile loads a plan saved by WritePlanFile.
func ReadPlanFile(path string) (*Plan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the saved plan: %w", err)
	}
	var pf planFile
	if err := json.Unmarshal(b, &pf); err != nil || pf.Kind != planFileKind || pf.Plan == nil {
		return nil, fmt.Errorf("%s is not a plan saved by 'genform plan -out'", path)
	}
	if pf.FormatVersion != FormatVersion {
		return nil, fmt.Errorf("%s was saved in plan format %q; this genform reads format %q: run plan again", path, pf.FormatVersion, FormatVersion)
	}
	return pf.Plan, nil
}
