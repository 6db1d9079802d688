package apply

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/genform/genform/reconcile/plans"
)

// linkedWorkDir makes a working directory whose out/a is a symbolic link
// to a directory outside holding 0.png, and whose in/b is a link to a
// directory inside: what a user may do to a directory after apply.
func linkedWorkDir(t *testing.T) (work, outside string) {
	t.Helper()
	parent := t.TempDir()
	work, outside = filepath.Join(parent, "work"), filepath.Join(parent, "outside")
	for _, d := range []string{filepath.Join(work, "out"), filepath.Join(work, "in"), filepath.Join(work, "real"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(outside, "0.png"), filepath.Join(work, "real", "0.png")} {
		if err := os.WriteFile(f, []byte("png"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(work, "out", "a")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	if err := os.Symlink(filepath.Join("..", "real"), filepath.Join(work, "in", "b")); err != nil {
		t.Fatal(err)
	}
	return work, outside
}

// TestFileOperationsStayInside: removing, moving and pruning through a
// link that leads outside the working directory changes nothing there and
// says which link; through a link that stays inside, they work.
func TestFileOperationsStayInside(t *testing.T) {
	work, outside := linkedWorkDir(t)
	outsideFile := filepath.Join(outside, "0.png")

	err := removeFile(work, "out/a/0.png")
	if err == nil || !strings.Contains(err.Error(), "through the symbolic link out/a") {
		t.Errorf("removeFile through the outside link: %v", err)
	}
	err = renameFile(work, "out/a/0.png", "real/1.png")
	if err == nil || !strings.Contains(err.Error(), "through the symbolic link out/a") {
		t.Errorf("renameFile from the outside link: %v", err)
	}
	err = renameFile(work, "real/0.png", "out/a/9.png")
	if err == nil || !strings.Contains(err.Error(), "through the symbolic link out/a") {
		t.Errorf("renameFile into the outside link: %v", err)
	}
	if err := makeDir(work, "out/a/sub"); err == nil {
		t.Error("makeDir through the outside link succeeded")
	}
	pruneDirs(work, "out/a", ".")
	if _, err := os.Stat(outsideFile); err != nil {
		t.Fatalf("the file outside is gone: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(work, "out", "a")); err != nil {
		t.Errorf("pruneDirs removed the link: %v", err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("outside holds %d entries, want the one file", len(entries))
	}

	// A link that stays inside is followed.
	if err := renameFile(work, "in/b/0.png", "in/b/1.png"); err != nil {
		t.Errorf("renameFile inside: %v", err)
	}
	if err := removeFile(work, "in/b/1.png"); err != nil {
		t.Errorf("removeFile inside: %v", err)
	}
	if err := removeFile(work, "in/b/missing.png"); err != nil {
		t.Errorf("removeFile of a missing file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(work, "real", "1.png")); !os.IsNotExist(err) {
		t.Errorf("real/1.png: %v, want removed", err)
	}
	if err := makeDir(work, "new/dir"); err != nil {
		t.Errorf("makeDir: %v", err)
	}
	pruneDirs(work, "new/dir", ".")
	if _, err := os.Stat(filepath.Join(work, "new")); !os.IsNotExist(err) {
		t.Errorf("pruneDirs left new: %v", err)
	}
}

// TestApplyRefusesPathsOutsideTheWorkdir: a directory replaced by a
// symbolic link leading outside the working directory is never written
// through or removed through, whatever the change; the state is left as
// it was and nothing is paid for.
func TestApplyRefusesPathsOutsideTheWorkdir(t *testing.T) {
	inOut := func(src, dir string) string {
		return strings.Replace(src, "image_number = 2", "image_number = 2\n  dir = \""+dir+"\"", 1)
	}
	pear := appleConfig + strings.NewReplacer(`"a"`, `"b"`, "red apple", "green pear").Replace(appleConfig)
	tests := []struct {
		name          string
		before, after string
		link          string // made a link to outside after the first apply
		addr          string
		action        plans.Action
	}{
		{name: "a create", after: inOut(appleConfig, "out/a"), link: "out", addr: "image.a", action: plans.Create},
		{name: "an update", before: appleConfig, after: inOut(appleConfig, "out/a"), link: "out", addr: "image.a", action: plans.Update},
		{name: "a move", before: appleConfig, after: strings.Replace(appleConfig, `"a"`, `"apple"`, 1), link: "generated/image/apple", addr: "image.apple", action: plans.Move},
		{name: "a delete", before: pear, after: appleConfig, link: "generated/image/b", addr: "image.b", action: plans.Delete},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc, w := convergedDir(t, tc.before)
			outside := t.TempDir()
			// What is outside must stay: give the link the names of files
			// genform would remove.
			for _, name := range []string{"0.png", "1.png"} {
				os.WriteFile(filepath.Join(outside, name), []byte("not genform's"), 0o644)
			}
			link := filepath.Join(w.dir, filepath.FromSlash(tc.link))
			os.RemoveAll(link)
			os.MkdirAll(filepath.Dir(link), 0o755)
			if err := os.Symlink(outside, link); err != nil {
				t.Skip("no symbolic links here:", err)
			}
			p := w.plan(tc.after)
			if c := p.Change(a(tc.addr)); c.Action != tc.action {
				t.Fatalf("plan: %s, want %s", c.Action, tc.action)
			}
			before := w.snapshot()
			creates := svc.count("Create")

			res := w.apply(context.Background(), p)
			if failedAddrs(res.Failed) != tc.addr || !strings.Contains(res.Failed[0].Err.Error(), "outside the working directory") {
				t.Fatalf("failed %v, want %s refused", res.Failed, tc.addr)
			}
			if n := svc.count("Create"); n != creates {
				t.Errorf("%d create requests", n-creates)
			}
			after := w.snapshot()
			if !cmp.Equal(before.Resources, after.Resources) || !cmp.Equal(before.Intents, after.Intents) {
				t.Errorf("the state changed:\n%s", cmp.Diff(before.Resources, after.Resources))
			}
			entries, _ := os.ReadDir(outside)
			for _, e := range entries {
				if b, _ := os.ReadFile(filepath.Join(outside, e.Name())); string(b) != "not genform's" || len(entries) != 2 {
					t.Errorf("outside the working directory: %d files, %s holds %q", len(entries), e.Name(), b)
				}
			}
		})
	}
}
