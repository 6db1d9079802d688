package e2e

import (
	"bufio"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genform/genform/statefile/pgstate/pgtest"
)

// TestExamples runs every example configuration as a user would, on the
// built-in simulator (no service block, no GENFORM_BASE_URL): validate,
// apply, then plan again, which must find nothing to do; then the gallery.
// Each example is copied first, so the repository stays clean.
func TestExamples(t *testing.T) {
	t.Parallel()
	dirs, err := filepath.Glob(filepath.Join(moduleRoot(t), "examples", "*"))
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, dir := range dirs {
		if configs, _ := filepath.Glob(filepath.Join(dir, "*.gen.hcl")); len(configs) == 0 {
			continue // examples/ci is a workflow, tested below
		}
		if filepath.Base(dir) == "providers" {
			continue // live providers' simulators: TestExampleProviders
		}
		ran++
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			work := copyExample(t, dir)
			env := builtinSimulatorEnv()
			runGenform(t, env, 0, "-chdir="+work, "validate")
			runGenform(t, env, 0, "-chdir="+work, "apply", "-auto-approve")
			runGenform(t, env, 0, "-chdir="+work, "plan", "-detailed-exitcode")
			out := runGenform(t, env, 0, "-chdir="+work, "gallery")
			if !strings.Contains(out, "Gallery written to gallery.html") || strings.Contains(out, "missing") {
				t.Errorf("gallery said:\n%s", out)
			}
		})
	}
	if ran < 3 {
		t.Errorf("ran %d examples, want at least quickstart, storyboard and catalog", ran)
	}
}

// copyExample copies an example into a temporary directory, leaving out
// what a local run may have left in it.
func copyExample(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			if rel == "generated" || rel == ".genform" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if rel == "gallery.html" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// builtinSimulatorEnv is the environment of a genform that uses its
// built-in simulator whatever the test's environment says (childEnv's,
// with GENFORM_BASE_URL and GENFORM_TOKEN empty, as a workflow leaves an
// unset variable), plus extra.
func builtinSimulatorEnv(extra ...string) []string {
	return childEnv(append([]string{"GENFORM_BASE_URL=", "GENFORM_TOKEN="}, extra...)...)
}

// runGenform runs genform args with env and checks its exit code. The
// examples name their working directory with -chdir, as a user's script
// may, so the test's own stays where it is.
func runGenform(t *testing.T, env []string, wantCode int, args ...string) string {
	t.Helper()
	r := genform(t, "", env, args...)
	if r.code != wantCode {
		t.Fatalf("want exit %d:\n%s", wantCode, r)
	}
	return r.stdout
}

// TestExampleCIWorkflow runs the shell steps of examples/ci's workflow,
// job by job, on a copy of the quickstart keeping its state in PostgreSQL
// (the test server stands in for the team's database, PG_CONN_STR for the
// secret) in a git repository with a local "origin", without an object
// store: the pull-request job must comment a markdown plan (through a
// stand-in for the gh CLI), and the main-branch job must apply the newest
// main, not the commit that started it, and push the outputs but no state
// file, so that a fresh clone plans no changes. Steps that use actions,
// and the install step, are GitHub's part; the checkout's ref is checked
// here.
func TestExampleCIWorkflow(t *testing.T) {
	t.Parallel()
	f := newCIFixture(t, nil, nil)
	steps, tmp, pr, origin, env, sh := f.steps, f.tmp, f.pr, f.origin, f.env, f.sh
	comment, ghLog, conn := f.comment, f.ghLog, f.conn

	// A pull request: the plan job.
	f.planJob()

	// The run on main plans the newest main: the run started by one merge
	// applies what a later merge, pushed while it queued, made of it; the
	// apply job checks out the commit that plan was made of.
	checkout, applyCheckout := false, false
	for _, s := range steps {
		if s.job == "main-plan" && s.uses && s.with["ref"] == "main" {
			checkout = true
		}
		if s.job == "apply" && s.uses && s.with["ref"] == "${{ needs.main-plan.outputs.sha }}" {
			applyCheckout = true
		}
	}
	if !checkout || !applyCheckout {
		t.Errorf("the main-plan job does not check out ref: main (%v), or the apply job not the commit it planned (%v)", checkout, applyCheckout)
	}
	sh(pr, "printf 'image \"later\" {\n  prompt       = \"a later merge\"\n  image_number = 1\n}\n' > later.gen.hcl && git add later.gen.hcl && git commit -q -m later && git push -q origin main")
	newest := strings.TrimSpace(sh(pr, "git rev-parse HEAD"))

	// Without the secret, a real service is refused: the job's throwaway
	// database would forget the state, and every run would pay again.
	for _, s := range steps {
		if s.job == "main-plan" && s.name == "Check the state database" {
			cmd := exec.Command("bash", "-e", "-c", s.run)
			cmd.Env = append(env, "TEAM_STATE=false", "GENFORM_BASE_URL=https://gen.example.com")
			if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "PG_CONN_STR secret is not set") {
				t.Errorf("the check of the state database let a real service run on the throwaway database: %v\n%s", err, out)
			}
		}
	}

	// The merge to main: the apply job, in a fresh checkout of main.
	mainCheckout := filepath.Join(tmp, "main")
	sh(tmp, "git clone -q "+origin+" main")
	f.mainJobs(mainCheckout)
	files := sh(tmp, "git -C origin.git ls-tree -r --name-only main")
	for _, want := range []string{"generated/image/hero/0.png", "generated/image/hero/1.png", "generated/image/poster/0.png", "generated/video/hero_motion/0.gif", "generated/video/intro/0.gif", "generated/image/later/0.png"} {
		if !strings.Contains(files, want+"\n") {
			t.Errorf("main lacks %s after the apply job; it has:\n%s", want, files)
		}
	}
	if strings.Contains(files, ".genform/") || strings.Contains(files, "plan.bin") || strings.Contains(files, "gallery.html") {
		t.Errorf("the apply job committed more than the outputs:\n%s", files)
	}
	if msg := sh(tmp, "git -C origin.git log -1 --format=%s main"); msg != "genform apply for "+newest[:12]+" [skip ci]\n" {
		t.Errorf("the apply job's commit is %q, want it to name the newest main, %s", msg, newest[:12])
	}
	for _, page := range []string{"gallery.html", "review.html"} {
		if _, err := os.Stat(filepath.Join(mainCheckout, page)); err != nil {
			t.Errorf("the apply job wrote no %s: %v", page, err)
		}
	}
	// The merged pull request is told where the gallery of what it made is.
	if log, _ := os.ReadFile(ghLog); !strings.Contains(string(log), "gh pr comment 7 --body-file applied.md") {
		t.Errorf("the apply job did not comment on the merged pull request; gh was called as:\n%s", log)
	}
	if body, _ := os.ReadFile(comment); !strings.Contains(string(body), "review.html") || !strings.HasPrefix(string(body), "<!-- genform:apply -->") {
		t.Errorf("the apply job's comment is:\n%s", body)
	}

	// The next pull request starts from the team's state and the files
	// main holds: nothing to do.
	sh(tmp, "git clone -q "+origin+" next")
	runGenform(t, builtinSimulatorEnv("PG_CONN_STR="+conn), 0, "-chdir="+filepath.Join(tmp, "next"), "plan", "-detailed-exitcode")
}

