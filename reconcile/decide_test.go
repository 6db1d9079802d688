package reconcile

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/workdir"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// decideTest is one instance's facts and what planning must make of them.
// decide runs first; when it keeps the generation, decideLocal runs on
// local (its record is the facts' record), the way planInstance chains
// them.
type decideTest struct {
	name  string
	facts facts
	local local
	// want is the final action and reason.
	want   plans.Action
	reason plans.Reason
	// keep is what decide says of the recorded generation.
	keep bool
	// attrs and redownload are decideLocal's.
	attrs      []string
	redownload []int
}

var (
	intentTime   = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	upstreamHero = addrs.Resource{Kind: addrs.Image, Name: "hero"}
)

// succeededRecord is a record of a generation that succeeded with request
// fingerprint "fp-old", two files in generated/image/a.
func succeededRecord() *statefile.Resource {
	return &statefile.Resource{
		Addr: a("image.a"), Endpoint: addrs.Text2Image, Fingerprint: "fp-old", Status: plans.StatusSucceed,
		GenerationID: "job-old", CreationID: "job-old", Dir: "generated/image/a",
		Outputs: []statefile.Output{
			{Index: 0, Path: "generated/image/a/0.png", SHA256: "00"},
			{Index: 1, Path: "generated/image/a/1.png", SHA256: "11"},
		},
	}
}

// storedRecord is succeededRecord with output 0's bytes recorded in the
// object store.
func storedRecord() *statefile.Resource {
	r := succeededRecord()
	r.Outputs[0].Stored = true
	return r
}

func failedRecord() *statefile.Resource {
	r := succeededRecord()
	r.Status, r.Error = plans.StatusFailed, "the service reported the generation failed"
	return r
}

func intentFor(fp, id string) *statefile.Intent {
	return &statefile.Intent{Addr: a("image.a"), Fingerprint: fp, GenerationID: id, CreatedAt: intentTime}
}

// historyEntry is a generation of the request "fp-hist" that the history
// holds, last held by image.gone.
func historyEntry() *statefile.Resource {
	r := succeededRecord()
	r.Addr, r.Fingerprint, r.GenerationID, r.CreationID, r.CreatedAt = a("image.gone"), "fp-hist", "job-hist", "cr-hist", intentTime
	return r
}

var restoredReason = plans.Reason{Code: plans.ReasonRestored, GenerationID: "job-hist", CreationID: "cr-hist", Since: intentTime, Holder: a("image.gone")}

func orphanRecord() *statefile.Resource {
	r := succeededRecord()
	r.Addr = a("image.old")
	return r
}

