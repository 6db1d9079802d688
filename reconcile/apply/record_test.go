package apply

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/reconcile/plans"
)

// TestApplyFailures checks what each failure of a first generation leaves
// in the state, and so what the next plan does: a job that failed is
// replaced; one whose outcome is not known is resumed; one whose files
// could not be fetched is kept and fetched again, never regenerated.
func TestApplyFailures(t *testing.T) {
	wmFree := strings.Replace(wavesConfig, `"waves"`, "\"waves\"\n  watermark_free = true", 1)
	unavailable := &apiclient.Error{HTTPStatus: 503, Message: "unavailable"}
	tests := []struct {
		name    string
		src     string
		job     fakeJob
		timeout time.Duration
		wantErr string
		// status is the record's ("" for none), intent the job id of the
		// intent left ("" for none).
		status  string
		intent  string
		running bool
		next    plans.Action
		reason  plans.ReasonCode
	}{
		{name: "the job fails", src: oneImage, job: fakeJob{statuses: []string{"processing", "failed"}},
			wantErr: "failed on the service", status: plans.StatusFailed, next: plans.Replace, reason: plans.ReasonFailed},
		{name: "the detail lists no outputs", src: oneImage, job: fakeJob{noOutputs: true},
			wantErr: "listed no outputs", intent: "job-1", next: plans.Resume, reason: plans.ReasonInterrupted},
		{name: "the detail cannot be fetched", src: oneImage, job: fakeJob{detailErr: unavailable},
			wantErr: "rerun apply to resume", intent: "job-1", next: plans.Resume, reason: plans.ReasonInterrupted},
		{name: "polling fails", src: oneImage, job: fakeJob{statusErr: unavailable},
			wantErr: "rerun apply to resume", intent: "job-1", running: true, next: plans.Resume, reason: plans.ReasonInterrupted},
		{name: "the job outlives the timeout", src: oneImage, job: fakeJob{statuses: []string{"processing"}}, timeout: 200 * time.Millisecond,
			wantErr: "still processing after", intent: "job-1", running: true, next: plans.Resume, reason: plans.ReasonInterrupted},
		{name: "the download fails", src: oneImage, job: fakeJob{downloadErr: unavailable},
			wantErr: "nothing is regenerated", status: plans.StatusSucceed, next: plans.Update, reason: plans.ReasonLocal},
		{name: "the watermark-free URL cannot be had", src: wmFree, job: fakeJob{wmErr: unavailable},
			wantErr: "watermark-free URL", status: plans.StatusSucceed, next: plans.Update, reason: plans.ReasonLocal},
		{name: "the service refuses the create", src: oneImage, job: fakeJob{createErr: &apiclient.Error{HTTPStatus: 400, Message: "bad prompt"}},
			wantErr: "the service refused image.a: 400", next: plans.Create, reason: plans.ReasonNew},
		// A request that never left is not the service's refusal.
		{name: "the service cannot be reached", src: oneImage, job: fakeJob{createErr: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}},
			wantErr: "the request did not reach the service, so nothing was paid for", next: plans.Create, reason: plans.ReasonNew},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Every request body contains "": the script is every job's.
			svc := &fakeService{scripts: map[string]fakeJob{"": tc.job}}
			w := newApplyDir(t, svc)
			w.timeout = tc.timeout
			p := w.plan(tc.src)
			addr := p.Changes[0].Addr
			res := w.apply(context.Background(), p)
			if len(res.Failed) != 1 || len(res.Generated) > 0 {
				t.Fatalf("failed %v, generated %v: want one failure", res.Failed, res.Generated)
			}
			if err := res.Failed[0].Err.Error(); !strings.Contains(err, tc.wantErr) {
				t.Errorf("error %q does not say %q", err, tc.wantErr)
			}
			if ev := w.last(addr.String()); ev.Phase != PhaseFailed || ev.Err == nil {
				t.Errorf("last event %+v, want failed", ev)
			}
			var running []Job
			if tc.running {
				running = []Job{{Addr: addr, GenerationID: "job-1"}}
			}
			if !slices.Equal(res.Running, running) {
				t.Errorf("running %v, want %v", res.Running, running)
			}
			snap := w.snapshot()
			rec := snap.Resources[addr]
			switch {
			case tc.status == "" && rec != nil:
				t.Errorf("recorded %+v", rec)
			case tc.status != "" && (rec == nil || rec.Status != tc.status || rec.CreationID != "job-1"):
				t.Errorf("record %+v, want job-1 %s", rec, tc.status)
			case tc.status == plans.StatusFailed && (rec.Error == "" || len(rec.Outputs) > 0):
				t.Errorf("failed record %+v: want an error and no outputs", rec)
			case tc.status == plans.StatusSucceed && (len(rec.Outputs) != 1 || rec.Outputs[0].SHA256 != ""):
				t.Errorf("record %+v: want its output with no hash, to fetch again", rec)
			}
			switch it := snap.Intents[addr]; {
			case it == nil && tc.intent != "":
				t.Errorf("no intent left, want one with job %s", tc.intent)
			case it != nil && it.GenerationID != tc.intent:
				t.Errorf("an intent with job %q left, want %q", it.GenerationID, tc.intent)
			}

			p = w.plan(tc.src)
			if c := p.Change(addr); c.Action != tc.next || c.Reason.Code != tc.reason {
				t.Errorf("next plan: %s %s, want %s %s", c.Action, c.Reason.Code, tc.next, tc.reason)
			}
		})
	}
}