// ciFixture is the team's repository the workflow's jobs run in: the
// quickstart configuration with a backend "pg" block on main, pushed to a
// local bare "origin", a stand-in for the gh CLI, and the environment the
// workflow's env block gives its steps.
type ciFixture struct {
	t                              *testing.T
	steps                          []workflowStep
	tmp, origin, pr                string
	ghLog, comment, ghOutput, conn string
	env                            []string
	sh                             func(dir, script string) string
}

// newCIFixture makes the repository; extra are more environment
// variables for every step (an object store's, say), and files more files
// committed with the configuration.
func newCIFixture(t *testing.T, extra []string, files map[string]string) *ciFixture {
	t.Helper()
	for _, tool := range []string{"bash", "git", "genform"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not on PATH: %v", tool, err)
		}
	}
	root := moduleRoot(t)
	f := &ciFixture{t: t, steps: workflowSteps(t, filepath.Join(root, "examples", "ci", ".github", "workflows", "genform.yml"))}
	f.tmp = t.TempDir()
	f.origin = filepath.Join(f.tmp, "origin.git")
	f.pr = filepath.Join(f.tmp, "pr")
	fakeBin := filepath.Join(f.tmp, "bin")
	f.ghLog = filepath.Join(f.tmp, "gh.log")
	f.comment = filepath.Join(f.tmp, "comment.md")
	f.ghOutput = filepath.Join(f.tmp, "github-output")
	// gh stands in for the GitHub CLI: pr comment adds a comment (a file
	// in $COMMENTS, named by its id), api lists them (the workflow's jq
	// filter picks those starting with a marker: the fake reads the marker
	// from it) or edits one; $COMMENT is the body last written.
	gh := `#!/usr/bin/env bash
echo "gh $*" >> "$GH_LOG"
mkdir -p "$COMMENTS"
if [ "$1 $2" = "pr list" ]; then echo 7; exit 0; fi
if [ "$1" = "api" ]; then
  shift
  if [ "$1" = "-X" ]; then
    id="${3##*/}"; body="${5#body=@}"
    [ -f "$COMMENTS/$id" ] || { echo "no comment $id" >&2; exit 1; }
    cp "$body" "$COMMENTS/$id"; cp "$body" "$COMMENT"; exit 0
  fi
  marker=$(printf '%s' "$*" | grep -o '<!-- genform:[a-z]* -->')
  for f in $(ls "$COMMENTS" | sort -n); do
    if [ "$(head -c ${#marker} "$COMMENTS/$f")" = "$marker" ]; then echo "$f"; fi
  done
  exit 0
fi
body=""
while [ $# -gt 0 ]; do
  case "$1" in --body-file) body="$2"; shift;; esac; shift
done
n=$(( $(ls "$COMMENTS" | wc -l) + 1 ))
cp "$body" "$COMMENTS/$n"
cp "$body" "$COMMENT"
`
	if err := os.MkdirAll(fakeBin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fakeBin, "gh"), []byte(gh), 0o755); err != nil {
		t.Fatal(err)
	}
	f.conn = pgtest.ConnString(t)
	f.env = builtinSimulatorEnv(append([]string{
		"PG_CONN_STR=" + f.conn, "TEAM_STATE=true",
		"PATH=" + fakeBin + string(filepath.ListSeparator) + os.Getenv("PATH"),
		"GH_LOG=" + f.ghLog, "COMMENT=" + f.comment, "COMMENTS=" + filepath.Join(f.tmp, "comments"), "GITHUB_OUTPUT=" + f.ghOutput,
		"GITHUB_REPOSITORY=team/media",
		"GH_TOKEN=test", "PR_NUMBER=7", "GITHUB_SHA=0123456789abcdef0123456789abcdef01234567",
		"GIT_CONFIG_GLOBAL=" + os.DevNull, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=dev", "GIT_AUTHOR_EMAIL=dev@example.com",
		"GIT_COMMITTER_NAME=dev", "GIT_COMMITTER_EMAIL=dev@example.com",
	}, extra...)...)
	f.sh = func(dir, script string) string {
		t.Helper()
		cmd := exec.Command("bash", "-e", "-c", script)
		cmd.Dir, cmd.Env = dir, f.env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("in %s:\n%s\n%v\n%s", dir, script, err, out)
		}
		return string(out)
	}
	// The team's repository: the quickstart configuration on main.
	if err := os.Rename(copyExample(t, filepath.Join(root, "examples", "quickstart")), f.pr); err != nil {
		t.Fatal(err)
	}
	files = maps.Clone(files)
	if files == nil {
		files = map[string]string{}
	}
	if _, ok := files["backend.gen.hcl"]; !ok {
		files["backend.gen.hcl"] = "genform {\n  backend \"pg\" {}\n}\n"
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(f.pr, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f.sh(f.tmp, "git init -q --bare -b main origin.git")
	f.sh(f.pr, "git init -q -b main && git add . && git commit -q -m config && git remote add origin "+f.origin+" && git push -q -u origin main")
	return f
}

// planJob runs the pull-request job, which must comment a plan of the
// quickstart's generations.
func (f *ciFixture) planJob() {
	t := f.t
	t.Helper()
	runJob(t, f.steps, "plan", func(name, run string) { f.sh(f.pr, run) }, f.ghOutput)
	out, _ := os.ReadFile(f.ghOutput)
	if !strings.Contains(string(out), "exitcode=2") {
		t.Errorf("GITHUB_OUTPUT is %q, want exitcode=2 (changes present)", out)
	}
	body, err := os.ReadFile(f.comment)
	if err != nil {
		t.Fatalf("no plan was commented: %v", err)
	}
	for _, want := range []string{"### genform plan", "4 to generate", "`image.hero`", "`video.hero_motion`"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the comment lacks %q:\n%s", want, body)
		}
	}
	if log, _ := os.ReadFile(f.ghLog); !strings.Contains(string(log), "gh pr comment 7 --body-file plan.md") {
		t.Errorf("gh was called as:\n%s", log)
	}
}