// decideTests covers every action and every reason decide and
// decideLocal return, and the order in which decide weighs them: each
// "beats" row holds the facts of two rules at once.
var decideTests = []decideTest{
	// Create.
	{name: "not recorded is new",
		facts: facts{fingerprint: "fp"}, want: plans.Create, reason: plans.Reason{Code: plans.ReasonNew}},
	{name: "not recorded with a request known after apply is new",
		facts: facts{}, want: plans.Create, reason: plans.Reason{Code: plans.ReasonNew}},
	{name: "an intent without a job id is possibly paid: nothing is sent",
		facts: facts{fingerprint: "fp", intent: intentFor("fp", "")},
		want:  plans.NoOp, reason: plans.Reason{Code: plans.ReasonAnswerLost, Since: intentTime}},
	{name: "-replace pays again for a possibly paid create",
		facts: facts{fingerprint: "fp", forced: true, intent: intentFor("fp", "")},
		want:  plans.Create, reason: plans.Reason{Code: plans.ReasonAnswerLost, Since: intentTime}},
	{name: "an intent with a job id whose request changed is abandoned",
		facts: facts{fingerprint: "fp-new", intent: intentFor("fp", "job-1")},
		want:  plans.Create, reason: plans.Reason{Code: plans.ReasonAbandoned, GenerationID: "job-1"}},
	{name: "-replace beats resuming: the job is abandoned",
		facts: facts{fingerprint: "fp", forced: true, intent: intentFor("fp", "job-1")},
		want:  plans.Create, reason: plans.Reason{Code: plans.ReasonAbandoned, GenerationID: "job-1"}},
	{name: "an orphan with a forced replace is generated, not moved",
		facts: facts{fingerprint: "fp-old", forced: true, orphan: orphanRecord()},
		want:  plans.Create, reason: plans.Reason{Code: plans.ReasonNew}},
	{name: "an orphan cannot be claimed by a request known after apply",
		facts: facts{orphan: orphanRecord()}, want: plans.Create, reason: plans.Reason{Code: plans.ReasonNew}},
	{name: "a lost answer beats a rename",
		facts: facts{fingerprint: "fp-old", intent: intentFor("fp-old", ""), orphan: orphanRecord()},
		want:  plans.NoOp, reason: plans.Reason{Code: plans.ReasonAnswerLost, Since: intentTime}},

	// Replace.
	{name: "a lost answer over a record leaves it alone",
		facts: facts{fingerprint: "fp-old", record: succeededRecord(), intent: intentFor("fp-old", "")},
		want:  plans.NoOp, reason: plans.Reason{Code: plans.ReasonAnswerLost, Since: intentTime}},
	{name: "-replace pays again for a lost answer over a record",
		facts: facts{fingerprint: "fp-old", forced: true, record: succeededRecord(), intent: intentFor("fp-old", "")},
		want:  plans.Replace, reason: plans.Reason{Code: plans.ReasonAnswerLost, Since: intentTime}},
	{name: "an abandoned job over a record replaces it",
		facts: facts{fingerprint: "fp-new", record: succeededRecord(), intent: intentFor("fp-old", "job-1")},
		want:  plans.Replace, reason: plans.Reason{Code: plans.ReasonAbandoned, GenerationID: "job-1"}},
	{name: "a failed generation is replaced",
		facts: facts{fingerprint: "fp-old", record: failedRecord()},
		want:  plans.Replace, reason: plans.Reason{Code: plans.ReasonFailed, Error: "the service reported the generation failed"}},
	{name: "failed beats a changed request",
		facts: facts{fingerprint: "fp-new", record: failedRecord(), diff: []plans.AttrChange{{Name: "prompt"}}},
		want:  plans.Replace, reason: plans.Reason{Code: plans.ReasonFailed, Error: "the service reported the generation failed"}},
	{name: "failed beats -replace",
		facts: facts{fingerprint: "fp-old", forced: true, record: failedRecord()},
		want:  plans.Replace, reason: plans.Reason{Code: plans.ReasonFailed, Error: "the service reported the generation failed"}},
	{name: "a request refused for its content is not sent again",
		facts: facts{fingerprint: "fp-old", record: refusedRecord()},
		want:  plans.NoOp, reason: plans.Reason{Code: plans.ReasonRefused, Error: "content_policy_violation"}},
	{name: "a refused request changed is generated",
		facts: facts{fingerprint: "fp-new", record: refusedRecord(), diff: []plans.AttrChange{{Name: "prompt"}}},
		want:  plans.Replace, reason: plans.Reason{Code: plans.ReasonFailed, Error: "content_policy_violation"}},
	{name: "-replace sends a refused request again",
		facts: facts{fingerprint: "fp-old", forced: true, record: refusedRecord()},
		want:  plans.Replace, reason: plans.Reason{Code: plans.ReasonFailed, Error: "content_policy_violation"}},
	{name: "the request refused beside a good generation is not sent again",
		facts: facts{fingerprint: "fp-failed", record: recordWithRefusal()},
		want:  plans.NoOp, reason: plans.Reason{Code: plans.ReasonRefused, Error: "content_policy_violation"}},
	{name: "-replace of an unchanged instance",
		facts: facts{fingerprint: "fp-old", forced: true, record: succeededRecord()},
		want:  plans.Replace, reason: plans.Reason{Code: plans.ReasonForced}},
	{name: "-replace beats a changed request",
		facts: facts{fingerprint: "fp-new", forced: true, record: succeededRecord(), diff: []plans.AttrChange{{Name: "prompt"}}},
		want:  plans.Replace, reason: plans.Reason{Code: plans.ReasonForced}},
	{name: "-replace beats an upstream change",
		facts: facts{forced: true, record: succeededRecord(), upstream: []addrs.Resource{upstreamHero}},
		want:  plans.Replace, reason: plans.Reason{Code: plans.ReasonForced}},
	{name: "made from a resource generated anew",
		facts: facts{record: succeededRecord(), upstream: []addrs.Resource{upstreamHero}},
		want:  plans.Replace, reason: plans.Reason{Code: plans.ReasonUpstream, Upstream: []addrs.Resource{upstreamHero}}},
	{name: "a request known only after apply, nothing upstream changing",
		facts: facts{record: succeededRecord()},
		want:  plans.Replace, reason: plans.Reason{Code: plans.ReasonInputUnknown}},
	{name: "a changed attribute",
		facts: facts{fingerprint: "fp-new", record: succeededRecord(), diff: []plans.AttrChange{{Name: "prompt", Before: "a", After: "b"}}},
		want:  plans.Replace, reason: plans.Reason{Code: plans.ReasonChanged, Attrs: []string{"prompt"}}},
	{name: "a changed attribute: local ones are not named",
		facts: facts{fingerprint: "fp-new", record: succeededRecord(), diff: []plans.AttrChange{{Name: "dir"}, {Name: "seed"}, {Name: "watermark_free"}}},
		want:  plans.Replace, reason: plans.Reason{Code: plans.ReasonChanged, Attrs: []string{"seed"}}},
	{name: "ignore_changes covering part of the difference",
		facts: facts{fingerprint: "fp-new", record: succeededRecord(), ignore: []string{"prompt"}, diff: []plans.AttrChange{{Name: "prompt"}, {Name: "seed"}}},
		want:  plans.Replace, reason: plans.Reason{Code: plans.ReasonChanged, Attrs: []string{"prompt", "seed"}}},
	{name: "the endpoint changed",
		facts: facts{fingerprint: "fp-new", endpoint: addrs.Text2Video, record: succeededRecord()},
		want:  plans.Replace, reason: plans.Reason{Code: plans.ReasonEndpoint, From: addrs.Text2Image, To: addrs.Text2Video}},
	{name: "the endpoint changed along with the dir",
		facts: facts{fingerprint: "fp-new", endpoint: addrs.Text2Video, record: succeededRecord(), diff: []plans.AttrChange{{Name: "dir"}}},
		want:  plans.Replace, reason: plans.Reason{Code: plans.ReasonEndpoint, From: addrs.Text2Image, To: addrs.Text2Video}},
	{name: "the request differs with no attribute changed: the service",
		facts: facts{fingerprint: "fp-new", endpoint: addrs.Text2Image, service: "http://other", record: succeededRecord()},
		want:  plans.Replace, reason: plans.Reason{Code: plans.ReasonRequest, Service: "http://other"}},
	{name: "ignore_changes with an empty difference does not hide a request change",
		facts: facts{fingerprint: "fp-new", endpoint: addrs.Text2Image, service: "simulator", record: succeededRecord(), ignore: []string{"prompt"}},
		want:  plans.Replace, reason: plans.Reason{Code: plans.ReasonRequest, Service: "simulator"}},

	// Resume.
	{name: "an intent with a job id for the declared request",
		facts: facts{fingerprint: "fp", intent: intentFor("fp", "job-1")},
		want:  plans.Resume, reason: plans.Reason{Code: plans.ReasonInterrupted, GenerationID: "job-1"}},
	{name: "an intent with a job id, request known after apply",
		facts: facts{intent: intentFor("fp", "job-1")},
		want:  plans.Resume, reason: plans.Reason{Code: plans.ReasonInterrupted, GenerationID: "job-1"}},
	{name: "resuming beats a failed record",
		facts: facts{fingerprint: "fp-old", record: failedRecord(), intent: intentFor("fp-old", "job-1")},
		want:  plans.Resume, reason: plans.Reason{Code: plans.ReasonInterrupted, GenerationID: "job-1"}},
	{name: "resuming beats a rename",
		facts: facts{fingerprint: "fp-old", intent: intentFor("fp-old", "job-1"), orphan: orphanRecord()},
		want:  plans.Resume, reason: plans.Reason{Code: plans.ReasonInterrupted, GenerationID: "job-1"}},

	// Move.
	{name: "an orphan with the same request is a rename",
		facts: facts{fingerprint: "fp-old", orphan: orphanRecord()},
		want:  plans.Move, reason: plans.Reason{Code: plans.ReasonRenamed}},

	// Restore.
	{name: "not recorded, the history holds the request",
		facts: facts{fingerprint: "fp-old", restorable: historyEntry()},
		want:  plans.Restore, reason: restoredReason},
	{name: "a changed request the history holds",
		facts: facts{fingerprint: "fp-new", record: succeededRecord(), diff: []plans.AttrChange{{Name: "prompt"}}, restorable: historyEntry()},
		want:  plans.Restore, reason: restoredReason},
	{name: "a failed record whose request the history holds",
		facts: facts{fingerprint: "fp-new", record: failedRecord(), restorable: historyEntry()},
		want:  plans.Restore, reason: restoredReason},
	{name: "restoring beats retrying the request that failed last",
		facts: facts{fingerprint: "fp-failed", record: recordWithFailure(), diff: []plans.AttrChange{{Name: "prompt"}}, restorable: historyEntry()},
		want:  plans.Restore, reason: restoredReason},
	{name: "a rename beats restoring",
		facts: facts{fingerprint: "fp-old", orphan: orphanRecord(), restorable: historyEntry()},
		want:  plans.Move, reason: plans.Reason{Code: plans.ReasonRenamed}},
	{name: "-replace beats restoring",
		facts: facts{fingerprint: "fp-new", record: succeededRecord(), forced: true, restorable: historyEntry()},
		want:  plans.Replace, reason: plans.Reason{Code: plans.ReasonForced}},
	{name: "-replace of a new instance beats restoring",
		facts: facts{fingerprint: "fp-new", forced: true, restorable: historyEntry()},
		want:  plans.Create, reason: plans.Reason{Code: plans.ReasonNew}},
	{name: "replace_triggered_by beats restoring a failed record",
		facts: facts{fingerprint: "fp-new", record: failedRecord(), triggered: []addrs.Resource{upstreamHero}, restorable: historyEntry()},
		want:  plans.Replace, reason: plans.Reason{Code: plans.ReasonFailed, Error: "the service reported the generation failed"}},
	{name: "ignore_changes beats restoring", keep: true,
		facts: facts{fingerprint: "fp-new", record: succeededRecord(), ignore: []string{"prompt"}, diff: []plans.AttrChange{{Name: "prompt"}}, restorable: historyEntry()},
		local: local{dir: "generated/image/a", files: []workdir.FileState{workdir.FileOK, workdir.FileOK}},
		want:  plans.NoOp},

	// No-op: the generation is kept and nothing local changed.
	{name: "unchanged", keep: true,
		facts: facts{fingerprint: "fp-old", record: succeededRecord()},
		local: local{dir: "generated/image/a", files: []workdir.FileState{workdir.FileOK, workdir.FileOK}},
		want:  plans.NoOp},
	{name: "unchanged, files not checked", keep: true,
		facts: facts{fingerprint: "fp-old", record: succeededRecord()},
		local: local{dir: "generated/image/a"},
		want:  plans.NoOp},
	{name: "ignore_changes covering every difference keeps the generation", keep: true,
		facts: facts{fingerprint: "fp-new", record: succeededRecord(), ignore: []string{"prompt", "seed"}, diff: []plans.AttrChange{{Name: "prompt"}, {Name: "seed"}}},
		local: local{dir: "generated/image/a", files: []workdir.FileState{workdir.FileOK, workdir.FileOK}},
		want:  plans.NoOp},

	// Update: the generation is kept, its files change.
	{name: "dir changed", keep: true,
		facts: facts{fingerprint: "fp-old", record: succeededRecord()},
		local: local{dir: "art/a", files: []workdir.FileState{workdir.FileOK, workdir.FileOK}},
		want:  plans.Update, reason: plans.Reason{Code: plans.ReasonLocal, Local: []plans.LocalChange{{What: plans.DirMoved, From: "generated/image/a", To: "art/a"}}},
		attrs: []string{"dir"}},
	{name: "ignore_changes covering the request, dir changed", keep: true,
		facts: facts{fingerprint: "fp-new", record: succeededRecord(), ignore: []string{"prompt"}, diff: []plans.AttrChange{{Name: "dir"}, {Name: "prompt"}}},
		local: local{dir: "art/a"},
		want:  plans.Update, reason: plans.Reason{Code: plans.ReasonLocal, Local: []plans.LocalChange{{What: plans.DirMoved, From: "generated/image/a", To: "art/a"}}},
		attrs: []string{"dir"}},
	{name: "watermark_free changed downloads every output", keep: true,
		facts: facts{fingerprint: "fp-old", record: succeededRecord()},
		// The files are not compared when every one is fetched anew.
		local: local{dir: "generated/image/a", watermarkFree: true, files: []workdir.FileState{workdir.FileMissing, workdir.FileOK}},
		want:  plans.Update, reason: plans.Reason{Code: plans.ReasonLocal, Local: []plans.LocalChange{{What: plans.WatermarkChanged}}},
		attrs: []string{"watermark_free"}, redownload: []int{0, 1}},
	{name: "an output missing", keep: true,
		facts: facts{fingerprint: "fp-old", record: succeededRecord()},
		local: local{dir: "generated/image/a", files: []workdir.FileState{workdir.FileOK, workdir.FileMissing}},
		want:  plans.Update, reason: plans.Reason{Code: plans.ReasonLocal, Local: []plans.LocalChange{{What: plans.OutputMissing, Output: 1, Path: "generated/image/a/1.png"}}},
		redownload: []int{1}},
	{name: "an output changed on disk", keep: true,
		facts: facts{fingerprint: "fp-old", record: succeededRecord()},
		local: local{dir: "generated/image/a", files: []workdir.FileState{workdir.FileModified, workdir.FileOK}},
		want:  plans.Update, reason: plans.Reason{Code: plans.ReasonLocal, Local: []plans.LocalChange{{What: plans.OutputModified, Output: 0, Path: "generated/image/a/0.png"}}},
		redownload: []int{0}},
	{name: "a store: a missing file it holds comes from it, one it lacks is uploaded", keep: true,
		facts: facts{fingerprint: "fp-old", record: storedRecord()},
		local: local{dir: "generated/image/a", store: true, files: []workdir.FileState{workdir.FileMissing, workdir.FileOK}},
		want:  plans.Update, reason: plans.Reason{Code: plans.ReasonLocal, Local: []plans.LocalChange{
			{What: plans.OutputMissing, Output: 0, Path: "generated/image/a/0.png", Stored: true},
			{What: plans.OutputUnstored, Output: 1, Path: "generated/image/a/1.png"},
		}},
		redownload: []int{0}},
	{name: "a missing file the cache holds comes from it, first", keep: true,
		facts: facts{fingerprint: "fp-old", record: storedRecord()},
		local: local{dir: "generated/image/a", store: true, files: []workdir.FileState{workdir.FileMissing, workdir.FileOK},
			cached: func(string) bool { return true }},
		want: plans.Update, reason: plans.Reason{Code: plans.ReasonLocal, Local: []plans.LocalChange{
			{What: plans.OutputMissing, Output: 0, Path: "generated/image/a/0.png", Stored: true, Cached: true},
			{What: plans.OutputUnstored, Output: 1, Path: "generated/image/a/1.png"},
		}},
		redownload: []int{0}},
	{name: "no store: nothing is uploaded, and a missing file comes from the provider", keep: true,
		facts: facts{fingerprint: "fp-old", record: storedRecord()},
		local: local{dir: "generated/image/a", files: []workdir.FileState{workdir.FileMissing, workdir.FileOK}},
		want:  plans.Update, reason: plans.Reason{Code: plans.ReasonLocal, Local: []plans.LocalChange{{What: plans.OutputMissing, Output: 0, Path: "generated/image/a/0.png"}}},
		redownload: []int{0}},
	{name: "dir changed and an output missing", keep: true,
		facts: facts{fingerprint: "fp-old", record: succeededRecord()},
		local: local{dir: "art/a", files: []workdir.FileState{workdir.FileMissing, workdir.FileOK}},
		want:  plans.Update, reason: plans.Reason{Code: plans.ReasonLocal, Local: []plans.LocalChange{
			{What: plans.DirMoved, From: "generated/image/a", To: "art/a"},
			{What: plans.OutputMissing, Output: 0, Path: "generated/image/a/0.png"},
		}},
		attrs: []string{"dir"}, redownload: []int{0}},
	{name: "prevent_destroy declared: the state records it", keep: true,
		facts: facts{fingerprint: "fp-old", record: succeededRecord()},
		local: local{dir: "generated/image/a", protect: true, files: []workdir.FileState{workdir.FileOK, workdir.FileOK}},
		want:  plans.Update, reason: plans.Reason{Code: plans.ReasonLocal, Local: []plans.LocalChange{{What: plans.ProtectionChanged, Protect: true}}},
		attrs: []string{"prevent_destroy"}},
	{name: "prevent_destroy lifted: the state forgets it", keep: true,
		facts: facts{fingerprint: "fp-old", record: succeededRecord()},
		local: local{dir: "generated/image/a", protected: true, files: []workdir.FileState{workdir.FileOK, workdir.FileOK}},
		want:  plans.Update, reason: plans.Reason{Code: plans.ReasonLocal, Local: []plans.LocalChange{{What: plans.ProtectionChanged}}},
		attrs: []string{"prevent_destroy"}},
	{name: "prevent_destroy as recorded", keep: true,
		facts: facts{fingerprint: "fp-old", record: succeededRecord()},
		local: local{dir: "generated/image/a", protect: true, protected: true, files: []workdir.FileState{workdir.FileOK, workdir.FileOK}},
		want:  plans.NoOp},

	// Money safety.
	{name: "a revert after an interrupted apply settles its job: the record holds the declared request", keep: true,
		facts: facts{fingerprint: "fp-old", record: succeededRecord(), intent: intentFor("fp-new", "job-2")},
		local: local{dir: "generated/image/a", files: []workdir.FileState{workdir.FileOK, workdir.FileOK}},
		want:  plans.Update, reason: plans.Reason{Code: plans.ReasonLocal, Local: []plans.LocalChange{{What: plans.IntentSettled, GenerationID: "job-2", Since: intentTime}}}},
	{name: "a revert settles a submission whose answer was lost too", keep: true,
		facts: facts{fingerprint: "fp-old", record: succeededRecord(), intent: intentFor("fp-new", "")},
		local: local{dir: "generated/image/a", files: []workdir.FileState{workdir.FileOK, workdir.FileOK}},
		want:  plans.Update, reason: plans.Reason{Code: plans.ReasonLocal, Local: []plans.LocalChange{{What: plans.IntentSettled, Since: intentTime}}}},
	{name: "-replace beats settling: the job is abandoned",
		facts: facts{fingerprint: "fp-old", record: succeededRecord(), intent: intentFor("fp-new", "job-2"), forced: true},
		want:  plans.Replace, reason: plans.Reason{Code: plans.ReasonAbandoned, GenerationID: "job-2"}},
	{name: "a job whose inputs are generated anew is not resumed",
		facts: facts{record: succeededRecord(), intent: intentFor("fp-old-inputs", "job-2"), upstream: []addrs.Resource{upstreamHero}},
		want:  plans.Replace, reason: plans.Reason{Code: plans.ReasonAbandoned, GenerationID: "job-2"}},
	{name: "replace_triggered_by a resource generated anew",
		facts: facts{fingerprint: "fp-old", record: succeededRecord(), triggered: []addrs.Resource{upstreamHero}},
		want:  plans.Replace, reason: plans.Reason{Code: plans.ReasonTriggered, Upstream: []addrs.Resource{upstreamHero}}},
	{name: "the request that failed last is tried again",
		facts: facts{fingerprint: "fp-failed", record: recordWithFailure()},
		want:  plans.Replace, reason: plans.Reason{Code: plans.ReasonFailed, Error: "the service reported the generation failed"}},
	{name: "a revert to the kept generation after a failure is a no-op", keep: true,
		facts: facts{fingerprint: "fp-old", record: recordWithFailure()},
		local: local{dir: "generated/image/a", files: []workdir.FileState{workdir.FileOK, workdir.FileOK}},
		want:  plans.NoOp},
	{name: "a source_image in ignore_changes stops the cascade", keep: true,
		facts: facts{record: succeededRecord(), upstream: []addrs.Resource{upstreamHero}, ignore: []string{"source_image"},
			diff: []plans.AttrChange{{Name: "source_image", Before: "https://old", Unknown: true}}},
		local: local{dir: "generated/image/a", files: []workdir.FileState{workdir.FileOK, workdir.FileOK}},
		want:  plans.NoOp},
	{name: "an unknown input not in ignore_changes still cascades",
		facts: facts{record: succeededRecord(), upstream: []addrs.Resource{upstreamHero}, ignore: []string{"seed"},
			diff: []plans.AttrChange{{Name: "source_image", Before: "https://old", Unknown: true}}},
		want: plans.Replace, reason: plans.Reason{Code: plans.ReasonUpstream, Upstream: []addrs.Resource{upstreamHero}}},
}

