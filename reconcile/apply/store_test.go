package apply

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/blobstore"
	"github.com/genform/genform/internal/blobstore/s3test"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// storeDir is a working directory against a new fakeService whose
// configuration keeps outputs in an object store: a real S3-compatible
// server (versitygw, on loopback), its credentials in the environment as
// a user gives them.
type storeDir struct {
	*applyDir
	svc *fakeService
	srv *s3test.Server
}

func newStoreDir(t *testing.T) *storeDir {
	t.Helper()
	srv := s3test.Start(t)
	for _, kv := range srv.Env() {
		if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AWS_") {
			t.Setenv(k, v)
		}
	}
	b, err := blobstore.Open(blobstore.Options{Bucket: srv.Bucket, Endpoint: srv.Endpoint, PathStyle: true})
	if err != nil {
		t.Fatal(err)
	}
	svc := &fakeService{}
	w := newApplyDir(t, svc)
	w.blobs = b
	return &storeDir{applyDir: w, svc: svc, srv: srv}
}

// with is body under a genform block that configures the store.
func (s *storeDir) with(body string) string {
	return fmt.Sprintf(`
genform {
  store "s3" {
    bucket     = %q
    endpoint   = %q
    path_style = true
  }
}
`, s.srv.Bucket, s.srv.Endpoint) + body
}

// object is the file the server keeps the bytes of sha in.
func (s *storeDir) object(sha string) string { return s.srv.ObjectPath(s.blobs.Key(sha)) }

// checkStored fails unless the state records every output of addr as
// stored and the store holds each file's bytes under its sha256.
func (s *storeDir) checkStored(addr string) *statefile.Resource {
	s.t.Helper()
	rec := s.snapshot().Resources[a(addr)]
	if rec == nil || len(rec.Outputs) == 0 {
		s.t.Fatalf("%s is not recorded with files: %+v", addr, rec)
	}
	for _, o := range rec.Outputs {
		if !o.Stored {
			s.t.Errorf("%s output %d is not recorded as stored", addr, o.Index)
		}
		got, err := os.ReadFile(s.object(o.SHA256))
		if err != nil || string(got) != s.read(o.Path) {
			s.t.Errorf("%s output %d: the store holds %q (%v), the file %q", addr, o.Index, got, err, s.read(o.Path))
		}
	}
	return rec
}

// warned reports whether an event of addr warned with words containing
// each of words.
func (w *applyDir) warned(addr string, words ...string) bool {
	for _, ev := range w.eventsOf(addr) {
		if ev.Phase != PhaseWarning || ev.Err == nil {
			continue
		}
		all := true
		for _, s := range words {
			all = all && strings.Contains(ev.Err.Error(), s)
		}
		if all {
			return true
		}
	}
	return false
}

// An apply uploads every file it downloads once its instance is
// recorded, under the file's sha256, and records that the store holds
// it; the next plan sees every file stored and has nothing to do.
func TestApplyUploadsEveryOutput(t *testing.T) {
	s := newStoreDir(t)
	src := s.with(appleConfig)
	res := s.converge(src)
	if addrList(res.Generated) != "image.a" || len(res.Unstored) != 0 {
		t.Fatalf("generated %q, unstored %+v", addrList(res.Generated), res.Unstored)
	}
	rec := s.checkStored("image.a")
	s.checkFiles(rec, "generated/image/a")
	keys, err := s.srv.Keys()
	if err != nil || len(keys) != 2 {
		t.Errorf("the bucket holds %v (%v), want the 2 files", keys, err)
	}
	if c := s.plan(src).Change(a("image.a")); c.Action != plans.NoOp || c.Store != plans.StoreAll {
		t.Errorf("next plan: %s, store %q; want a no-op with every file stored", c.Action, c.Store)
	}
}

