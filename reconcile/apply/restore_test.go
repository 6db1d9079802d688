package apply

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/reconcile"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

const greenConfig = `
image "a" {
  prompt       = "a green apple"
  image_number = 2
}
`

// TestApplyRestore: a reverted request is restored from the cache with
// no request to the service at all; the files are the first
// generation's, the record holds it again, and the generation it
// replaced is restorable in turn.
func TestApplyRestore(t *testing.T) {
	svc, w := convergedDir(t, appleConfig)
	first := w.read("generated/image/a/0.png")
	w.converge(greenConfig)
	if w.read("generated/image/a/0.png") == first {
		t.Fatal("the second generation has the first one's bytes")
	}

	p := w.plan(appleConfig)
	c := p.Change(a("image.a"))
	if c.Action != plans.Restore || c.Reason.Code != plans.ReasonRestored || c.Reason.GenerationID != "job-1" || c.Reason.CreationID != "job-1" ||
		c.Reason.Holder != a("image.a") || !c.Reason.Cached || c.GenerationID != "job-1" {
		t.Fatalf("plan: %s %+v", c.Action, c.Reason)
	}
	if s := p.Summary(); s.Restore != 1 || s.Generate != 0 {
		t.Errorf("summary %+v", s)
	}
	calls := len(svc.calls)
	before := svc.calls["Download"] + svc.calls["Detail"] + svc.calls["Create"]
	res := w.apply(context.Background(), p)
	if addrList(res.Restored) != "image.a" || len(res.Failed) > 0 {
		t.Fatalf("restored %q, failed %v", addrList(res.Restored), res.Failed)
	}
	if after := svc.count("Download") + svc.count("Detail") + svc.count("Create"); after != before || len(svc.calls) != calls {
		t.Errorf("a restore from the cache sent %d requests", after-before)
	}
	if got := w.read("generated/image/a/0.png"); got != first {
		t.Errorf("restored bytes %q, want %q", got, first)
	}
	rec := w.snapshot().Resources[a("image.a")]
	if rec.GenerationID != "job-1" {
		t.Errorf("the record holds %s", rec.GenerationID)
	}
	w.checkFiles(rec, "generated/image/a")
	if ev := w.last("image.a"); ev.Phase != PhaseDone || ev.Action != plans.Restore || ev.Files != 2 {
		t.Errorf("last event %+v", ev)
	}
	if left := w.files("generated/image/a"); len(left) != 2 {
		t.Errorf("files left: %v", left)
	}
	w.checkNoChanges(appleConfig, "after the restore")
	// The generation it replaced is the one to restore now.
	if c := w.plan(greenConfig).Change(a("image.a")); c.Action != plans.Restore || c.Reason.GenerationID != "job-2" {
		t.Errorf("green again: %s %+v", c.Action, c.Reason)
	}
}

// TestApplyRestoreDownloads: with the cache gone, a restore fetches the
// creation's detail and its files by creation id (no create), checks them
// against the recorded hashes, and refuses other bytes without changing
// the files or the state.
func TestApplyRestoreDownloads(t *testing.T) {
	svc, w := convergedDir(t, appleConfig)
	first := w.read("generated/image/a/1.png")
	w.converge(greenConfig)
	second := w.read("generated/image/a/1.png")
	if err := os.RemoveAll(filepath.Join(w.dir, ".genform", "cache")); err != nil {
		t.Fatal(err)
	}

	// The service renders job-1 anew: the restore is refused.
	svc.rescript("job-1", func(j *fakeJob) { j.otherBytes = true })
	p := w.plan(appleConfig)
	if c := p.Change(a("image.a")); c.Action != plans.Restore || c.Reason.Cached {
		t.Fatalf("plan: %s %+v", c.Action, c.Reason)
	}
	creates := svc.count("Create")
	res := w.apply(context.Background(), p)
	if len(res.Failed) != 1 || !strings.Contains(res.Failed[0].Err.Error(), "not the recorded") {
		t.Fatalf("failed %v, want the download refused", res.Failed)
	}
	if w.read("generated/image/a/1.png") != second || w.snapshot().Resources[a("image.a")].GenerationID != "job-2" {
		t.Error("a refused restore changed the files or the record")
	}
	for _, f := range w.files("generated/image/a") {
		if strings.Contains(f, ".restore") {
			t.Errorf("left behind: %s", f)
		}
	}

	// Served as recorded, it is restored.
	svc.rescript("job-1", func(j *fakeJob) { j.otherBytes = false })
	res = w.apply(context.Background(), w.plan(appleConfig))
	if addrList(res.Restored) != "image.a" || len(res.Failed) > 0 {
		t.Fatalf("restored %q, failed %v", addrList(res.Restored), res.Failed)
	}
	if svc.count("Create") != creates {
		t.Error("a restore created a job")
	}
	if svc.count("Detail") == 0 {
		t.Error("the creation's detail was not fetched")
	}
	if got := w.read("generated/image/a/1.png"); got != first {
		t.Errorf("restored %q, want %q", got, first)
	}
	w.checkFiles(w.snapshot().Resources[a("image.a")], "generated/image/a")
}

