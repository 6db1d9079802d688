package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// ciWorkflow is what the guards test reads of a GitHub Actions workflow.
type ciWorkflow struct {
	Concurrency struct {
		Group            string `yaml:"group"`
		CancelInProgress string `yaml:"cancel-in-progress"`
	} `yaml:"concurrency"`
	On   map[string]any    `yaml:"on"`
	Env  map[string]string `yaml:"env"`
	Jobs map[string]ciJob  `yaml:"jobs"`
}

type ciJob struct {
	If          string            `yaml:"if"`
	Needs       any               `yaml:"needs"`
	Environment any               `yaml:"environment"`
	Permissions map[string]string `yaml:"permissions"`
	Env         map[string]string `yaml:"env"`
	Steps       []ciStep          `yaml:"steps"`
}

type ciStep struct {
	Name string            `yaml:"name"`
	ID   string            `yaml:"id"`
	If   string            `yaml:"if"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	With map[string]string `yaml:"with"`
	Env  map[string]string `yaml:"env"`
}

// TestExampleCIWorkflowGuards reads examples/ci's workflow as YAML and
// checks the guards a careful team relies on: a merge spends within a
// limit, only after a reviewer approves, and only the plan that was
// shown; genform is cached, not built on every job; a pull request's
// job holds no credential that can write the state, spend or reach the
// store.
func TestExampleCIWorkflowGuards(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(moduleRoot(t), "examples", "ci", ".github", "workflows", "genform.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf ciWorkflow
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatalf("the workflow is not valid YAML: %v", err)
	}
	pr, mainPlan, apply := wf.Jobs["plan"], wf.Jobs["main-plan"], wf.Jobs["apply"]
	if pr.Steps == nil || mainPlan.Steps == nil || apply.Steps == nil {
		t.Fatalf("the workflow's jobs are %v; want plan, main-plan and apply", keys(wf.Jobs))
	}

	// Approval: the apply job waits for a GitHub environment's reviewers,
	// after the plan it carries out was made and shown.
	if env, ok := apply.Environment.(string); !ok || env == "" {
		t.Errorf("the apply job names no environment (required reviewers): %v", apply.Environment)
	}
	if needs := strings.TrimSpace(strings.Trim(strings.ReplaceAll(toString(apply.Needs), " ", ""), "[]")); needs != "main-plan" {
		t.Errorf("the apply job needs %q, want main-plan", needs)
	}
	if env, ok := mainPlan.Environment.(string); !ok || env == "" || env == apply.Environment {
		t.Errorf("the main-plan job takes its secrets from %v; want an environment of its own (no reviewers: there is no plan to approve yet)", mainPlan.Environment)
	}

	// The reviewed plan, and only it, is applied, within a limit.
	planStep := step(t, mainPlan, "Plan")
	if !strings.Contains(planStep.Run, "-out=plan.bin") || !strings.Contains(planStep.Run, "GITHUB_STEP_SUMMARY") {
		t.Errorf("main-plan's plan is not saved and shown:\n%s", planStep.Run)
	}
	kept, fetched := "", ""
	for _, s := range mainPlan.Steps {
		if strings.HasPrefix(s.Uses, "actions/upload-artifact@") {
			kept = s.With["name"]
		}
	}
	for _, s := range apply.Steps {
		if strings.HasPrefix(s.Uses, "actions/download-artifact@") {
			fetched = s.With["name"]
		}
		if strings.Contains(s.Run, "genform plan") {
			t.Errorf("the apply job plans again (step %q) instead of applying the approved plan", s.Name)
		}
	}
	if kept == "" || kept != fetched {
		t.Errorf("the plan kept by main-plan (%q) is not the one the apply job fetches (%q)", kept, fetched)
	}
	applyStep := step(t, apply, "Apply")
	for _, want := range []string{"genform apply", "plan.bin", "-max-generations=", "-max-cost="} {
		if !strings.Contains(applyStep.Run, want) {
			t.Errorf("the apply step lacks %q:\n%s", want, applyStep.Run)
		}
	}
	if strings.Contains(applyStep.Run, "-auto-approve") {
		t.Errorf("the apply step approves a plan of its own:\n%s", applyStep.Run)
	}
	// No run is cancelled half way: a preview applies too.
	if wf.Concurrency.Group == "" || !strings.Contains(wf.Concurrency.Group, "pull_request.number") || wf.Concurrency.CancelInProgress != "false" {
		t.Errorf("runs are not queued (one group for main, one a pull request) without cancelling one half way: %+v", wf.Concurrency)
	}

	// A preview spends: only for a pull request of this repository, once
	// a maintainer labelled it, in an environment of its own, within
	// limits, in the pull request's workspace; its cleanup deletes only
	// that workspace.
	preview, cleanup := wf.Jobs["preview"], wf.Jobs["preview-cleanup"]
	if preview.Steps == nil || cleanup.Steps == nil {
		t.Fatalf("the workflow's jobs are %v; want preview and preview-cleanup", keys(wf.Jobs))
	}
	for _, want := range []string{"head.repo.full_name == github.repository", "labels.*.name, 'genform-preview'", "action != 'closed'"} {
		if !strings.Contains(preview.If, want) {
			t.Errorf("the preview job's condition lacks %q: %s", want, preview.If)
		}
	}
	if env, ok := preview.Environment.(string); !ok || env == "" || env == apply.Environment || env == mainPlan.Environment {
		t.Errorf("the preview job takes its secrets from %v; want an environment of its own", preview.Environment)
	}
	if ws := preview.Env["GENFORM_WORKSPACE"]; ws != "pr-${{ github.event.pull_request.number }}" {
		t.Errorf("the preview job applies in workspace %q", ws)
	}
	previewApply := step(t, preview, "Apply the preview")
	for _, want := range []string{"genform apply", "-max-generations=", "-max-cost="} {
		if !strings.Contains(previewApply.Run, want) {
			t.Errorf("the preview's apply lacks %q:\n%s", want, previewApply.Run)
		}
	}
	if !strings.Contains(cleanup.If, "action == 'closed'") || !strings.Contains(step(t, cleanup, "Delete the preview workspace").Run, `"pr-$PR_NUMBER"`) {
		t.Errorf("the cleanup job does not delete the closed pull request's workspace alone: %s", cleanup.If)
	}
	if _, ok := wf.On["pull_request_target"]; ok || wf.On["pull_request"] == nil {
		t.Errorf("the workflow runs on %v; want pull_request, never pull_request_target, which hands secrets to a fork's code", keys(wf.On))
	}

	// genform comes from the cache, and is built only on a miss.
	for name, job := range wf.Jobs {
		cached := ""
		for _, s := range job.Steps {
			if strings.HasPrefix(s.Uses, "actions/cache@") && strings.Contains(s.With["path"], "genform") {
				cached = s.ID
			}
		}
		install := step(t, job, "Install genform")
		if cached == "" || !strings.Contains(install.If, "steps."+cached+".outputs.cache-hit") {
			t.Errorf("job %s builds genform without a cache (cache step %q, install if %q)", name, cached, install.If)
		}
	}

	// A pull request's job: read-only database credentials, and none that
	// spend or reach the store.
	if got := pr.Env["PG_CONN_STR"]; !strings.Contains(got, "secrets.PG_CONN_STR_READONLY") || strings.Contains(strings.ReplaceAll(got, "PG_CONN_STR_READONLY", ""), "secrets.PG_CONN_STR") {
		t.Errorf("the pull request's job connects with %q; want the read-only role's secret alone", got)
	}
	if pr.Permissions["contents"] != "read" {
		t.Errorf("the pull request's job may write the repository: %v", pr.Permissions)
	}
	for k, v := range wf.Env {
		if strings.Contains(v, "secrets.") && k != "TEAM_STATE" {
			t.Errorf("the workflow's env %s = %s hands a secret to every job, pull requests included", k, v)
		}
	}
	for _, s := range pr.Steps {
		for k, v := range s.Env {
			if strings.Contains(v, "secrets.") {
				t.Errorf("the pull request's step %q gets secret %s", s.Name, k)
			}
		}
	}
	for k, v := range pr.Env {
		if strings.Contains(v, "secrets.") && k != "PG_CONN_STR" {
			t.Errorf("the pull request's job gets secret %s", k)
		}
	}

	// The secrets that write the state, spend or reach the store are read
	// only by jobs in an environment (which only main may use): a pull
	// request's run, even one that edits this file, cannot reach them as
	// it could a repository secret.
	for name, job := range wf.Jobs {
		if job.Environment != nil {
			continue
		}
		texts := []string{}
		for _, v := range job.Env {
			texts = append(texts, v)
		}
		for _, st := range job.Steps {
			for _, v := range st.Env {
				texts = append(texts, v)
			}
		}
		for _, v := range texts {
			for _, secret := range []string{"GENFORM_TOKEN", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} {
				if strings.Contains(v, "secrets."+secret) {
					t.Errorf("job %s, in no environment, reads secrets.%s", name, secret)
				}
			}
			if strings.Contains(strings.ReplaceAll(v, "PG_CONN_STR_READONLY", ""), "secrets.PG_CONN_STR") {
				t.Errorf("job %s, in no environment, reads the writable database's secret", name)
			}
		}
	}
}

// step is job's step named name.
func step(t *testing.T, job ciJob, name string) ciStep {
	t.Helper()
	for _, s := range job.Steps {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no step %q", name)
	return ciStep{}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func toString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		var parts []string
		for _, p := range v {
			parts = append(parts, toString(p))
		}
		return strings.Join(parts, ",")
	}
	return ""
}