// A file missing on disk comes back from the store, not the provider:
// the plan says so, nothing is downloaded from the provider, and the
// bytes are the recorded ones.
func TestMissingFileComesFromTheStore(t *testing.T) {
	s := newStoreDir(t)
	src := s.with(appleConfig)
	s.converge(src)
	want := s.read("generated/image/a/1.png")
	if err := os.Remove(filepath.Join(s.dir, "generated/image/a/1.png")); err != nil {
		t.Fatal(err)
	}

	p := s.plan(src)
	c := p.Change(a("image.a"))
	if c.Action != plans.Update || len(c.Reason.Local) != 1 {
		t.Fatalf("planned %s %+v, want an update of the missing file", c.Action, c.Reason)
	}
	if l := c.Reason.Local[0]; l.What != plans.OutputMissing || l.Output != 1 || !l.Stored || l.Cached {
		t.Fatalf("local change %+v, want output 1 missing, fetched from the store", l)
	}
	downloads, details := s.svc.count("Download"), s.svc.count("Detail")
	res := s.apply(context.Background(), p)
	if addrList(res.Updated) != "image.a" || len(res.Failed) != 0 {
		t.Fatalf("updated %q, failed %v", addrList(res.Updated), res.Failed)
	}
	if s.svc.count("Download") != downloads || s.svc.count("Detail") != details {
		t.Errorf("the provider was asked for the file: %d downloads, %d details", s.svc.count("Download")-downloads, s.svc.count("Detail")-details)
	}
	if got := s.read("generated/image/a/1.png"); got != want {
		t.Errorf("the file holds %q, want %q", got, want)
	}
	s.checkFiles(s.checkStored("image.a"), "generated/image/a")
	if ev := s.last("image.a"); ev.Phase != PhaseDone || ev.Reason == nil || len(ev.Reason.Local) != 1 || !ev.Reason.Local[0].Stored {
		t.Errorf("done event %+v, want it to say the file came from the store", ev)
	}
	s.checkNoChanges(src, "after the file came back from the store")
}

// An object the store lacks (removed from the bucket) is downloaded from
// the provider after all, with a warning naming it; the file goes up to
// the store again.
func TestObjectTheStoreLacksComesFromTheProvider(t *testing.T) {
	s := newStoreDir(t)
	src := s.with(appleConfig)
	s.converge(src)
	rec := s.snapshot().Resources[a("image.a")]
	lost := rec.Outputs[1]
	if err := os.Remove(s.object(lost.SHA256)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(s.dir, filepath.FromSlash(lost.Path))); err != nil {
		t.Fatal(err)
	}

	downloads := s.svc.count("Download")
	res := s.apply(context.Background(), s.plan(src))
	if addrList(res.Updated) != "image.a" || len(res.Failed) != 0 || len(res.Unstored) != 0 {
		t.Fatalf("updated %q, failed %v, unstored %+v", addrList(res.Updated), res.Failed, res.Unstored)
	}
	if !s.warned("image.a", "output 1 is not in the store", s.blobs.Object(lost.SHA256), "downloaded from the provider") {
		t.Errorf("no warning that the store lacks output 1: %v", s.eventsOf("image.a"))
	}
	if n := s.svc.count("Download") - downloads; n != 1 {
		t.Errorf("%d downloads from the provider, want the 1 file the store lacks", n)
	}
	if got := s.read(lost.Path); got != fakeMedia("job-1", 1, ".png") {
		t.Errorf("the file holds %q", got)
	}
	s.checkFiles(s.checkStored("image.a"), "generated/image/a")
	s.checkNoChanges(src, "after the file was downloaded and stored again")
}

// An object whose bytes were changed in the store is refused: the file is
// not written, the provider is not asked for it, and the error says what
// to do. Doing it (removing the object) lets the next apply download the
// file and store it again.
func TestChangedObjectIsRefused(t *testing.T) {
	s := newStoreDir(t)
	src := s.with(appleConfig)
	s.converge(src)
	o := s.snapshot().Resources[a("image.a")].Outputs[0]
	obj := s.object(o.SHA256)
	b, err := os.ReadFile(obj)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(obj, bytes.ToUpper(b), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(s.dir, filepath.FromSlash(o.Path))); err != nil {
		t.Fatal(err)
	}

	downloads := s.svc.count("Download")
	res := s.apply(context.Background(), s.plan(src))
	var ce *blobstore.CorruptError
	if len(res.Failed) != 1 || !errors.As(res.Failed[0].Err, &ce) || !strings.Contains(res.Failed[0].Err.Error(), "remove that object from the store") {
		t.Fatalf("failed %v, want the changed object refused, saying what to do", res.Failed)
	}
	if s.exists(o.Path) || s.svc.count("Download") != downloads {
		t.Errorf("the file was written (%v) or asked of the provider (%d downloads)", s.exists(o.Path), s.svc.count("Download")-downloads)
	}

	if err := os.Remove(obj); err != nil {
		t.Fatal(err)
	}
	res = s.apply(context.Background(), s.plan(src))
	if addrList(res.Updated) != "image.a" || len(res.Failed) != 0 {
		t.Fatalf("after removing the object: updated %q, failed %v", addrList(res.Updated), res.Failed)
	}
	s.checkFiles(s.checkStored("image.a"), "generated/image/a")
}

