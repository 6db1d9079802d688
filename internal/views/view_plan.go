package views

import (
	"fmt"

	"github.com/genform/genform/internal/formats/jsonplan"
	"github.com/genform/genform/internal/operation/outcome"
	"github.com/genform/genform/reconcile/plans"
)

// Plan is the view of genform plan.
type Plan interface {
	// Plan shows the plan; services are those its changes are made with.
	Plan(p *plans.Plan, services outcome.Services) error
	// Saved says that the plan was saved to path, and how to apply it.
	Saved(path string)
}

// NewPlan is plan's view in format f: Human, JSON (the plan document)
// or Markdown (the pull-request comment).
func NewPlan(s *Streams, f Format) Plan {
	switch f {
	case JSON:
		return planJSON{s}
	case Markdown:
		return planMarkdown{s}
	}
	return planHuman{s}
}

type planHuman struct{ *Streams }

func (v planHuman) Plan(p *plans.Plan, services outcome.Services) error {
	writePlan(v.Stdout, p, serviceLine(services))
	return nil
}

func (v planHuman) Saved(path string) {
	fmt.Fprintf(v.Stdout, "\nSaved the plan to: %s\nTo make exactly these changes, run: genform apply %s\n", path, path)
}

// planJSON writes the plan document alone: a saved plan is not
// mentioned, so that standard output stays one document.
type planJSON struct{ *Streams }

func (v planJSON) Plan(p *plans.Plan, _ outcome.Services) error { return jsonplan.Write(v.Stdout, p) }

func (planJSON) Saved(string) {}

// planMarkdown writes the comment alone, as it is posted.
type planMarkdown struct{ *Streams }

func (v planMarkdown) Plan(p *plans.Plan, services outcome.Services) error {
	writePlanMarkdown(v.Stdout, p, serviceLine(services))
	return nil
}

func (planMarkdown) Saved(string) {}
