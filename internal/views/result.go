package views

import (
	"errors"
	"fmt"
	"strings"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/words"
	"github.com/genform/genform/reconcile/apply"
)

// writeResult writes the closing lines of an apply or a destroy (verb
// "Apply" or "Destroy", as Terraform's "Destroy complete!").
func writeResult(env *Streams, verb string, res *apply.Result) {
	defer renderUnrecorded(env, res)
	defer renderPossiblyPaid(env, res)
	defer renderUnstored(env, res)
	w := env.Stdout
	restored := ""
	if len(res.Restored) > 0 {
		restored = fmt.Sprintf("%d restored, ", len(res.Restored))
	}
	uploaded := ""
	if len(res.Uploaded) > 0 {
		uploaded = fmt.Sprintf("%d uploaded, ", len(res.Uploaded))
	}
	deleted := fmt.Sprintf("%d deleted", len(res.Deleted)+len(res.Replaced))
	if n := len(res.Replaced); n > 0 {
		deleted += fmt.Sprintf(" (%d replaced: the old files are in the cache)", n)
	}
	summary := fmt.Sprintf("%d generated, %d resumed, %s%d re-downloaded, %s%d moved, %s.",
		len(res.Generated), len(res.Resumed), restored, len(res.Updated), uploaded, len(res.Moved), deleted)
	if verb == "Destroy" {
		// destroy only deletes: its summary says that alone, as
		// Terraform's does.
		summary = fmt.Sprintf("Resources: %d destroyed (their files deleted; the creations stay on the service, and the history keeps them restorable).", len(res.Deleted))
	}
	if n := len(res.Recovered); n > 0 {
		verb := "were"
		if n == 1 {
			verb = "was"
		}
		summary += fmt.Sprintf(" %d of them had lost the answer to their create request and %s found again on the provider, paid for once.", n, verb)
	}
	if res.Interrupted {
		fmt.Fprintf(w, "\n%s %s\n", colYellow.Sprint(colBold.Sprint(verb+" interrupted.")), summary)
		if len(res.Running) > 0 {
			fmt.Fprintln(w, "These jobs are still running on the service; their ids are recorded in the state:")
			for _, j := range res.Running {
				fmt.Fprintf(w, "  - %s (job %s)\n", j.Addr, j.GenerationID)
			}
		}
		fmt.Fprintf(w, "Run 'genform %s' again to resume them; nothing is submitted twice.\n", strings.ToLower(verb))
		return
	}
	if res.Refused != nil {
		renderRefused(env, res, summary)
		return
	}
	if len(res.Failed) == 0 && len(res.Skipped) == 0 {
		if len(res.PossiblyPaid) > 0 {
			fmt.Fprintf(w, "\n%s %s\n", colYellow.Sprint(colBold.Sprint(verb+" finished, but generations wait for your decision.")), summary)
			return
		}
		if n := len(res.Unstored); n > 0 {
			// The generations are done and recorded; only their copies
			// in the store wait: one headline says both, and the list
			// below names the files.
			wait := "wait"
			if n == 1 {
				wait = "waits"
			}
			fmt.Fprintf(w, "\n%s %s\n", colYellow.Sprint(colBold.Sprintf("%s finished: what was generated is recorded, but %d file%s %s for upload to the object store.", verb, n, words.Plural(n), wait)), summary)
			return
		}
		fmt.Fprintf(w, "\n%s %s\n", colGreen.Sprint(colBold.Sprint(verb+" complete!")), summary)
		return
	}
	fmt.Fprintf(w, "\n%s %s\n", colRed.Sprint(colBold.Sprint(verb+" finished with errors.")), summary)
	for _, f := range res.Failed {
		env.Errorf("%s: %v", f.Addr, f.Err)
	}
	for _, f := range res.Skipped {
		env.Errorf("%s: %v", f.Addr, f.Err)
	}
	for _, j := range res.Running {
		fmt.Fprintf(w, "  still running on the service: %s (job %s); rerun apply to resume it\n", j.Addr, j.GenerationID)
	}
}

// renderPossiblyPaid names every generation whose create request was
// sent without genform learning its outcome, in this apply or an earlier
// one, with the user's two ways out.
func renderPossiblyPaid(env *Streams, res *apply.Result) {
	if len(res.PossiblyPaid) == 0 {
		return
	}
	w := env.Stdout
	fmt.Fprintf(w, "\n%s\n", colYellow.Sprint(colBold.Sprintf("%d generation%s may already have been paid for; genform sends nothing for %s until you decide:", len(res.PossiblyPaid), words.Plural(len(res.PossiblyPaid)), map[bool]string{true: "it", false: "them"}[len(res.PossiblyPaid) == 1])))
	for _, pp := range res.PossiblyPaid {
		what := "an earlier apply sent its create request"
		if pp.Err != nil {
			what = "its create request got no clear answer"
		}
		adopt := fmt.Sprintf("If you find the creation on the service, adopt it: genform import %s CREATION_ID.", pp.Addr.Shell())
		if !words.Adoptable(pp.Provider) {
			adopt = words.NotAdoptable(pp.Provider) + "."
		}
		fmt.Fprintf(w, "  - %s: %s at %s. %s To generate it again, paying again: genform apply -replace=%s\n",
			pp.Addr, what, pp.SentAt.UTC().Format("2006-01-02 15:04:05Z"), adopt, pp.Addr.Shell())
	}
}

