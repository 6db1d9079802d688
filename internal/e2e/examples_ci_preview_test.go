package e2e

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/genform/genform/internal/blobstore/s3test"
)

// TestExampleCIWorkflowPreview runs examples/ci's preview as a team runs
// it, against a real PostgreSQL, a real S3 server and the built-in
// simulator: main applies the quickstart; a labelled pull request that
// changes one prompt applies in workspace pr-7, paying for that one
// generation alone (the rest restored from the store), and comments its
// picture before and after, with links any HTTP client fetches without
// credentials; a second push edits that comment rather than adding one;
// the merge applies on main restoring what pr-7 paid for, generating
// nothing; closing the pull request deletes the workspace, leaving every
// store object and main's plan as they were.
func TestExampleCIWorkflowPreview(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	f := newCIFixture(t, srv.Env(), map[string]string{
		".gitignore":      "generated/\n",
		"backend.gen.hcl": "genform {\n  backend \"pg\" {}\n  store \"s3\" {\n    presign = \"168h\"\n  }\n}\n",
	})

	// main applies the quickstart.
	first := filepath.Join(f.tmp, "first")
	f.sh(f.tmp, "git clone -q "+f.origin+" first")
	logs := f.mainJobs(first)
	if !strings.Contains(logs["apply/Apply"], "4 generated") {
		t.Fatalf("main's apply printed:\n%s", logs["apply/Apply"])
	}

	// The pull request changes the poster's prompt.
	f.sh(f.pr, `git checkout -q -b poster && sed -i 's/a minimalist poster of a sailing boat/a minimalist poster of a lighthouse/' main.gen.hcl && git commit -q -am poster && git push -q origin poster`)
	preview := func() map[string]string {
		t.Helper()
		dir := filepath.Join(f.tmp, "preview")
		os.RemoveAll(dir)
		f.sh(f.tmp, "git clone -q -b poster "+f.origin+" preview")
		// The job's env block: its workspace.
		env := f.env
		f.env = append(append([]string(nil), env...), "GENFORM_WORKSPACE=pr-7")
		defer func() { f.env = env }()
		logs := map[string]string{}
		runJob(t, f.steps, "preview", func(name, run string) { logs[name] = f.sh(dir, run) }, f.ghOutput)
		return logs
	}
	logs = preview()
	if out := logs["Apply the preview"]; !strings.Contains(out, "Apply complete! 1 generated, 0 resumed, 3 restored") {
		t.Fatalf("the preview's apply printed:\n%s", out)
	}
	comments := func() []string {
		var bodies []string
		dir := filepath.Join(f.tmp, "comments")
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			if strings.HasPrefix(string(b), "<!-- genform:preview -->") {
				bodies = append(bodies, string(b))
			}
		}
		return bodies
	}
	got := comments()
	if len(got) != 1 {
		t.Fatalf("%d preview comments, want 1", len(got))
	}
	body := got[0]
	if !strings.Contains(body, "image.poster") || strings.Contains(body, "image.hero") || strings.Contains(body, "video.intro") {
		t.Errorf("the comment shows other instances than the changed poster:\n%s", body)
	}
	thumbs := regexp.MustCompile(`https?://[^\s"'()<>]*/thumbnail/[^\s"'()<>]+`).FindAllString(body, -1)
	seen := map[string]bool{}
	for _, u := range thumbs {
		seen[u] = true
	}
	if len(seen) != 2 {
		t.Fatalf("the comment has %d thumbnail URLs, want 2 (before and after):\n%s", len(seen), body)
	}
	for u := range seen {
		resp, err := http.Get(u) // no credentials
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(string(b), "\x89PNG") {
			t.Errorf("GET %s: %d, %d bytes, want a PNG", u, resp.StatusCode, len(b))
		}
	}

	// A second push: nothing to generate, the same comment edited.
	logs = preview()
	if out := logs["Apply the preview"]; !strings.Contains(out, "No changes") && !strings.Contains(out, "0 generated") {
		t.Errorf("the second preview's apply printed:\n%s", out)
	}
	if got := comments(); len(got) != 1 {
		t.Errorf("%d preview comments after a second push, want the first edited", len(got))
	}

	// The merge: main restores the previewed poster, generating nothing.
	f.sh(f.pr, "git checkout -q main && git merge -q --ff-only poster && git push -q origin main")
	merged := filepath.Join(f.tmp, "merged")
	f.sh(f.tmp, "git clone -q "+f.origin+" merged")
	logs = f.mainJobs(merged)
	if out := logs["apply/Apply"]; !strings.Contains(out, "0 generated") || !strings.Contains(out, "1 restored") {
		t.Errorf("the merge's apply printed:\n%s", out)
	}
	before, err := srv.Keys()
	if err != nil {
		t.Fatal(err)
	}

	// Closed: the workspace goes; the store and main's plan stay.
	cleanup := map[string]string{}
	runJob(t, f.steps, "preview-cleanup", func(name, run string) { cleanup[name] = f.sh(merged, run) }, f.ghOutput)
	if out := cleanup["Delete the preview workspace"]; !strings.Contains(out, `Deleted workspace "pr-7"`) {
		t.Errorf("the cleanup printed:\n%s", out)
	}
	after, err := srv.Keys()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(before, "\n") != strings.Join(after, "\n") {
		t.Errorf("the store went from %d to %d objects when the workspace was deleted", len(before), len(after))
	}
	runGenform(t, builtinSimulatorEnv(append(srv.Env(), "PG_CONN_STR="+f.conn)...), 0, "-chdir="+merged, "plan", "-detailed-exitcode")
	list := runGenform(t, builtinSimulatorEnv(append(srv.Env(), "PG_CONN_STR="+f.conn)...), 0, "-chdir="+merged, "workspace", "list")
	if strings.Contains(list, "pr-7") {
		t.Errorf("workspace list after the cleanup:\n%s", list)
	}
}
