package command

import (
	"fmt"

	"github.com/genform/genform/internal/words"

	"github.com/genform/genform/reconcile"
)

// This file writes what a person reads about the service as a whole rather
// than one change: an address where no service answers, a token it
// refuses, and the retries of requests that may yet pass.

// serviceFailed prints err, which ended a command before it changed
// anything, once, with what to do about it when it is the service's as a
// whole; outcome says what was left undone ("nothing was submitted").
func serviceFailed(env *Env, ep endpoint, err error, outcome string) int {
	if advice := words.ServiceAdvice(err); advice != "" {
		return env.Errorf("%s; %s. %s", words.ServiceError(err, ep.Token != ""), outcome, advice)
	}
	return env.Errorf("%v", err)
}

// renderRefused ends the output of an apply the service's refusal of the
// token stopped: what was done, what failed on its own, the jobs a rerun
// resumes, and the refusal, once.
func renderRefused(env *Env, res *reconcile.Result, summary string) {
	w := env.Stdout
	fmt.Fprintf(w, "\n%s %s\n", colRed.Sprint(colBold.Sprint("Apply stopped: the service refused the token.")), summary)
	for _, f := range res.Failed {
		env.Errorf("%s: %v", f.Addr, f.Err)
	}
	for _, f := range res.Skipped {
		env.Errorf("%s: %v", f.Addr, f.Err)
	}
	if len(res.Running) > 0 {
		fmt.Fprintln(w, "These jobs were submitted before the refusal; their ids are recorded in the state and the next apply resumes them:")
		for _, j := range res.Running {
			fmt.Fprintf(w, "  - %s (job %s)\n", j.Addr, j.GenerationID)
		}
	}
	env.Errorf("%s; nothing more was submitted. %s", words.ServiceError(res.Refused, true), words.ServiceAdvice(res.Refused))
}
