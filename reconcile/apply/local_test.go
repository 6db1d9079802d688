package apply

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/reconcile"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// TestApplyUpdate checks an update makes the files what the declaration
// and the record say, without generating: files move with dir, only what
// is missing or edited is fetched again, and watermark_free fetches every
// output from the other URL.
func TestApplyUpdate(t *testing.T) {
	artDir := strings.Replace(appleConfig, "image_number = 2", "image_number = 2\n  dir = \"art/apple\"", 1)
	wmFree := strings.Replace(wavesConfig, `"waves"`, "\"waves\"\n  watermark_free = true", 1)
	remove := func(rel string) func(*applyDir) {
		return func(w *applyDir) { os.Remove(filepath.Join(w.dir, rel)) }
	}
	tests := []struct {
		name          string
		before, after string
		disturb       func(*applyDir) // what happens to the files between the applies
		addr          string
		dir           string
		downloads     []string // URLs the update fetches
		watermarkURL  bool     // whether it asks for the watermark-free URL
		want          map[string]string
		gone          []string
	}{
		{
			name: "dir changed: the files move", before: appleConfig, after: artDir, addr: "image.a", dir: "art/apple",
			want: map[string]string{"art/apple/0.png": fakeMedia("job-1", 0, ".png"), "art/apple/1.png": fakeMedia("job-1", 1, ".png")},
			gone: []string{"generated/image/a", "generated/image"},
		},
		{
			name: "an output missing: only it is fetched", before: appleConfig, after: appleConfig, addr: "image.a", dir: "generated/image/a",
			disturb:   remove("generated/image/a/1.png"),
			downloads: []string{"http://fake.test/media/job-1/1.png"},
			want:      map[string]string{"generated/image/a/0.png": fakeMedia("job-1", 0, ".png"), "generated/image/a/1.png": fakeMedia("job-1", 1, ".png")},
		},
		{
			name: "an output edited: only it is fetched", before: appleConfig, after: appleConfig, addr: "image.a", dir: "generated/image/a",
			disturb: func(w *applyDir) {
				os.WriteFile(filepath.Join(w.dir, "generated/image/a/0.png"), []byte("scribbled over"), 0o644)
			},
			downloads: []string{"http://fake.test/media/job-1/0.png"},
			want:      map[string]string{"generated/image/a/0.png": fakeMedia("job-1", 0, ".png"), "generated/image/a/1.png": fakeMedia("job-1", 1, ".png")},
		},
		{
			name: "dir changed and an output missing: one moves, one is fetched", before: appleConfig, after: artDir, addr: "image.a", dir: "art/apple",
			disturb:   remove("generated/image/a/1.png"),
			downloads: []string{"http://fake.test/media/job-1/1.png"},
			want:      map[string]string{"art/apple/0.png": fakeMedia("job-1", 0, ".png"), "art/apple/1.png": fakeMedia("job-1", 1, ".png")},
			gone:      []string{"generated/image/a"},
		},
		{
			name: "watermark_free turned on: fetched from the watermark-free URL", before: wavesConfig, after: wmFree, addr: "video.v", dir: "generated/video/v",
			downloads: []string{"http://fake.test/nowm/job-1.mp4"}, watermarkURL: true,
			want: map[string]string{"generated/video/v/0.mp4": "content of http://fake.test/nowm/job-1.mp4"},
		},
		{
			name: "watermark_free turned off: the media URL again", before: wmFree, after: wavesConfig, addr: "video.v", dir: "generated/video/v",
			downloads: []string{"http://fake.test/media/job-1/0.mp4"},
			want:      map[string]string{"generated/video/v/0.mp4": fakeMedia("job-1", 0, ".mp4")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc, w := convergedDir(t, tc.before)
			if tc.disturb != nil {
				tc.disturb(w)
			}
			p := w.plan(tc.after)
			if c := p.Change(a(tc.addr)); c.Action != plans.Update {
				t.Fatalf("plan: %s %+v, want an update", c.Action, c.Reason)
			}
			downloads, wm := len(svc.downloads), svc.count("WatermarkFreeURL")

			res := w.apply(context.Background(), p)
			// Files that only change directory count as moved.
			done, other := res.Updated, res.Moved
			if len(tc.downloads) == 0 && p.Change(a(tc.addr)).MovesOnly() {
				done, other = res.Moved, res.Updated
			}
			if addrList(done) != tc.addr || len(res.Generated)+len(res.Failed)+len(other) > 0 {
				t.Errorf("result %+v, want %s updated (or moved) and nothing else", res, tc.addr)
			}
			if n := svc.count("Create"); n != 1 {
				t.Errorf("%d create requests, want only the first apply's", n)
			}
			if got := svc.downloads[downloads:]; !slices.Equal(got, tc.downloads) {
				t.Errorf("the update fetched %q, want %q", got, tc.downloads)
			}
			wantWM := 0
			if tc.watermarkURL {
				wantWM = 1
			}
			if got := svc.count("WatermarkFreeURL") - wm; got != wantWM {
				t.Errorf("%d watermark-free URL requests, want %d", got, wantWM)
			}
			rec := w.snapshot().Resources[a(tc.addr)]
			if rec.Dir != tc.dir || rec.CreationID != "job-1" {
				t.Errorf("record dir %q job %q, want %q job-1", rec.Dir, rec.CreationID, tc.dir)
			}
			w.checkFiles(rec, tc.dir)
			for rel, content := range tc.want {
				if got := w.read(rel); got != content {
					t.Errorf("%s holds %q, want %q", rel, got, content)
				}
			}
			for _, rel := range tc.gone {
				if w.exists(rel) {
					t.Errorf("%s is still there", rel)
				}
			}
			if ev := w.last(tc.addr); ev.Phase != PhaseDone || ev.Files != len(rec.Outputs) || ev.Dir != tc.dir || ev.Reason.Code != plans.ReasonLocal {
				t.Errorf("last event %+v, want done with %d files in %s", ev, len(rec.Outputs), tc.dir)
			}
			w.checkNoChanges(tc.after, "the plan after the update")
		})
	}
}

