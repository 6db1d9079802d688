package words

import (
	"fmt"

	"github.com/genform/genform/reconcile/apply"
	"github.com/genform/genform/reconcile/plans"
)

// Running is what a job's status says while apply waits for it: the
// service's own status and its progress ("queued 0%", "running 40%"),
// and once the job is finished, "job done" rather than the service's word
// for it ("succeed 100%" read as broken English); the download follows.
func Running(ev apply.Event) string {
	if ev.JobDone {
		return "job done"
	}
	return fmt.Sprintf("%s %.0f%%", ev.Status, ev.Progress*100)
}

// Event is what an event says beyond its phase and status, in words.
func Event(ev apply.Event) string {
	switch ev.Phase {
	case apply.PhaseSubmitted:
		if ev.Resumed {
			return "resuming"
		}
	case apply.PhaseDone:
		switch ev.Action {
		case plans.Create, plans.Replace, plans.Resume:
			return fmt.Sprintf("%d file(s) in %s", ev.Files, ev.Dir)
		case plans.Update:
			return Reason(&plans.Change{Addr: ev.Addr, Action: ev.Action, Reason: ev.Reason})
		case plans.Restore:
			return fmt.Sprintf("restored generation %s from the history: %d file(s) in %s", ev.GenerationID, ev.Files, ev.Dir)
		case plans.Move:
			return "moved from " + ev.PrevAddr.String()
		case plans.Delete:
			return "files removed"
		}
	case apply.PhaseFailed, apply.PhaseSkipped, apply.PhaseWarning:
		if ev.Err != nil {
			return ev.Err.Error()
		}
	case apply.PhaseRetrying:
		return Retry(ev.Retry)
	}
	return ""
}