// TestApplyFailedReplaceKeepsThePreviousFiles: when the generation meant
// to replace one fails, the record keeps the one before, its request,
// files and hashes, with the failure beside it; declaring the old request
// again is a no-op, the failed one again a retry; when that one succeeds,
// the new files take their place.
func TestApplyFailedReplaceKeepsThePreviousFiles(t *testing.T) {
	svc, w := convergedDir(t, appleConfig)
	before := w.snapshot().Resources[a("image.a")]
	green := strings.Replace(appleConfig, "a red apple\"", "a green apple\"\n  dir = \"art/a\"", 1)
	svc.scripts = map[string]fakeJob{"green apple": {statuses: []string{"processing", "failed"}}}

	res := w.apply(context.Background(), w.plan(green))
	if failedAddrs(res.Failed) != "image.a" {
		t.Fatalf("failed %q, want image.a", failedAddrs(res.Failed))
	}
	snap := w.snapshot()
	rec := snap.Resources[a("image.a")]
	if rec.Status != plans.StatusSucceed || rec.CreationID != "job-1" || rec.Fingerprint != before.Fingerprint || string(rec.Request) != string(before.Request) {
		t.Errorf("record %s of %s, want the previous generation job-1 kept as it was", rec.Status, rec.CreationID)
	}
	if f := rec.Failure; f == nil || f.GenerationID != "job-2" || f.Error == "" || !strings.Contains(string(f.Request), "green apple") {
		t.Errorf("failure beside the record: %+v, want job-2 with the green request", f)
	}
	if rec.Dir != before.Dir || len(rec.Outputs) != 2 || rec.Outputs[1].Path != before.Outputs[1].Path || rec.Outputs[1].SHA256 != before.Outputs[1].SHA256 {
		t.Errorf("the failed record lost the previous files: dir %q, outputs %+v", rec.Dir, rec.Outputs)
	}
	w.checkFiles(rec, "generated/image/a")
	if got := w.read("generated/image/a/0.png"); got != fakeMedia("job-1", 0, ".png") || w.exists("art/a") {
		t.Errorf("the previous files changed: %q, art/a there: %v", got, w.exists("art/a"))
	}
	if snap.Intents[a("image.a")] != nil {
		t.Error("the intent is still there")
	}

	if p := w.plan(appleConfig); p.HasChanges() {
		t.Errorf("declaring the previous request again is not a no-op: %v", p.Changes[0].Action)
	}
	svc.scripts = nil
	p := w.plan(green)
	if c := p.Change(a("image.a")); c.Action != plans.Replace || c.Reason.Code != plans.ReasonFailed {
		t.Fatalf("next plan: %s %s, want replace failed", c.Action, c.Reason.Code)
	}
	if res := w.apply(context.Background(), p); addrList(res.Generated) != "image.a" {
		t.Fatalf("retry: generated %q, failed %v", addrList(res.Generated), res.Failed)
	}
	rec = w.snapshot().Resources[a("image.a")]
	w.checkFiles(rec, "art/a")
	if rec.CreationID != "job-3" || w.exists("generated/image/a") {
		t.Errorf("retry recorded %s; generated/image/a there: %v", rec.CreationID, w.exists("generated/image/a"))
	}
}

// TestApplyDownloadFailureIsFetchedAgain: a generation whose files could
// not be fetched is paid for; the next apply fetches them, and generates
// nothing.
func TestApplyDownloadFailureIsFetchedAgain(t *testing.T) {
	svc := &fakeService{scripts: map[string]fakeJob{"red apple": {downloadErr: &apiclient.Error{HTTPStatus: 502}}}}
	w := newApplyDir(t, svc)
	if res := w.apply(context.Background(), w.plan(appleConfig)); failedAddrs(res.Failed) != "image.a" {
		t.Fatalf("failed %q, want image.a", failedAddrs(res.Failed))
	}
	p := w.plan(appleConfig)
	if c := p.Change(a("image.a")); c.Action != plans.Update || !slices.Equal(c.Redownload, []int{0, 1}) {
		t.Fatalf("next plan: %s redownload %v, want an update fetching both", c.Action, c.Redownload)
	}
	svc.rescript("job-1", func(j *fakeJob) { j.downloadErr = nil })
	res := w.apply(context.Background(), p)
	if addrList(res.Updated) != "image.a" || len(res.Failed) > 0 {
		t.Fatalf("updated %q, failed %v", addrList(res.Updated), res.Failed)
	}
	if n := svc.count("Create"); n != 1 {
		t.Errorf("%d create requests: the generation was paid for twice", n)
	}
	w.checkFiles(w.snapshot().Resources[a("image.a")], "generated/image/a")
	w.checkNoChanges(appleConfig, "not converged")
}