// TestApplyMove checks a rename: the record, its protection and its files
// follow the new address, and nothing is generated or fetched.
func TestApplyMove(t *testing.T) {
	protected := strings.Replace(appleConfig, "image_number = 2", "image_number = 2\n  lifecycle {\n    prevent_destroy = true\n  }", 1)
	inArt := strings.Replace(appleConfig, "image_number = 2", "image_number = 2\n  dir = \"art\"", 1)
	tests := []struct {
		name          string
		before, after string
		dir           string
		protected     bool
		gone          string
	}{
		{name: "the files follow the address, with the protection", before: protected,
			after: strings.Replace(protected, `image "a"`, `image "apple"`, 1), dir: "generated/image/apple", protected: true, gone: "generated/image/a"},
		{name: "a dir of its own: the files stay", before: inArt,
			after: strings.Replace(inArt, `image "a"`, `image "apple"`, 1), dir: "art"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc, w := convergedDir(t, tc.before)
			if got := w.snapshot().Protections[a("image.a")]; got != tc.protected {
				t.Fatalf("protection of image.a after the first apply: %v", got)
			}
			p := w.plan(tc.after)
			if c := p.Change(a("image.apple")); c.Action != plans.Move || c.PrevAddr != a("image.a") {
				t.Fatalf("plan: %s from %s, want a move from image.a", c.Action, c.PrevAddr)
			}
			downloads := len(svc.downloads)

			res := w.apply(context.Background(), p)
			if addrList(res.Moved) != "image.apple" || len(res.Generated)+len(res.Deleted)+len(res.Failed) > 0 {
				t.Errorf("result %+v, want image.apple moved and nothing else", res)
			}
			if svc.count("Create") != 1 || len(svc.downloads) != downloads {
				t.Errorf("%d creates, %d downloads: a move generates and fetches nothing", svc.count("Create"), len(svc.downloads)-downloads)
			}
			snap := w.snapshot()
			rec := snap.Resources[a("image.apple")]
			if rec == nil || rec.CreationID != "job-1" || rec.Dir != tc.dir {
				t.Fatalf("record at image.apple: %+v", rec)
			}
			if snap.Resources[a("image.a")] != nil || snap.Protections[a("image.a")] {
				t.Errorf("image.a is still in the state")
			}
			if snap.Protections[a("image.apple")] != tc.protected {
				t.Errorf("protection of image.apple: %v, want %v", snap.Protections[a("image.apple")], tc.protected)
			}
			w.checkFiles(rec, tc.dir)
			for _, o := range rec.Outputs {
				if got := w.read(o.Path); got != fakeMedia("job-1", o.Index, ".png") {
					t.Errorf("%s holds %q: not the generated file", o.Path, got)
				}
			}
			if tc.gone != "" && w.exists(tc.gone) {
				t.Errorf("%s is still there", tc.gone)
			}
			if ev := w.last("image.apple"); ev.Phase != PhaseDone || ev.PrevAddr != a("image.a") || ev.Files != 2 || ev.Dir != tc.dir {
				t.Errorf("last event %+v", ev)
			}
			w.checkNoChanges(tc.after, "the plan after the move")
		})
	}
}