// recordWithFailure is succeededRecord with a later generation, of request
// "fp-failed", failed beside it.
func recordWithFailure() *statefile.Resource {
	r := succeededRecord()
	r.Failure = &statefile.Failure{Endpoint: addrs.Text2Image, Fingerprint: "fp-failed", GenerationID: "job-failed", Error: "the service reported the generation failed"}
	return r
}

// refusedRecord is a record whose only generation the provider refused
// for its content.
func refusedRecord() *statefile.Resource {
	r := succeededRecord()
	r.Status, r.Error = plans.StatusRefused, "content_policy_violation"
	return r
}

// recordWithRefusal is succeededRecord with a later request, "fp-failed",
// refused for its content beside it.
func recordWithRefusal() *statefile.Resource {
	r := recordWithFailure()
	r.Failure.Refused, r.Failure.Error = true, "content_policy_violation"
	return r
}

func TestDecide(t *testing.T) {
	for _, tc := range decideTests {
		t.Run(tc.name, func(t *testing.T) {
			d := decide(tc.facts)
			if d.keep != tc.keep {
				t.Fatalf("decide keep = %v, want %v (decision %s %+v)", d.keep, tc.keep, d.action, d.reason)
			}
			act, reason := d.action, d.reason
			var attrs []plans.AttrChange
			var redownload []int
			if d.keep {
				l := tc.local
				l.record = tc.facts.record
				if d.settle {
					l.settle = tc.facts.intent
				}
				act, reason, attrs, redownload = decideLocal(l)
			}
			if act != tc.want {
				t.Errorf("action %s, want %s", act, tc.want)
			}
			if diff := cmp.Diff(tc.reason, reason, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("reason (-want +got):\n%s", diff)
			}
			var names []string
			for _, a := range attrs {
				names = append(names, a.Name)
			}
			if diff := cmp.Diff(tc.attrs, names, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("attrs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.redownload, redownload, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("redownload (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecideLocalAttrValues checks the values an update shows for the
// local attributes it changes.
func TestDecideLocalAttrValues(t *testing.T) {
	rec := succeededRecord()
	_, _, attrs, _ := decideLocal(local{record: rec, dir: "art/a", watermarkFree: true})
	want := []plans.AttrChange{
		{Name: "dir", Before: "generated/image/a", After: "art/a"},
		{Name: "watermark_free", Before: false, After: true},
	}
	if diff := cmp.Diff(want, attrs); diff != "" {
		t.Errorf("attrs (-want +got):\n%s", diff)
	}
}

// TestEveryReasonIsTested fails when a reason code or a local change is
// added without a row saying when it is chosen: every code plans lists
// (and its TestNames checks the list against what reason.go declares) must be the reason of a decideTests row, or be one of
// the delete reasons, which MakePlan and MakeDestroyPlan choose and
// deleteReasonTests covers. (That every code has a name is the plans
// package's TestNames.)
func TestEveryReasonIsTested(t *testing.T) {
	covered := map[plans.ReasonCode]bool{}
	locals := map[plans.LocalWhat]bool{}
	for _, tc := range decideTests {
		covered[tc.reason.Code] = true
		for _, l := range tc.reason.Local {
			locals[l.What] = true
		}
	}
	deletes := map[plans.ReasonCode]bool{}
	for _, tc := range deleteReasonTests {
		deletes[tc.reason] = true
	}

	for _, c := range plans.ReasonCodes() {
		name := c.String()
		switch {
		case covered[c] && deletes[c]:
			t.Errorf("%s is both a decide reason and a delete reason", name)
		case covered[c], deletes[c]:
		case c == plans.ReasonMoved:
			// Chosen after decide, for a moved block's instance whose
			// change is only a move: TestMovedPlans checks it.
		default:
			t.Errorf("%q is not the reason of any row of decideTests or deleteReasonTests", name)
		}
	}
	for _, w := range plans.LocalWhats() {
		if !locals[w] {
			t.Errorf("%q is not the local change of any row of decideTests", w)
		}
	}
}

// deleteReasonTests are the reasons of a delete, which only MakePlan and
// MakeDestroyPlan choose: a state and what planning it must yield for
// image.b, an address the configuration (image.a alone) no longer has.
var deleteReasonTests = []struct {
	name    string
	destroy bool
	record  bool   // image.b has a record
	job     string // image.b has an intent with this job id ("-" for none)
	reason  plans.ReasonCode
	paid    bool
}{
	{name: "a record no longer declared", record: true, job: "-", reason: plans.ReasonRemoved},
	{name: "a record and an intent no longer declared", record: true, job: "job-9", reason: plans.ReasonRemoved, paid: true},
	{name: "an interrupted submission no longer declared", job: "job-9", reason: plans.ReasonRemovedIntent, paid: true},
	{name: "a lost answer no longer declared", job: "", reason: plans.ReasonRemovedIntent},
	{name: "destroy of a record", destroy: true, record: true, job: "-", reason: plans.ReasonDestroy},
	{name: "destroy of a record with an intent", destroy: true, record: true, job: "job-9", reason: plans.ReasonDestroy, paid: true},
	{name: "destroy of an interrupted submission", destroy: true, job: "job-9", reason: plans.ReasonDestroyIntent, paid: true},
	{name: "destroy of a lost answer", destroy: true, job: "", reason: plans.ReasonDestroyIntent},
}

func TestDeleteReasons(t *testing.T) {
	for _, tc := range deleteReasonTests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.applied(twoImages)
			cfg := f.write(oneImage)
			b := a("image.b")
			if !tc.record {
				delete(f.state.Resources, b)
			}
			if tc.job != "-" {
				f.state.Intents[b] = &statefile.Intent{Addr: b, Fingerprint: "fp", GenerationID: tc.job, CreatedAt: intentTime}
			}
			in := PlanInput{Config: cfg, State: f.state, Service: "simulator", Refresh: true, Dir: f.dir}
			plan, diags := MakePlan, "plan"
			if tc.destroy {
				plan, diags = MakeDestroyPlan, "destroy plan"
			}
			p, d := plan(in)
			if d.HasErrors() {
				t.Fatalf("%s: %v", diags, d)
			}
			var deletes []string
			for _, c := range p.Changes {
				if c.Action == plans.Delete {
					deletes = append(deletes, c.Addr.String())
				}
			}
			want := "image.b"
			if tc.destroy {
				want = "image.a image.b"
			}
			if got := strings.Join(deletes, " "); got != want {
				t.Errorf("deletes %q, want %q", got, want)
			}
			c := p.Change(b)
			if c == nil {
				t.Fatalf("no change for image.b in %v", actions(p))
			}
			if c.Action != plans.Delete || c.Reason.Code != tc.reason {
				t.Errorf("image.b: %s %s, want delete %s", c.Action, c.Reason.Code, tc.reason)
			}
			if wantID := strings.TrimPrefix(tc.job, "-"); c.Reason.GenerationID != wantID {
				t.Errorf("the reason names job %q, want %q", c.Reason.GenerationID, wantID)
			}
			// Every job left undeclared is followed and kept in the history.
			if got, want := c.Reason.KeptJob(), strings.TrimPrefix(tc.job, "-"); got != want {
				t.Errorf("KeptJob() = %q, want %q", got, want)
			}
			// A forgotten lost answer is TestForgottenLostAnswerMayHaveBeenPaid's.
			if lostAnswer := !tc.record && tc.job == ""; !lostAnswer && c.Reason.MayHaveBeenPaid() != tc.paid {
				t.Errorf("MayHaveBeenPaid() = %v, want %v", c.Reason.MayHaveBeenPaid(), tc.paid)
			}
		})
	}
}

// TestIgnoreChangesDoesNotHideARequestChange: ignore_changes lists
// attributes whose change is not worth a generation; it must not keep a
// generation whose request differs for another reason (here the service
// the fingerprints are computed for) just because dir changed too.
// Without the dir change the same plan is a replace.
func TestIgnoreChangesDoesNotHideARequestChange(t *testing.T) {
	const src = `
image "a" {
  prompt       = "a red apple"
  image_number = 1
  lifecycle {
    ignore_changes = [seed]
  }
}
`
	f := newFixture(t)
	f.applied(src)
	otherService := func(in *PlanInput) { in.Service = "http://other.example" }
	p, _ := f.plan(f.write(src), otherService)
	if c := p.Change(a("image.a")); c.Action != plans.Replace || c.Reason.Code != plans.ReasonRequest {
		t.Fatalf("same dir: %s %s, want replace %s", c.Action, c.Reason.Code, plans.ReasonRequest)
	}
	p, _ = f.plan(f.write(strings.Replace(src, "image_number = 1", "image_number = 1\n  dir = \"art/a\"", 1)), otherService)
	if c := p.Change(a("image.a")); c.Action != plans.Replace || c.Reason.Code != plans.ReasonRequest {
		t.Errorf("dir changed too: %s %s, want replace %s", c.Action, c.Reason.Code, plans.ReasonRequest)
	}
}

// TestForgottenLostAnswerMayHaveBeenPaid: a create request whose answer
// was lost may have been paid for (ReasonAnswerLost says so while the
// instance is declared); forgetting it when the instance leaves the
// configuration, or on destroy, is the same submission.
func TestForgottenLostAnswerMayHaveBeenPaid(t *testing.T) {
	for _, code := range []plans.ReasonCode{plans.ReasonRemovedIntent, plans.ReasonDestroyIntent} {
		if !(plans.Reason{Code: code}).MayHaveBeenPaid() {
			t.Errorf("%s without a job id: MayHaveBeenPaid() = false", code)
		}
	}
}