// mainJobs runs the jobs of a push to main in dir, a checkout of main:
// the plan, then the apply of that plan (its artifact, plan.bin, stays in
// dir as the download step would bring it). It returns each step's output
// by job and step name ("apply/Apply").
func (f *ciFixture) mainJobs(dir string) map[string]string {
	logs := map[string]string{}
	for _, job := range []string{"main-plan", "apply"} {
		if job == "apply" {
			// The apply job checks out the commit main-plan planned, as
			// actions/checkout does with a ref that is a commit: a
			// detached HEAD, on no branch.
			out, _ := os.ReadFile(f.ghOutput)
			sha := ""
			for _, line := range strings.Split(string(out), "\n") {
				if v, ok := strings.CutPrefix(line, "sha="); ok {
					sha = v
				}
			}
			if sha == "" {
				f.t.Fatalf("main-plan wrote no sha= to GITHUB_OUTPUT:\n%s", out)
			}
			f.sh(dir, "git checkout -q --detach "+sha)
		}
		runJob(f.t, f.steps, job, func(name, run string) { logs[job+"/"+name] = f.sh(dir, run) }, f.ghOutput)
	}
	return logs
}

// workflowStep is one step of a GitHub Actions job.
type workflowStep struct {
	job, name, cond, run string
	uses                 bool
	// with holds the inputs of a step that uses an action.
	with map[string]string
}