// TestApplyDelete checks a delete removes the files of what left the
// configuration and forgets it, without a request to the service, and
// that an address with only an interrupted submission is forgotten too.
func TestApplyDelete(t *testing.T) {
	pear := appleConfig + `
image "b" {
  prompt       = "a green pear"
  image_number = 2
}
`
	tests := []struct {
		name   string
		before string
		// leftover records what an interrupted apply left, before the
		// configuration becomes appleConfig.
		leftover func(*applyDir)
		addr     string
		reason   plans.ReasonCode
		gone     []string
	}{
		{
			name: "a record and its intent", before: pear, addr: "image.b", reason: plans.ReasonRemoved,
			leftover: func(w *applyDir) { w.interrupted("image.b", "job-9") },
			gone:     []string{"generated/image/b/0.png", "generated/image/b/1.png", "generated/image/b"},
		},
		{
			name: "an intent alone", before: pear, addr: "image.b", reason: plans.ReasonRemovedIntent,
			leftover: func(w *applyDir) {
				if err := w.store.Update(func(tx *statefile.Tx) error {
					_, err := tx.Forget(a("image.b"))
					return err
				}); err != nil {
					w.t.Fatal(err)
				}
				w.interrupted("image.b", "job-9")
				os.RemoveAll(filepath.Join(w.dir, "generated/image/b"))
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc, w := convergedDir(t, tc.before)
			tc.leftover(w)
			p := w.plan(appleConfig)
			if c := p.Change(a(tc.addr)); c.Action != plans.Delete || c.Reason.Code != tc.reason {
				t.Fatalf("plan: %s %s, want delete %s", c.Action, c.Reason.Code, tc.reason)
			}
			// Nothing is paid for or downloaded; the job of a forgotten
			// submission is asked after, to keep it in the history (job-9
			// is not one the service knows: it is not kept).
			calls := svc.count("Create") + svc.count("Detail") + svc.count("Download")

			res := w.apply(context.Background(), p)
			if addrList(res.Deleted) != tc.addr || len(res.Failed) > 0 {
				t.Errorf("deleted %q, failed %v; want %s deleted", addrList(res.Deleted), res.Failed, tc.addr)
			}
			if n := svc.count("Create") + svc.count("Detail") + svc.count("Download"); n != calls {
				t.Errorf("the delete made %d requests to the service", n-calls)
			}
			snap := w.snapshot()
			if snap.Resources[a(tc.addr)] != nil || snap.Intents[a(tc.addr)] != nil || snap.Protections[a(tc.addr)] {
				t.Errorf("%s is still in the state", tc.addr)
			}
			for _, rel := range tc.gone {
				if w.exists(rel) {
					t.Errorf("%s is still there", rel)
				}
			}
			if rec := snap.Resources[a("image.a")]; rec == nil {
				t.Error("image.a was deleted too")
			} else {
				w.checkFiles(rec, "generated/image/a")
			}
			if ev := w.last(tc.addr); ev.Phase != PhaseDone || ev.Action != plans.Delete {
				t.Errorf("last event %+v", ev)
			}
			w.checkNoChanges(appleConfig, "the plan after the delete")
		})
	}
}

// TestApplyDestroy checks a destroy plan: everything recorded is deleted
// and intents alone are forgotten; a protected instance is refused, and
// -target leaves it as it is.
func TestApplyDestroy(t *testing.T) {
	const fruit = appleConfig + `
image "b" {
  prompt       = "a green pear"
  image_number = 1
  lifecycle {
    prevent_destroy = PROTECT
  }
}
video "v" {
  prompt = "waves"
}
image "c" {
  prompt = "a plum"
}
`
	tests := []struct {
		name    string
		protect bool
		targets []addrs.Instance
		refused string // the protected address the plan refuses
		deleted string
		kept    []string
	}{
		{name: "everything", deleted: "image.a image.b image.c video.v"},
		{name: "a protected instance is refused", protect: true, refused: "image.b"},
		{name: "targets leave the protected instance out", protect: true, targets: []addrs.Instance{a("image.a"), a("image.c")},
			deleted: "image.a image.c", kept: []string{"image.b", "video.v"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := &fakeService{}
			w := newApplyDir(t, svc)
			src := strings.Replace(fruit, "PROTECT", strconv.FormatBool(tc.protect), 1)
			// image.c was submitted by an apply that was interrupted.
			w.converge(src[:strings.Index(src, `image "c"`)])
			w.configure(src)
			w.interrupted("image.c", "job-9")

			in := w.input()
			in.Targets = tc.targets
			p, diags := reconcile.MakeDestroyPlan(in)
			if tc.refused != "" {
				if !diags.HasErrors() || !strings.Contains(diags.Error(), tc.refused) || p.Change(a(tc.refused)) != nil {
					t.Fatalf("diagnostics %v, changes %v: want %s refused", diags, actions(p), tc.refused)
				}
				return
			}
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			res := w.apply(context.Background(), p)
			if addrList(res.Deleted) != tc.deleted || len(res.Failed) > 0 {
				t.Fatalf("deleted %q, failed %v; want %q", addrList(res.Deleted), res.Failed, tc.deleted)
			}
			snap := w.snapshot()
			for _, addr := range strings.Fields(tc.deleted) {
				if snap.Resources[a(addr)] != nil || snap.Intents[a(addr)] != nil || snap.Protections[a(addr)] {
					t.Errorf("%s is still in the state", addr)
				}
			}
			var keptFiles []string
			for _, addr := range tc.kept {
				rec := snap.Resources[a(addr)]
				if rec == nil {
					t.Fatalf("%s was destroyed", addr)
				}
				w.checkFiles(rec, rec.Dir)
				for _, o := range rec.Outputs {
					keptFiles = append(keptFiles, o.Path)
				}
			}
			if tc.protect && !snap.Protections[a("image.b")] {
				t.Error("image.b lost its protection")
			}
			slices.Sort(keptFiles)
			if got := w.files("generated"); !slices.Equal(got, keptFiles) {
				t.Errorf("files left %v, want %v", got, keptFiles)
			}
			if w.exists("generated/image/a") {
				t.Error("generated/image/a is still there")
			}
		})
	}
}