// renderUnstored names the files the object store should hold and does
// not (see writeUnstored).
func renderUnstored(env *Streams, res *apply.Result) { writeUnstored(env, res.Unstored) }

// writeUnstored names the files the object store should hold and does not:
// their uploads failed. A recorded instance's file and its record are
// kept, and the next apply (or push) uploads it; a file of a generation
// in the history is kept in the local cache, and push uploads it.
func writeUnstored(env *Streams, list []apply.Unstored) {
	if len(list) == 0 {
		return
	}
	n, kept := len(list), 0
	for _, u := range list {
		if u.Generation != "" {
			kept++
		}
	}
	if kept == n {
		env.Errorf("%d file%s of generations in the history %s not in the object store; the local cache keeps %s, and 'genform push' uploads %s:",
			n, words.Plural(n), isAre(n), itThem(n), itThem(n))
	} else {
		env.Errorf("%d file%s %s not in the object store; %s kept here with %s record%s, and the next 'genform apply' (or 'genform push') uploads %s:",
			n, words.Plural(n), isAre(n), itThey(n), itsTheir(n), words.Plural(n), itThem(n))
	}
	// The cause is the same for most: say it once for each run of them.
	var last string
	for _, u := range list {
		if u.Generation != "" {
			fmt.Fprintf(env.Stderr, "  %s: %s of generation %s in the history (%s): genform push uploads it from the local cache\n", u.Addr, u.Path, u.Generation, u.Object)
		} else {
			fmt.Fprintf(env.Stderr, "  %s: %s (%s)\n", u.Addr, u.Path, u.Object)
		}
		if msg := fmt.Sprint(u.Err); msg != last {
			fmt.Fprintf(env.Stderr, "    %s\n", msg)
			last = msg
		}
	}
}

func isAre(n int) string    { return map[bool]string{true: "is", false: "are"}[n == 1] }
func itThey(n int) string   { return map[bool]string{true: "it is", false: "they are"}[n == 1] }
func itsTheir(n int) string { return map[bool]string{true: "its", false: "their"}[n == 1] }
func itThem(n int) string   { return map[bool]string{true: "it", false: "them"}[n == 1] }

// renderUnrecorded says what to do about jobs paid for whose ids the state
// could not be made to hold: the ready import command of each.
func renderUnrecorded(env *Streams, res *apply.Result) {
	if res.StateErr == nil && len(res.Unrecorded) == 0 && len(res.Unfinished) == 0 {
		return
	}
	env.Errorf("genform could not write its state (%v), so it submitted nothing more", res.StateErr)
	if len(res.Unfinished) > 0 {
		fmt.Fprintf(env.Stderr, "These generations are paid for; the state holds their job ids but not their results. Once the state can be written again (free some disk space, make it writable, or bring its PostgreSQL server back), run 'genform apply': it resumes them and pays nothing:\n")
		for _, j := range res.Unfinished {
			fmt.Fprintf(env.Stderr, "  %s (job %s)\n", j.Addr, j.GenerationID)
		}
	}
	if len(res.Unrecorded) == 0 {
		return
	}
	fmt.Fprintf(env.Stderr, "These generations are paid for, but the state does not hold them. Once the state can be written again (free some disk space, make it writable, or bring its PostgreSQL server back), adopt each instead of generating it again:\n")
	for _, j := range res.Unrecorded {
		fmt.Fprintf(env.Stderr, "  genform import %s %s\n", j.Addr.Shell(), addrs.ShellQuote(j.GenerationID))
	}
}

// serviceFailed prints err, which ended a command before it changed
// anything, once, with what to do about it when it is the service's as a
// whole; outcome says what was left undone ("nothing was submitted").
// tokenSet is false when no token was sent at all.
func serviceFailed(env *Streams, tokenSet bool, err error, outcome string) {
	if advice := words.ServiceAdvice(err); advice != "" {
		env.Errorf("%s; %s. %s", words.ServiceError(err, tokenSet), outcome, advice)
		return
	}
	env.Errorf("%v", err)
}

// renderRefused ends the output of an apply the service's refusal of the
// token stopped: what was done, what failed on its own, the jobs a rerun
// resumes, and the refusal, once.
func renderRefused(env *Streams, res *apply.Result, summary string) {
	w := env.Stdout
	stopped := "Apply stopped: the service refused the token."
	if named, ok := errors.AsType[*provider.Named](res.Refused); ok {
		stopped = fmt.Sprintf("Apply stopped: provider %s refused the key.", named.Provider)
		if errors.Is(res.Refused, provider.ErrCapReached) {
			stopped = fmt.Sprintf("Apply stopped: the %s account reached a cap.", named.Provider)
		}
	}
	fmt.Fprintf(w, "\n%s %s\n", colRed.Sprint(colBold.Sprint(stopped)), summary)
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