// TestApplyReplaceRemovesStaleFiles: a replace leaves only the new
// generation's files: fewer outputs remove the extra files, another dir
// removes the old one.
func TestApplyReplaceRemovesStaleFiles(t *testing.T) {
	tests := []struct {
		name  string
		after string
		dir   string
		gone  []string
	}{
		{"fewer outputs", strings.NewReplacer("red", "ripe", "image_number = 2", "image_number = 1").Replace(appleConfig),
			"generated/image/a", []string{"generated/image/a/1.png"}},
		{"another dir", strings.NewReplacer("red", "ripe", "image_number = 2", "image_number = 2\n  dir = \"art/a\"").Replace(appleConfig),
			"art/a", []string{"generated/image/a", "generated/image"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, w := convergedDir(t, appleConfig)
			res := w.converge(tc.after)
			if addrList(res.Generated) != "image.a" || w.snapshot().Resources[a("image.a")].CreationID != "job-2" {
				t.Fatalf("generated %q", addrList(res.Generated))
			}
			rec := w.snapshot().Resources[a("image.a")]
			w.checkFiles(rec, tc.dir)
			if got := w.read(rec.Outputs[0].Path); got != fakeMedia("job-2", 0, ".png") {
				t.Errorf("%s holds %q, want job-2's", rec.Outputs[0].Path, got)
			}
			for _, rel := range tc.gone {
				if w.exists(rel) {
					t.Errorf("%s is still there", rel)
				}
			}
		})
	}
}

// applyStateLost applies src over a new working directory against svc,
// the state's file closed while the first create request is on the wire
// (as when the disk fills up then), and checks the result says the state
// could not be written.
func applyStateLost(t *testing.T, svc *fakeService, src string) *Result {
	t.Helper()
	fastCommitRetries(t)
	w := newApplyDir(t, svc)
	p := w.plan(src)
	svc.afterCreate = func(string) { w.store.Close() }
	res := w.apply(context.Background(), p)
	if res.StateErr == nil {
		t.Fatal("the result does not say the state could not be written")
	}
	return res
}

// fastCommitRetries makes the waits between the retries of a commit
// short for the length of t, so that a state that cannot be written
// fails the apply at once.
func fastCommitRetries(t *testing.T) {
	waits := commitWaits
	commitWaits = []time.Duration{0, time.Millisecond}
	t.Cleanup(func() { commitWaits = waits })
}

// TestApplyUnrecordedJobWhosePollFails: a job paid for whose id the state
// could not hold is in the result's unrecorded jobs even when following
// it fails before its result could be recorded, so that the user learns
// its id and can adopt it.
func TestApplyUnrecordedJobWhosePollFails(t *testing.T) {
	for _, tc := range []struct {
		name string
		job  fakeJob
	}{
		{"status", fakeJob{statusErr: errors.New("status: connection reset")}},
		{"detail", fakeJob{detailErr: errors.New("detail: connection reset")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := applyStateLost(t, &fakeService{scripts: map[string]fakeJob{"a red apple": tc.job}}, oneImage)
			if len(res.Unrecorded) != 1 || res.Unrecorded[0].Addr.String() != "image.a" || res.Unrecorded[0].GenerationID == "" {
				t.Errorf("unrecorded %v, want image.a's job", res.Unrecorded)
			}
			if len(res.Unfinished) != 0 {
				t.Errorf("unfinished %v: the state holds no id to resume", res.Unfinished)
			}
		})
	}
}

// TestApplyStateUnwritable: once the state cannot be written, a job the
// service accepted is still followed to its end, nothing more is
// submitted, and the jobs paid for and not recorded are in the result,
// for the user to adopt with genform import.
func TestApplyStateUnwritable(t *testing.T) {
	const two = oneImage + `
image "b" {
  prompt       = "a green pear"
  image_number = 1
  depends_on   = [image.a]
}
`
	svc := &fakeService{}
	res := applyStateLost(t, svc, two)
	if got := fmt.Sprint(res.Unrecorded); !strings.Contains(got, "image.a") || !strings.Contains(got, "job-1") {
		t.Errorf("unrecorded %v, want image.a's job-1", res.Unrecorded)
	}
	if n := svc.count("Create"); n != 1 {
		t.Errorf("%d create requests, want 1: nothing is submitted once the state cannot be written", n)
	}
	if n := svc.count("Status"); n == 0 {
		t.Error("the accepted job was not followed")
	}
	if !strings.Contains(fmt.Sprint(res.Failed, res.Skipped), "image.b") {
		t.Errorf("image.b was neither refused nor skipped: failed %v skipped %v", res.Failed, res.Skipped)
	}
}
