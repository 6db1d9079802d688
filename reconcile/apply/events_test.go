package apply

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/reconcile/plans"
)

// TestApplyEvents checks what a watcher of an apply is told, in order, of
// one generation.
func TestApplyEvents(t *testing.T) {
	tests := []struct {
		name   string
		job    fakeJob
		resume bool
		phases []Phase
		// statuses and known are those of the running events.
		statuses []string
		known    []bool
		warning  string
	}{
		{
			name: "a generation", job: fakeJob{statuses: []string{"pending", "processing", "succeed"}, outputs: 2},
			phases:   []Phase{PhaseSubmitting, PhaseSubmitted, PhaseRunning, PhaseRunning, PhaseRunning, PhaseDownloading, PhaseDone},
			statuses: []string{"pending", "processing", "succeed"}, known: []bool{true, true, true},
		},
		{
			name: "a resume", resume: true, job: fakeJob{statuses: []string{"processing", "succeed"}, outputs: 2},
			phases:   []Phase{PhaseSubmitted, PhaseRunning, PhaseRunning, PhaseDownloading, PhaseDone},
			statuses: []string{"processing", "succeed"}, known: []bool{true, true},
		},
		{
			name: "an undocumented status is warned about once", job: fakeJob{statuses: []string{"queued_for_gpu", "queued_for_gpu", "succeed"}, outputs: 2},
			phases:   []Phase{PhaseSubmitting, PhaseSubmitted, PhaseWarning, PhaseRunning, PhaseRunning, PhaseRunning, PhaseDownloading, PhaseDone},
			statuses: []string{"queued_for_gpu", "queued_for_gpu", "succeed"}, known: []bool{false, false, true},
			warning: `unknown status "queued_for_gpu"`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Every request body contains "": the script is every job's.
			svc := &fakeService{scripts: map[string]fakeJob{"": tc.job}}
			w := newApplyDir(t, svc)
			id := "job-1"
			if tc.resume {
				id = "job-7"
				svc.addJob(id, addrs.Image, tc.job)
				w.configure(appleConfig)
				w.interrupted("image.a", id)
			}
			w.apply(context.Background(), w.plan(appleConfig))
			evs := w.eventsOf("image.a")
			if got := phasesOf(evs); !slices.Equal(got, tc.phases) {
				t.Fatalf("phases %v, want %v", got, tc.phases)
			}
			var statuses []string
			var known []bool
			action := plans.Create
			if tc.resume {
				action = plans.Resume
			}
			for _, ev := range evs {
				if ev.Time.IsZero() || ev.Action != action {
					t.Errorf("event %v: time %v, action %s", ev.Phase, ev.Time, ev.Action)
				}
				switch ev.Phase {
				case PhaseSubmitted:
					if ev.GenerationID != id || ev.Resumed != tc.resume {
						t.Errorf("submitted: job %q resumed %v, want %s %v", ev.GenerationID, ev.Resumed, id, tc.resume)
					}
				case PhaseRunning:
					statuses, known = append(statuses, ev.Status), append(known, ev.KnownStatus)
				case PhaseWarning:
					if ev.Err == nil || !strings.Contains(ev.Err.Error(), tc.warning) || ev.GenerationID != id {
						t.Errorf("warning %v, want it to say %s", ev.Err, tc.warning)
					}
				case PhaseDone:
					if ev.Files != 2 || ev.Dir != "generated/image/a" || ev.GenerationID != id {
						t.Errorf("done: %d files in %q of %q, want 2 in generated/image/a of %s", ev.Files, ev.Dir, ev.GenerationID, id)
					}
				}
			}
			if !slices.Equal(statuses, tc.statuses) || !slices.Equal(known, tc.known) {
				t.Errorf("running statuses %q known %v, want %q %v", statuses, known, tc.statuses, tc.known)
			}
		})
	}
}

// TestPhaseNames checks the names progress reports give phases: no two
// alike, none empty, and a value past the names prints as what it is.
func TestPhaseNames(t *testing.T) {
	for got, want := range map[string]string{
		Phase(0).String():  "Phase(0)",
		Phase(99).String(): "Phase(99)",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	phases := map[string]bool{}
	for p := PhaseSubmitting; p <= PhaseWarning; p++ {
		if s := p.String(); s == "" || phases[s] || strings.HasPrefix(s, "Phase(") {
			t.Errorf("phase %d is named %q", p, s)
		}
		phases[p.String()] = true
	}
}