// workflowSteps reads the steps of a workflow file. It knows only the
// layout genform.yml is written in (two-space indentation, `run: |`
// blocks), which is all it needs to read.
func workflowSteps(t *testing.T, path string) []workflowStep {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var steps []workflowStep
	var job string
	inJobs := false
	blockIndent := -1 // indentation of the run: key of the block being read
	inWith := false   // reading a step's with: inputs
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		indent := len(line) - len(strings.TrimLeft(line, " "))
		if blockIndent >= 0 {
			if trimmed == "" || indent > blockIndent {
				if len(line) > blockIndent+2 {
					line = line[blockIndent+2:]
				} else {
					line = ""
				}
				steps[len(steps)-1].run += line + "\n"
				continue
			}
			blockIndent = -1
		}
		switch {
		case trimmed == "" || strings.HasPrefix(trimmed, "#"):
		case indent == 0:
			inJobs = trimmed == "jobs:"
		case inJobs && indent == 2 && strings.HasSuffix(trimmed, ":"):
			job = strings.TrimSuffix(trimmed, ":")
		case inJobs && indent == 10 && inWith && len(steps) > 0:
			key, value, _ := strings.Cut(trimmed, ":")
			steps[len(steps)-1].with[key] = strings.TrimSpace(value)
		case inJobs && indent == 6 && strings.HasPrefix(trimmed, "- "):
			steps = append(steps, workflowStep{job: job, with: map[string]string{}})
			trimmed = strings.TrimPrefix(trimmed, "- ")
			indent += 2
			fallthrough
		case inJobs && indent == 8 && len(steps) > 0:
			key, value, _ := strings.Cut(trimmed, ":")
			value = strings.TrimSpace(value)
			s := &steps[len(steps)-1]
			inWith = key == "with"
			switch key {
			case "name":
				s.name = value
			case "if":
				s.cond = value
			case "uses":
				s.uses = true
			case "run":
				if value == "|" {
					blockIndent = indent
				} else {
					s.run = value + "\n"
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return steps
}

// runJob runs the shell steps of one job in order. It evaluates the few
// conditions genform.yml uses and fails on any other, so that a changed
// workflow cannot go untested.
func runJob(t *testing.T, steps []workflowStep, job string, run func(name, script string), ghOutput string) {
	t.Helper()
	ran := 0
	for _, s := range steps {
		if s.job != job || s.uses || s.name == "Install genform" {
			continue
		}
		if s.run == "" {
			t.Fatalf("step %q of job %s has neither run nor uses", s.name, job)
		}
		if strings.Contains(s.run, "${{") {
			t.Errorf("step %q pastes a ${{ }} expression into its script; pass it through env instead", s.name)
		}
		switch s.cond {
		case "", "always()", "github.event.pull_request.head.repo.full_name == github.repository":
		case "steps.plan.outputs.exitcode == '1'":
			out, _ := os.ReadFile(ghOutput)
			if !strings.Contains(string(out), "exitcode=1") {
				continue
			}
		default:
			t.Fatalf("step %q: the test does not know the condition %q", s.name, s.cond)
		}
		run(s.name, s.run)
		ran++
	}
	if ran == 0 {
		t.Fatalf("job %s has no step to run", job)
	}
}
