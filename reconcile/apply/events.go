package apply

import (
	"context"
	"fmt"
	"time"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/reconcile/plans"
)

// This file holds what an apply tells while it runs: the Events of each
// instance's steps, and the retries of the service client, reported as
// Events of the instance whose request is retried.

// Phase is a step of one instance's apply, reported in Events.
type Phase uint8

// The phases an Event reports.
const (
	PhaseSubmitting  Phase = iota + 1 // the intent is recorded; the create request is being sent
	PhaseSubmitted                    // the job's id is recorded (Resumed: an earlier apply's job)
	PhaseRunning                      // the service reported Status and Progress
	PhaseDownloading                  // the outputs are being downloaded
	PhaseDone                         // the change is made and recorded
	PhaseFailed                       // the change failed with Err
	PhaseSkipped                      // not attempted, because what it depends on failed (Err)
	PhaseInterrupted                  // stopped by the interrupt; a rerun resumes it
	PhaseWarning                      // something worth telling, Err, that does not fail the change
	PhaseRetrying                     // a request failed in a way that may pass; Retry says how it is retried
)

var phaseNames = [...]string{
	PhaseSubmitting:  "submitting",
	PhaseSubmitted:   "submitted",
	PhaseRunning:     "running",
	PhaseDownloading: "downloading",
	PhaseDone:        "done",
	PhaseFailed:      "failed",
	PhaseSkipped:     "skipped",
	PhaseInterrupted: "interrupted",
	PhaseWarning:     "warning",
	PhaseRetrying:    "retrying",
}

// String is the phase's stable name.
func (p Phase) String() string {
	if p >= PhaseSubmitting && int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return fmt.Sprintf("Phase(%d)", uint8(p))
}

// Event reports progress of one instance. Events are delivered from many
// goroutines; the callback must be safe for concurrent use and quick.
type Event struct {
	Time   time.Time
	Addr   addrs.Instance
	Action plans.Action
	Phase  Phase
	// Status is the service's raw status and Progress its progress
	// (PhaseRunning); KnownStatus is false for a status the service does
	// not document, which is treated as running.
	Status      string
	Progress    float64
	KnownStatus bool
	// JobDone is true when the service reports the job finished with its
	// files to fetch (PhaseRunning), whatever its raw status says: each
	// service spells it its own way ("succeed", "succeeded", "COMPLETED").
	JobDone bool
	// GenerationID is the job concerned, when there is one.
	GenerationID string
	// Resumed marks the PhaseSubmitted of a job an earlier apply submitted.
	Resumed bool
	// Files and Dir say what a finished generation or update left on disk
	// (PhaseDone).
	Files int
	Dir   string
	// PrevAddr is where a finished move came from (PhaseDone).
	PrevAddr addrs.Instance
	// Reason is the change's reason (PhaseDone of an update).
	Reason *plans.Reason
	// Err is why a change failed or was skipped, or the warning.
	Err error
	// Retry is the failed request and when it is sent again (PhaseRetrying).
	Retry *provider.RetryInfo
}

func (r *applyRun) emit(ev Event) {
	if r.e.Events == nil {
		return
	}
	ev.Time = time.Now()
	r.e.Events(ev)
}

// callKey is the context key of a callTag.
type callKey struct{}

// callTag says which apply and which instance a service request is for.
type callTag struct {
	run  *applyRun
	addr addrs.Instance // zero for the apply's own check
}

// on is the context of a service request made for addr, from which
// ReportRetry learns whose request the client retries.
func (r *applyRun) on(addr addrs.Instance) context.Context {
	return context.WithValue(r.ctx, callKey{}, callTag{run: r, addr: addr})
}

// ReportRetry reports a retry of the service client as a PhaseRetrying
// event of the apply and the instance the request was for (a zero Addr for
// the check before the apply); it is meant as apiclient.Config.OnRetry of
// the client an Engine uses. Requests made outside an apply are not
// reported.
func ReportRetry(ctx context.Context, info provider.RetryInfo) {
	tag, ok := ctx.Value(callKey{}).(callTag)
	if !ok {
		return
	}
	ev := Event{Addr: tag.addr, Phase: PhaseRetrying, Retry: &info}
	if tag.run.plan != nil {
		for _, c := range tag.run.plan.Changes {
			if c.Addr == tag.addr {
				ev.Action = c.Action
				break
			}
		}
	}
	tag.run.emit(ev)
}