// TestPlanRestoreOneHolder: four instances of one request with a random
// seed are four generations; shrunk to one and grown back, each instance
// gets the generation it held, and none is restored twice.
func TestPlanRestoreOneHolder(t *testing.T) {
	four := strings.Replace(appleConfig, `image "a" {`, `image "a" {
  count = 4`, 1)
	one := strings.Replace(four, "count = 4", "count = 1", 1)
	svc, w := convergedDir(t, four)
	held := map[string]string{}
	for addr, rec := range w.snapshot().Resources {
		held[addr.String()] = rec.GenerationID
	}
	w.converge(one)
	p := w.plan(four)
	seen := map[string]bool{}
	for _, c := range p.Changes {
		if c.Addr == a("image.a[0]") {
			continue
		}
		if c.Action != plans.Restore || c.GenerationID != held[c.Addr.String()] || seen[c.GenerationID] {
			t.Errorf("%s: %s of %s, want a restore of %s", c.Addr, c.Action, c.GenerationID, held[c.Addr.String()])
		}
		seen[c.GenerationID] = true
	}
	creates := svc.count("Create")
	w.apply(context.Background(), p)
	if svc.count("Create") != creates {
		t.Error("growing back created jobs")
	}
	for addr, rec := range w.snapshot().Resources {
		if rec.GenerationID != held[addr.String()] {
			t.Errorf("%s holds %s, held %s before", addr, rec.GenerationID, held[addr.String()])
		}
	}
}

// TestPlanRestoreOff: restore = false, and a plan without the history,
// generate anew.
func TestPlanRestoreOff(t *testing.T) {
	w := newApplyDir(t, &fakeService{})
	w.converge(appleConfig)
	w.converge(greenConfig)
	if c := w.plan("genform {\n  restore = false\n}\n" + appleConfig).Change(a("image.a")); c.Action != plans.Replace {
		t.Errorf("restore = false: %s", c.Action)
	}
	w.configure(appleConfig)
	in := w.input()
	in.History = nil
	p, _ := reconcile.MakePlan(in)
	if c := p.Change(a("image.a")); c.Action != plans.Replace {
		t.Errorf("no history: %s", c.Action)
	}
}

// TestSettledJobIsKept: the job of an interrupted submission for a
// request no longer declared is followed to its end when it is settled,
// and kept in the history with its files in the cache, so that declaring
// its request again restores it instead of paying for it a second time.
func TestSettledJobIsKept(t *testing.T) {
	svc, w := convergedDir(t, appleConfig)
	// An apply of the green apple submitted job-7 and was killed.
	w.configure(greenConfig)
	svc.addJob("job-7", addrs.Image, fakeJob{outputs: 2})
	w.interrupted("image.a", "job-7")

	p := w.plan(appleConfig)
	if c := p.Change(a("image.a")); c.Action != plans.Update || !c.Reason.MayHaveBeenPaid() {
		t.Fatalf("plan: %s %+v, want the submission settled", c.Action, c.Reason)
	}
	res := w.apply(context.Background(), p)
	if len(res.Failed) > 0 {
		t.Fatalf("failed %v", res.Failed)
	}
	greenFP := w.plan(greenConfig).Change(a("image.a")).Fingerprint
	w.configure(appleConfig)
	e, err := w.store.Generations(greenFP)
	if err != nil || len(e) != 1 || e[0].GenerationID != "job-7" || e[0].Status != plans.StatusSucceed || !everyOutputHashed(e[0]) {
		t.Fatalf("history of the green request = %+v, %v", e, err)
	}
	if snap := w.snapshot(); snap.Intents[a("image.a")] != nil || snap.Resources[a("image.a")].GenerationID != "job-1" {
		t.Error("the settle did not leave the record as it was, without the intent")
	}

	creates := svc.count("Create")
	p = w.plan(greenConfig)
	if c := p.Change(a("image.a")); c.Action != plans.Restore || c.GenerationID != "job-7" || !c.Reason.Cached {
		t.Fatalf("green again: %s %+v", c.Action, c.Reason)
	}
	res = w.apply(context.Background(), p)
	if addrList(res.Restored) != "image.a" || svc.count("Create") != creates {
		t.Errorf("restored %q, %d creates", addrList(res.Restored), svc.count("Create")-creates)
	}
	if got := w.read("generated/image/a/1.png"); got != "content of http://fake.test/media/job-7/1.png" {
		t.Errorf("restored %q", got)
	}
}

