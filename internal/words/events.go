package words

import (
	"fmt"

	"github.com/genform/genform/reconcile"
)

// Event is what an event says beyond its phase and status, in words.
func Event(ev reconcile.Event) string {
	switch ev.Phase {
	case reconcile.PhaseSubmitted:
		if ev.Resumed {
			return "resuming"
		}
	case reconcile.PhaseDone:
		switch ev.Action {
		case reconcile.Create, reconcile.Replace, reconcile.Resume:
			return fmt.Sprintf("%d file(s) in %s", ev.Files, ev.Dir)
		case reconcile.Update:
			return Reason(&reconcile.Change{Addr: ev.Addr, Action: ev.Action, Reason: ev.Reason})
		case reconcile.Restore:
			return fmt.Sprintf("restored generation %s from the history: %d file(s) in %s", ev.GenerationID, ev.Files, ev.Dir)
		case reconcile.Move:
			return "moved from " + ev.PrevAddr.String()
		case reconcile.Delete:
			return "files removed"
		}
	case reconcile.PhaseFailed, reconcile.PhaseSkipped, reconcile.PhaseWarning:
		if ev.Err != nil {
			return ev.Err.Error()
		}
	case reconcile.PhaseRetrying:
		return Retry(ev.Retry)
	}
	return ""
}
