package views

import (
	"fmt"
	"sync"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/formats/jsonapply"
	"github.com/genform/genform/internal/operation/outcome"
	"github.com/genform/genform/internal/words"
	"github.com/genform/genform/reconcile/apply"
	"github.com/genform/genform/reconcile/plans"
	"github.com/zclconf/go-cty/cty"
)

// Apply is the view of genform apply and genform destroy: the plan to
// approve, the progress of the run, and its result.
type Apply interface {
	// Plan shows the plan to approve; services are those its changes
	// are made with.
	Plan(p *plans.Plan, services outcome.Services)
	// NoState says that destroy found no state to destroy.
	NoState()
	// Idle ends a run whose plan p has no changes; res holds what waits
	// for a decision, which is an error.
	Idle(p *plans.Plan, res *apply.Result)
	// Started says that the run carrying out p begins.
	Started(p *plans.Plan)
	// Event shows one event of the run.
	Event(ev apply.Event)
	// Result ends the run with what it did.
	Result(res *apply.Result)
	// ServiceFailed ends a run that err stopped before anything was
	// carried out; tokenSet is false when no token was sent at all.
	ServiceFailed(err error, tokenSet bool)
	// Outputs shows the configuration's outputs after an apply, sensitive
	// ones hidden; outs is never empty.
	Outputs(outs []*config.Output, values map[string]cty.Value)
}

// NewApply is the view of apply (destroy false) or destroy in format f:
// Human, or JSON (apply -json's progress and result lines).
func NewApply(s *Streams, f Format, destroy bool) Apply {
	if f == JSON {
		return &applyJSON{Streams: s}
	}
	verb := "Apply"
	if destroy {
		verb = "Destroy"
	}
	return &applyHuman{Streams: s, verb: verb}
}

// eventWarning is a warning event in one line: worth telling in every
// run (an undocumented job status, a stale file that could not be
// removed), not only a debug one.
func eventWarning(ev apply.Event) string {
	if ev.Addr.IsZero() {
		return fmt.Sprint(ev.Err)
	}
	return fmt.Sprintf("%s: %v", ev.Addr, ev.Err)
}

// waitingError says that generations wait for a decision, after a run
// that carried nothing out.
func (s *Streams) waitingError(res *apply.Result) {
	if n := len(res.PossiblyPaid); n > 0 {
		s.Errorf("%d generation%s may already have been paid for and wait%s for your decision (see above); nothing was sent", n, words.Plural(n), map[bool]string{true: "s", false: ""}[n == 1])
	}
}

// applyHuman shows the plan, then bars or lines as the run goes, its
// warnings on stderr as they come, and the closing summary.
type applyHuman struct {
	*Streams
	verb     string // "Apply" or "Destroy"
	shown    bool   // the plan was shown, summary line and all
	progress Progress
}

func (v *applyHuman) Plan(p *plans.Plan, services outcome.Services) {
	writePlan(v.Stdout, p, serviceLine(services))
	v.shown = true
}

func (v *applyHuman) NoState() {
	fmt.Fprintln(v.Stdout, "No changes. There is no state, so nothing to destroy.")
}

func (v *applyHuman) Idle(p *plans.Plan, res *apply.Result) {
	if !v.shown {
		// A saved plan is applied without being shown again: its
		// summary says why nothing happens.
		fmt.Fprintln(v.Stdout, summaryLine(p))
	}
	v.waitingError(res)
}

func (v *applyHuman) Started(p *plans.Plan) {
	total := 0
	for _, c := range p.Changes {
		if c.Action != plans.NoOp {
			total++
		}
	}
	v.progress = NewProgress(v.Streams, total)
	fmt.Fprintln(v.Stdout)
}

func (v *applyHuman) Event(ev apply.Event) {
	if ev.Phase == apply.PhaseWarning {
		fmt.Fprintf(v.Stderr, "Warning: %s\n", eventWarning(ev))
	}
	v.progress.Event(ev)
}

func (v *applyHuman) stop() {
	if v.progress != nil {
		v.progress.Close()
	}
}

func (v *applyHuman) Result(res *apply.Result) {
	v.stop()
	writeResult(v.Streams, v.verb, res)
}

func (v *applyHuman) ServiceFailed(err error, tokenSet bool) {
	v.stop()
	serviceFailed(v.Streams, tokenSet, err, "nothing was submitted")
}

// applyJSON writes one progress line an event and one result line, whose
// warnings are those of the run: nothing else goes to stdout.
type applyJSON struct {
	*Streams
	progress *jsonapply.Progress
	mu       sync.Mutex // warnings
	warnings []string
}

func (*applyJSON) Plan(*plans.Plan, outcome.Services) {}

func (*applyJSON) NoState() {}

func (v *applyJSON) Idle(_ *plans.Plan, res *apply.Result) {
	jsonapply.WriteResult(v.Stdout, res, nil)
	v.waitingError(res)
}

func (v *applyJSON) Started(*plans.Plan) { v.progress = jsonapply.NewProgress(v.Stdout) }

func (v *applyJSON) Event(ev apply.Event) {
	if ev.Phase == apply.PhaseWarning {
		v.mu.Lock()
		v.warnings = append(v.warnings, eventWarning(ev))
		v.mu.Unlock()
	}
	v.progress.Event(ev)
}

func (v *applyJSON) Result(res *apply.Result) {
	jsonapply.WriteResult(v.Stdout, res, v.warnings)
}

func (v *applyJSON) Outputs(outs []*config.Output, values map[string]cty.Value) {
	jsonapply.WriteOutputs(v.Stdout, sortedOutputs(outs), values)
}

func (v *applyHuman) Outputs(outs []*config.Output, values map[string]cty.Value) {
	fmt.Fprint(v.Stdout, "\nOutputs:\n\n")
	outputHuman{v.Streams}.Values(outs, values)
}

func (v *applyJSON) ServiceFailed(err error, tokenSet bool) {
	serviceFailed(v.Streams, tokenSet, err, "nothing was submitted")
}