// A store that cannot be reached loses nothing: the files are downloaded
// and recorded, listed as unstored with their objects, and the record
// says the store lacks them. The next plan uploads them, and once the
// store is back that apply asks the provider nothing.
func TestUnreachableStoreLeavesFilesUnstored(t *testing.T) {
	s := newStoreDir(t)
	src := s.with(appleConfig)
	s.srv.Stop()

	res := s.apply(context.Background(), s.plan(src))
	if addrList(res.Generated) != "image.a" || len(res.Failed) != 0 {
		t.Fatalf("generated %q, failed %v", addrList(res.Generated), res.Failed)
	}
	rec := s.snapshot().Resources[a("image.a")]
	s.checkFiles(rec, "generated/image/a")
	if len(res.Unstored) != 2 {
		t.Fatalf("unstored %+v, want both files", res.Unstored)
	}
	for i, u := range res.Unstored {
		o := rec.Outputs[i]
		if u.Addr != a("image.a") || u.Path != o.Path || u.Object != s.blobs.Object(o.SHA256) || u.Generation != "" ||
			!errors.Is(u.Err, blobstore.ErrUnreachable) {
			t.Errorf("unstored %+v, want %s at %s, unreachable", u, o.Path, s.blobs.Object(o.SHA256))
		}
		if o.Stored {
			t.Errorf("output %d is recorded as stored", i)
		}
	}

	p := s.plan(src)
	c := p.Change(a("image.a"))
	if c.Action != plans.Update || !c.UploadsOnly() || c.Store != plans.StoreNone || len(c.Reason.Local) != 2 || c.Reason.Local[1].What != plans.OutputUnstored {
		t.Fatalf("next plan: %s %+v, store %q; want the two files uploaded", c.Action, c.Reason, c.Store)
	}
	if err := s.srv.Restart(); err != nil {
		t.Fatal(err)
	}
	creates, downloads := s.svc.count("Create"), s.svc.count("Download")
	res = s.apply(context.Background(), p)
	if addrList(res.Uploaded) != "image.a" || len(res.Updated)+len(res.Failed)+len(res.Unstored) != 0 {
		t.Fatalf("uploaded %q, updated %q, failed %v, unstored %+v", addrList(res.Uploaded), addrList(res.Updated), res.Failed, res.Unstored)
	}
	if s.svc.count("Create") != creates || s.svc.count("Download") != downloads {
		t.Error("uploading asked the provider for something")
	}
	s.checkStored("image.a")
	s.checkNoChanges(src, "after the upload")
}

// A store that goes down between applies is skipped for the files it
// should give back: each is downloaded from the provider with a warning,
// and the record, which the store still backs, is kept.
func TestUnreachableStoreFallsBackToTheProvider(t *testing.T) {
	s := newStoreDir(t)
	src := s.with(appleConfig)
	s.converge(src)
	for _, f := range []string{"0.png", "1.png"} {
		if err := os.Remove(filepath.Join(s.dir, "generated/image/a", f)); err != nil {
			t.Fatal(err)
		}
	}
	s.srv.Stop()

	downloads := s.svc.count("Download")
	res := s.apply(context.Background(), s.plan(src))
	if addrList(res.Updated) != "image.a" || len(res.Failed) != 0 {
		t.Fatalf("updated %q, failed %v", addrList(res.Updated), res.Failed)
	}
	if !s.warned("image.a", "could not be fetched from the store", "the store cannot be reached", "downloaded from the provider") {
		t.Errorf("no warning that the store is out of reach: %v", s.eventsOf("image.a"))
	}
	if n := s.svc.count("Download") - downloads; n != 2 {
		t.Errorf("%d downloads from the provider, want 2", n)
	}
	rec := s.snapshot().Resources[a("image.a")]
	s.checkFiles(rec, "generated/image/a")
	for _, o := range rec.Outputs {
		if !o.Stored {
			t.Errorf("output %d is no longer recorded as stored, though the store still holds it", o.Index)
		}
	}
}

