package reconcile

import (
	"slices"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/workdir"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// facts is everything the planner knows of one declared instance when it
// decides what to do with it: what is declared, what the state holds, and
// what planning found so far. Gathering them is the planner's; deciding
// from them is decide's, which reads nothing else.
type facts struct {
	// fingerprint is the declared request's, "" while it depends on values
	// known only after apply.
	fingerprint string
	endpoint    addrs.Endpoint
	service     string
	// prevService is the service the state was made with, when it is
	// known and differs from service.
	prevService string
	// forced is -replace naming the instance or its resource.
	forced bool
	record *statefile.Resource
	intent *statefile.Intent
	// orphan is a record that left the configuration with the same
	// fingerprint and kind, free to be claimed by a rename; nil when
	// there is none.
	orphan *statefile.Resource
	// upstream are the resources this one refers to that will be
	// generated anew; filled when the declared request is not known.
	upstream []addrs.Resource
	// triggered are the resources of lifecycle.replace_triggered_by that
	// will be generated anew.
	triggered []addrs.Resource
	// diff are the attributes that differ from the record (unknown ones
	// included); only needed, and only filled, when the fingerprints differ
	// or the declared one is not known while ignore_changes is set.
	diff []plans.AttrChange
	// ignore is lifecycle.ignore_changes.
	ignore []string
	// restorable is a generation of the declared request in the history
	// that no instance holds; nil when there is none, or when restoring is
	// turned off. Looked up only where a generation would be made.
	restorable *statefile.Resource
}

// decision is what decide makes of facts.
type decision struct {
	action plans.Action
	reason plans.Reason
	// keep is true when the recorded generation stays: whether the
	// instance is a no-op or an update is then up to its local side (see
	// decideLocal).
	keep bool
	// settle is true, with keep, when the record already holds the
	// declared request and an interrupted submission was for another:
	// nothing is generated, and the submission is settled.
	settle bool
}

// decide chooses the action of one declared instance, in this order:
//
//  1. An intent with a job id whose request is still the declared one is
//     resumed, unless -replace asks otherwise; so is one whose request is
//     not known yet, unless what it is made from is generated anew (then
//     the job's inputs are not the ones declared). When the record already
//     holds the declared request, an intent for another one is settled and
//     nothing is generated (a revert after an interrupted apply). Otherwise
//     an intent whose request changed is abandoned, as a create or a
//     replace. One without a job id (the create request was sent and its
//     outcome is not known) is possibly paid for: nothing is sent for it,
//     unless -replace asks to pay again.
//  2. Without a record: a rename (move) when a record that left the
//     configuration has the same request, a restore when the history
//     holds a generation of it that no instance holds, a create
//     otherwise.
//  3. With a record: -replace and replace_triggered_by always generate
//     anew. Otherwise a generation of the declared request in the history
//     is restored when the record's only generation failed, when the
//     request is the one whose generation failed last, or when it changed
//     other than in ignore_changes; failing that, those three are a
//     replace, as is a request that depends on an upstream that changes.
//     Otherwise the generation is kept.
func decide(f facts) decision {
	rec, intent := f.record, f.intent
	generate := plans.Create
	if rec != nil {
		generate = plans.Replace
	}
	switch {
	case intent != nil && intent.GenerationID != "" && !f.forced &&
		(f.fingerprint == intent.Fingerprint || f.fingerprint == "" && len(f.upstream) == 0):
		return decision{action: plans.Resume, reason: plans.Reason{Code: plans.ReasonInterrupted, GenerationID: intent.GenerationID}}
	case intent != nil && rec != nil && !f.forced && f.fingerprint != "" &&
		f.fingerprint == rec.Fingerprint && !plans.Failed(rec.Status) && intent.Fingerprint != f.fingerprint:
		return decision{keep: true, settle: true}
	case intent != nil && intent.GenerationID != "":
		return decision{action: generate, reason: plans.Reason{Code: plans.ReasonAbandoned, GenerationID: intent.GenerationID}}
	case intent != nil && f.forced:
		// -replace: the user pays again, knowingly.
		return decision{action: generate, reason: plans.Reason{Code: plans.ReasonAnswerLost, Since: intent.CreatedAt}}
	case intent != nil:
		// The create request was sent and its outcome is not known: the
		// job may exist, and be paid for. Nothing is sent until the user
		// adopts it (import) or pays again (-replace).
		return decision{action: plans.NoOp, reason: plans.Reason{Code: plans.ReasonAnswerLost, Since: intent.CreatedAt}}
	case rec == nil && f.orphan != nil && f.fingerprint != "" && !f.forced:
		return decision{action: plans.Move, reason: plans.Reason{Code: plans.ReasonRenamed}}
	case rec == nil && f.restorable != nil && !f.forced:
		return restore(f.restorable)
	case rec == nil:
		return decision{action: plans.Create, reason: plans.Reason{Code: plans.ReasonNew}}
	case rec.Status == plans.StatusRefused && !f.forced && f.fingerprint == rec.Fingerprint:
		// The provider refused this very request for its content: it
		// would refuse it again, and may charge for it.
		return decision{action: plans.NoOp, reason: plans.Reason{Code: plans.ReasonRefused, Error: rec.Error}}
	case plans.Failed(rec.Status) && f.restorable != nil && !f.forced && len(f.triggered) == 0:
		return restore(f.restorable)
	case plans.Failed(rec.Status):
		return decision{action: plans.Replace, reason: plans.Reason{Code: plans.ReasonFailed, Error: rec.Error}}
	case f.forced:
		return decision{action: plans.Replace, reason: plans.Reason{Code: plans.ReasonForced}}
	case len(f.triggered) > 0:
		return decision{action: plans.Replace, reason: plans.Reason{Code: plans.ReasonTriggered, Upstream: f.triggered}}
	case rec.Failure != nil && rec.Failure.Refused && f.fingerprint != "" && f.fingerprint == rec.Failure.Fingerprint:
		// The declared request is the one refused for its content: the
		// last good generation stays, and nothing is sent.
		return decision{action: plans.NoOp, reason: plans.Reason{Code: plans.ReasonRefused, Error: rec.Failure.Error}}
	case rec.Failure != nil && f.fingerprint != "" && f.fingerprint == rec.Failure.Fingerprint && f.restorable == nil:
		// The declared request is the one that failed last: try it again.
		return decision{action: plans.Replace, reason: plans.Reason{Code: plans.ReasonFailed, Error: rec.Failure.Error}}
	case f.fingerprint == "":
		if len(f.diff) > 0 && ignoredOnly(f.diff, f.ignore) {
			// What is not known yet is ignored (a source_image in
			// ignore_changes): the cascade stops here.
			return decision{keep: true}
		}
		if len(f.upstream) > 0 {
			return decision{action: plans.Replace, reason: plans.Reason{Code: plans.ReasonUpstream, Upstream: f.upstream}}
		}
		return decision{action: plans.Replace, reason: plans.Reason{Code: plans.ReasonInputUnknown}}
	case f.fingerprint != rec.Fingerprint:
		if len(f.diff) > 0 && ignoredOnly(f.diff, f.ignore) {
			// Every difference is in ignore_changes: keep what was made.
			return decision{keep: true}
		}
		if f.restorable != nil {
			return restore(f.restorable)
		}
		return decision{action: plans.Replace, reason: requestChanged(f.diff, rec, f.endpoint, f.service, f.prevService)}
	}
	return decision{keep: true}
}

// restore is the decision to take back the generation e from the history.
func restore(e *statefile.Resource) decision {
	return decision{action: plans.Restore, reason: plans.Reason{Code: plans.ReasonRestored, GenerationID: e.GenerationID,
		CreationID: e.CreationID, Since: e.CreatedAt, Holder: e.Addr}}
}

// requestChanged says how a request differs from the recorded one.
func requestChanged(diff []plans.AttrChange, rec *statefile.Resource, endpoint addrs.Endpoint, service, prevService string) plans.Reason {
	var names []string
	for _, a := range diff {
		if !isLocalAttr(a.Name) {
			names = append(names, a.Name)
		}
	}
	switch {
	case len(names) > 0:
		return plans.Reason{Code: plans.ReasonChanged, Attrs: names}
	case rec.Endpoint != endpoint:
		return plans.Reason{Code: plans.ReasonEndpoint, From: rec.Endpoint, To: endpoint}
	}
	return plans.Reason{Code: plans.ReasonRequest, Service: service, PrevService: prevService}
}

// ignoredOnly reports whether the request differs only in attributes
// listed in ignore: at least one request attribute differs, and every one
// that does is ignored. A request that differs in no attribute at all
// (the service, or a default, changed) is not covered by ignore_changes.
func ignoredOnly(diff []plans.AttrChange, ignore []string) bool {
	ignored := false
	for _, a := range diff {
		switch {
		case isLocalAttr(a.Name):
		case slices.Contains(ignore, a.Name):
			ignored = true
		default:
			return false
		}
	}
	return ignored
}

// isLocalAttr reports whether an attribute is genform's own, never sent.
func isLocalAttr(name string) bool { return name == "dir" || name == "watermark_free" }

// local is what decideLocal reads: a kept generation's record, where the
// declaration wants its files, whether it is protected, and what was found
// of its files on disk.
type local struct {
	record        *statefile.Resource
	dir           string
	watermarkFree bool
	// protect is the declared lifecycle.prevent_destroy, protected the one
	// the state records.
	protect, protected bool
	// settle is the intent of a submission for another request than the
	// record's, which the update settles; nil when there is none.
	settle *statefile.Intent
	// files is the state of each recorded output on disk, in the
	// record's order; nil when the files were not checked (-refresh=false).
	files []workdir.FileState
	// store is whether an object store is configured: files it lacks
	// are uploaded, and missing files it holds are fetched from it.
	store bool
	// cached reports whether the local cache holds a file's bytes, by
	// sha256: a missing or changed file is taken from there first. nil
	// when the cache is not looked at.
	cached func(sha string) bool
}

// decideLocal chooses between no-op and update for an instance whose
// generation is kept: its files move when dir changed, are all downloaded
// again when watermark_free changed, and one by one when missing or
// changed on disk (from the object store when it holds them), and files
// the store lacks are uploaded to it; the state records prevent_destroy anew when the
// declaration changed it, so that the protection it keeps for a removed
// block is the one last declared.
func decideLocal(l local) (plans.Action, plans.Reason, []plans.AttrChange, []int) {
	rec := l.record
	var changes []plans.LocalChange
	var attrs []plans.AttrChange
	var redownload []int
	if rec.Dir != l.dir {
		changes = append(changes, plans.LocalChange{What: plans.DirMoved, From: rec.Dir, To: l.dir})
		attrs = append(attrs, plans.AttrChange{Name: "dir", Before: rec.Dir, After: l.dir})
	}
	if rec.WatermarkFree != l.watermarkFree {
		changes = append(changes, plans.LocalChange{What: plans.WatermarkChanged})
		attrs = append(attrs, plans.AttrChange{Name: "watermark_free", Before: rec.WatermarkFree, After: l.watermarkFree})
		for _, o := range rec.Outputs {
			redownload = append(redownload, o.Index)
		}
	} else {
		for i, st := range l.files {
			o := rec.Outputs[i]
			stored := l.store && o.Stored
			cached := st != workdir.FileOK && l.cached != nil && o.SHA256 != "" && l.cached(o.SHA256)
			switch st {
			case workdir.FileMissing:
				changes = append(changes, plans.LocalChange{What: plans.OutputMissing, Output: o.Index, Path: o.Path, Stored: stored, Cached: cached})
				redownload = append(redownload, o.Index)
			case workdir.FileModified:
				changes = append(changes, plans.LocalChange{What: plans.OutputModified, Output: o.Index, Path: o.Path, Stored: stored, Cached: cached})
				redownload = append(redownload, o.Index)
			case workdir.FileOK:
				if l.store && !o.Stored && o.SHA256 != "" {
					changes = append(changes, plans.LocalChange{What: plans.OutputUnstored, Output: o.Index, Path: o.Path})
				}
			}
		}
	}
	if it := l.settle; it != nil {
		changes = append(changes, plans.LocalChange{What: plans.IntentSettled, GenerationID: it.GenerationID, Since: it.CreatedAt})
	}
	if l.protect != l.protected {
		changes = append(changes, plans.LocalChange{What: plans.ProtectionChanged, Protect: l.protect})
		attrs = append(attrs, plans.AttrChange{Name: "prevent_destroy", Before: l.protected, After: l.protect})
	}
	if len(changes) == 0 {
		return plans.NoOp, plans.Reason{}, nil, nil
	}
	return plans.Update, plans.Reason{Code: plans.ReasonLocal, Local: changes}, attrs, redownload
}
