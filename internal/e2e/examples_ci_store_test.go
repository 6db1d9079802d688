package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/genform/genform/internal/blobstore/s3test"
)

// TestExampleCIWorkflowStore runs examples/ci's workflow as a team with
// an object store (a real S3 server) runs it: generated/ is ignored by
// git, the pull-request plan needs no store credentials, the apply job
// uploads what it made and commits nothing, and the apply job on a fresh
// runner fetches every file from the store and has nothing to do: no
// provider is asked for anything already made.
func TestExampleCIWorkflowStore(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	f := newCIFixture(t, srv.Env(), map[string]string{".gitignore": "generated/\n"})

	// The pull request's plan sees no store credentials.
	storeEnv := f.env
	f.env = withoutEnv(f.env, "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
	f.planJob()
	f.env = storeEnv

	// The merge: the apply job uploads the outputs and commits nothing.
	first := filepath.Join(f.tmp, "first")
	f.sh(f.tmp, "git clone -q "+f.origin+" first")
	logs := f.mainJobs(first)
	if !strings.Contains(logs["apply/Apply"], "4 generated") {
		t.Errorf("the apply step printed:\n%s", logs["apply/Apply"])
	}
	if !strings.Contains(logs["apply/Commit the outputs"], "nothing to commit") {
		t.Errorf("the commit step printed:\n%s", logs["apply/Commit the outputs"])
	}
	if files := f.sh(f.tmp, "git -C origin.git ls-tree -r --name-only main"); strings.Contains(files, "generated/") {
		t.Errorf("main holds outputs though a store is set:\n%s", files)
	}
	keys, err := srv.Keys()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 5 {
		t.Errorf("the store holds %d objects, want the quickstart's 5 files: %v", len(keys), keys)
	}

	// A fresh runner: every file comes from the store, the plan has
	// nothing to do, and nothing is generated.
	fresh := filepath.Join(f.tmp, "fresh")
	f.sh(f.tmp, "git clone -q "+f.origin+" fresh")
	logs = f.mainJobs(fresh)
	if !strings.Contains(logs["main-plan/Fetch the outputs from the store"], "5 files fetched from the store") {
		t.Errorf("the fetch step printed:\n%s", logs["main-plan/Fetch the outputs from the store"])
	}
	if !strings.Contains(logs["main-plan/Plan"], "No changes") {
		t.Errorf("the fresh runner's plan printed:\n%s", logs["main-plan/Plan"])
	}
	if strings.Contains(logs["apply/Apply"], "generated,") && !strings.Contains(logs["apply/Apply"], "0 generated") {
		t.Errorf("the fresh runner's apply generated something:\n%s", logs["apply/Apply"])
	}
	if keys2, _ := srv.Keys(); len(keys2) != len(keys) {
		t.Errorf("the store went from %d to %d objects", len(keys), len(keys2))
	}
}

// withoutEnv is env without the variables named.
func withoutEnv(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, n := range names {
			drop = drop || k == n
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}