// A restore whose files the local cache no longer holds takes them from
// the store: the provider is asked nothing, and the bytes are the first
// generation's.
func TestRestoreFromTheStore(t *testing.T) {
	s := newStoreDir(t)
	apple, green := s.with(appleConfig), s.with(greenConfig)
	s.converge(apple)
	first := s.read("generated/image/a/0.png")
	s.converge(green)
	if err := os.RemoveAll(filepath.Join(s.dir, ".genform", "cache")); err != nil {
		t.Fatal(err)
	}

	p := s.plan(apple)
	c := p.Change(a("image.a"))
	if c.Action != plans.Restore || c.Reason.Cached || !c.Reason.Stored || c.GenerationID != "job-1" {
		t.Fatalf("planned %s %+v, want job-1 restored from the store", c.Action, c.Reason)
	}
	asked := s.svc.count("Detail") + s.svc.count("Download") + s.svc.count("Create")
	res := s.apply(context.Background(), p)
	if addrList(res.Restored) != "image.a" || len(res.Failed) != 0 {
		t.Fatalf("restored %q, failed %v", addrList(res.Restored), res.Failed)
	}
	if n := s.svc.count("Detail") + s.svc.count("Download") + s.svc.count("Create") - asked; n != 0 {
		t.Errorf("the provider was asked %d times", n)
	}
	if got := s.read("generated/image/a/0.png"); got != first {
		t.Errorf("restored %q, want %q", got, first)
	}
	rec := s.checkStored("image.a")
	if rec.GenerationID != "job-1" {
		t.Errorf("the record holds %s", rec.GenerationID)
	}
	s.checkFiles(rec, "generated/image/a")
	s.checkNoChanges(apple, "after the restore")
}

// A paid job an interrupted apply left for a request no longer declared
// is kept in the history with its files, and in the store too, since a
// teammate's restore has nowhere else to get them: whether the engine
// followed it to its end or its answer carried it. A store out of reach
// lists each file as unstored, naming the generation, and keeps the job.
func TestKeptJobGoesToTheStore(t *testing.T) {
	for _, tc := range []struct {
		name     string
		answered bool
		down     bool
	}{
		{"a followed job", false, false},
		{"an answered job", true, false},
		{"a followed job, the store down", false, true},
		{"an answered job, the store down", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStoreDir(t)
			apple, green := s.with(appleConfig), s.with(greenConfig)
			s.converge(apple)
			s.configure(green)
			var fp string
			want := []string{fakeMedia("job-7", 0, ".png"), fakeMedia("job-7", 1, ".png")}
			if tc.answered {
				fp = s.answered("image.a", "job-7", s.inlineOutputs("green 0", "green 1")...)
				want = []string{string(pngOf("green 0")), string(pngOf("green 1"))}
			} else {
				s.svc.addJob("job-7", addrs.Image, fakeJob{outputs: 2})
				s.interrupted("image.a", "job-7")
				fp = s.snapshot().Intents[a("image.a")].Fingerprint
			}
			if tc.down {
				s.srv.Stop()
			}

			res := s.apply(context.Background(), s.plan(apple))
			if len(res.Failed) != 0 {
				t.Fatalf("failed %v", res.Failed)
			}
			hist, err := s.store.Generations(fp)
			if err != nil || len(hist) != 1 || len(hist[0].Outputs) != 2 || !everyOutputHashed(hist[0]) {
				t.Fatalf("history of the green request: %+v, %v", hist, err)
			}
			e := hist[0]
			if tc.down {
				if len(res.Unstored) != 2 {
					t.Fatalf("unstored %+v, want the job's 2 files", res.Unstored)
				}
				for i, u := range res.Unstored {
					o := e.Outputs[i]
					if u.Generation != "job-7" || u.Addr != a("image.a") || u.Path != o.Path || u.Object != s.blobs.Object(o.SHA256) || !errors.Is(u.Err, blobstore.ErrUnreachable) {
						t.Errorf("unstored %+v, want job-7's %s", u, o.Path)
					}
					if o.Stored {
						t.Errorf("output %d of job-7 is recorded as stored", i)
					}
				}
				return
			}
			if len(res.Unstored) != 0 {
				t.Errorf("unstored %+v", res.Unstored)
			}
			for i, o := range e.Outputs {
				got, err := os.ReadFile(s.object(o.SHA256))
				if !o.Stored || err != nil || string(got) != want[i] {
					t.Errorf("output %d of job-7: stored %v, the store holds %q (%v); want %q", i, o.Stored, got, err, want[i])
				}
			}
		})
	}
}