// TestApplyLiftsPreventDestroy: the refusal to destroy a protected
// instance tells the user to set prevent_destroy = false and apply; after
// doing so, destroy and removing the block must go through.
func TestApplyLiftsPreventDestroy(t *testing.T) {
	protect := func(on string) string {
		return strings.Replace(appleConfig, "image_number = 2", "image_number = 2\n  lifecycle {\n    prevent_destroy = "+on+"\n  }", 1)
	}
	w := newApplyDir(t, &fakeService{})
	w.converge(protect("true"))
	w.converge(protect("false"))
	if w.snapshot().Protections[a("image.a")] {
		t.Error("the state still protects image.a after applying prevent_destroy = false")
	}
	if _, diags := reconcile.MakeDestroyPlan(w.input()); diags.HasErrors() {
		t.Errorf("destroy: %v", diags)
	}
}

// TestApplyStalePlan: a plan applied after the state it was made from
// changed (by state rm, or another apply) fails the changes it no longer
// fits, asking for a new plan, and generates nothing in their place.
func TestApplyStalePlan(t *testing.T) {
	forget := func(addr string) func(*applyDir) {
		return func(w *applyDir) {
			if err := w.store.Update(func(tx *statefile.Tx) error {
				_, err := tx.Forget(a(addr))
				return err
			}); err != nil {
				w.t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name   string
		before string // applied first ("" for nothing)
		job    string // an interrupted job of image.a
		after  string
		change func(*applyDir) // what changes the state after the plan
		addr   string
		action plans.Action
	}{
		{name: "a move whose record left", before: appleConfig, after: strings.Replace(appleConfig, `"a"`, `"apple"`, 1),
			change: forget("image.a"), addr: "image.apple", action: plans.Move},
		{name: "an update whose record left", before: appleConfig, after: strings.Replace(appleConfig, "image_number = 2", "image_number = 2\n  dir = \"art\"", 1),
			change: forget("image.a"), addr: "image.a", action: plans.Update},
		{name: "a resume whose intent left", job: "job-7", after: appleConfig,
			change: forget("image.a"), addr: "image.a", action: plans.Resume},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc, w := convergedDir(t, tc.before)
			if tc.job != "" {
				svc.addJob(tc.job, addrs.Image, fakeJob{})
				w.configure(tc.after)
				w.interrupted("image.a", tc.job)
			}
			p := w.plan(tc.after)
			if c := p.Change(a(tc.addr)); c.Action != tc.action {
				t.Fatalf("plan: %s, want %s", c.Action, tc.action)
			}
			tc.change(w)
			creates, polls := svc.count("Create"), svc.count("Status")
			res := w.apply(context.Background(), p)
			if failedAddrs(res.Failed) != tc.addr || !strings.Contains(res.Failed[0].Err.Error(), "run plan again") {
				t.Fatalf("failed %v, want %s to ask for a new plan", res.Failed, tc.addr)
			}
			if svc.count("Create") != creates || svc.count("Status") != polls {
				t.Error("the stale change made requests to the service")
			}
			if snap := w.snapshot(); snap.Resources[a(tc.addr)] != nil {
				t.Errorf("%s recorded: %+v", tc.addr, snap.Resources[a(tc.addr)])
			}
		})
	}
}