// A settled job still running when the timeout passes is not forgotten:
// the update stops, the intent stays, and the next apply follows the job
// again.
func TestSettledJobStillRunningKeepsItsIntent(t *testing.T) {
	svc, w := convergedDir(t, appleConfig)
	w.configure(greenConfig)
	svc.addJob("job-7", addrs.Image, fakeJob{statuses: []string{"processing"}})
	w.interrupted("image.a", "job-7")

	p := w.plan(appleConfig)
	w.timeout = 200 * time.Millisecond
	res := w.apply(context.Background(), p)
	if len(res.Failed) != 1 || !strings.Contains(res.Failed[0].Err.Error(), "its intent is kept") {
		t.Fatalf("failed %v; want the update stopped, its intent kept", res.Failed)
	}
	if it := w.snapshot().Intents[a("image.a")]; it == nil || it.GenerationID != "job-7" {
		t.Errorf("intent = %+v, want job-7 kept", it)
	}
}

// everyOutputHashed reports whether every output of e has its sha256: the
// planner restores no generation whose files were not all hashed.
func everyOutputHashed(e *statefile.Resource) bool {
	for _, o := range e.Outputs {
		if o.SHA256 == "" {
			return false
		}
	}
	return true
}

// TestApplyRestoreDownloadsByCreation: a restore the cache cannot serve
// asks the service for the creation again, never for a new job: a
// watermark-free video comes from the creation's watermark-free link, and
// a creation that no longer lists a file, or whose link cannot be had,
// fails the restore without changing the files or the record.
func TestApplyRestoreDownloadsByCreation(t *testing.T) {
	first := strings.Replace(wavesConfig, `"waves"`, "\"waves\"\n  watermark_free = true", 1)
	second := strings.Replace(first, `"waves"`, `"calm waves"`, 1)
	for _, tc := range []struct {
		name   string
		script func(*fakeJob)
		words  string
	}{
		{name: "the watermark-free file"},
		{name: "the creation lists no file", script: func(j *fakeJob) { j.noOutputs = true },
			words: "creation job-1 no longer lists output 0; nothing was changed"},
		{name: "no watermark-free link", script: func(j *fakeJob) { j.wmErr = errors.New("the link service is down") },
			words: "getting the watermark-free URL of creation job-1: the link service is down; nothing was changed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, w := convergedDir(t, first)
			w.converge(second)
			now := w.read("generated/video/v/0.mp4")
			if err := os.RemoveAll(filepath.Join(w.dir, ".genform", "cache")); err != nil {
				t.Fatal(err)
			}
			if tc.script != nil {
				svc.rescript("job-1", tc.script)
			}
			p := w.plan(first)
			if c := p.Change(a("video.v")); c.Action != plans.Restore || c.Reason.Cached || c.GenerationID != "job-1" {
				t.Fatalf("planned %s %+v, want job-1 restored by creation id", c.Action, c.Reason)
			}
			creates, links := svc.count("Create"), svc.count("WatermarkFreeURL")
			res := w.apply(context.Background(), p)
			if svc.count("Create") != creates {
				t.Error("a restore created a job")
			}
			if tc.words != "" {
				if len(res.Failed) != 1 || !strings.Contains(res.Failed[0].Err.Error(), tc.words) {
					t.Fatalf("failed %v, want %q", res.Failed, tc.words)
				}
				if w.read("generated/video/v/0.mp4") != now || w.snapshot().Resources[a("video.v")].GenerationID != "job-2" {
					t.Error("a failed restore changed the file or the record")
				}
				for _, f := range w.files("generated/video/v") {
					if strings.Contains(f, ".restore") {
						t.Errorf("left behind: %s", f)
					}
				}
				return
			}
			if addrList(res.Restored) != "video.v" || len(res.Failed) != 0 {
				t.Fatalf("restored %q, failed %v", addrList(res.Restored), res.Failed)
			}
			if svc.count("WatermarkFreeURL") != links+1 {
				t.Errorf("%d watermark-free links asked, want 1", svc.count("WatermarkFreeURL")-links)
			}
			if got := w.read("generated/video/v/0.mp4"); got != "content of http://fake.test/nowm/job-1.mp4" {
				t.Errorf("restored %q, want job-1's watermark-free file", got)
			}
			rec := w.snapshot().Resources[a("video.v")]
			if rec.GenerationID != "job-1" || !rec.WatermarkFree {
				t.Errorf("recorded %s, watermark-free %v", rec.GenerationID, rec.WatermarkFree)
			}
			w.checkFiles(rec, "generated/video/v")
			w.checkNoChanges(first, "after the restore")
		})
	}
}
