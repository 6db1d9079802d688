// Hostile configurations: files written to exhaust the parser. HCL's
// parser and evaluator recurse once per level of nesting, without a limit
// of their own, so a 200 KB file of parentheses used to take a gigabyte
// of stack and crash the process. genform refuses such a file before it
// is parsed, at once and with little memory, naming the file and line.

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/e2e/harness"
)

// deepConfigs are configurations nested 100,000 levels deep (50,000 for
// the two-level-a-step kinds), each in the file genform reads it from.
func deepConfigs() map[string]map[string]string {
	const n = 100_000
	locals := func(expr string) map[string]string {
		return map[string]string{"main.gen.hcl": "locals {\n  i = 0\n  l = [1]\n  x = " + expr + "\n}\n"}
	}
	return map[string]map[string]string{
		"parentheses":   locals(strings.Repeat("(", n) + "1" + strings.Repeat(")", n)),
		"lists":         locals(strings.Repeat("[", n) + strings.Repeat("]", n)),
		"operators":     locals(strings.Repeat("1+", n) + "1"),
		"negations":     locals(strings.Repeat("!", n) + "true"),
		"conditionals":  locals(strings.Repeat("true?1:", n) + "1"),
		"indexes":       locals("local.l" + strings.Repeat("[local.i]", n/4)),
		"templates":     locals(strings.Repeat(`"${`, n/2) + `"x"` + strings.Repeat(`}"`, n/2)),
		"heredocs":      locals(strings.Repeat("<<E\n${", n/2) + `"x"` + strings.Repeat("}\nE\n", n/2)),
		"JSON arrays":   {"main.gen.json": `{"locals": {"x": ` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}}`},
		"JSON template": {"main.gen.json": `{"locals": {"x": "` + strings.Repeat("${(", n/2) + "1" + strings.Repeat(")}", n/2) + `"}}`},
		"variables file": {
			"main.gen.hcl":  "variable \"v\" {\n  type    = any\n  default = null\n}\n",
			"v.genvars.hcl": "v = " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) + "\n",
			"-var-file":     "v.genvars.hcl",
		},
	}
}

// TestDeepNestingRefused runs validate, plan and fmt on each deep
// configuration: each exits 1 with a diagnostic naming the file and line,
// within seconds and a small fraction of the memory it used to take (the
// figures are logged; -v shows them).
func TestDeepNestingRefused(t *testing.T) {
	t.Parallel()
	for name, files := range deepConfigs() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var args []string
			if vf, ok := files["-var-file"]; ok {
				args = []string{"-var-file=" + vf}
				delete(files, "-var-file")
			}
			ws := newWorkspace(t, files)
			size := 0
			for _, text := range files {
				size += len(text)
			}
			for _, cmd := range [][]string{{"validate"}, {"plan"}, {"fmt", "-check"}} {
				if cmd[0] == "fmt" && strings.Contains(name, "JSON") {
					continue // fmt formats the native syntax only
				}
				full := append(append([]string(nil), cmd...), args...)
				if cmd[0] == "fmt" {
					full = cmd
				}
				cmdr, stdout, stderr := genformCmd(t, ws.dir, childEnv(), full...)
				start := time.Now()
				rss, err := harness.RunMeasured(t, cmdr)
				took := time.Since(start)
				res := result{args: full, stdout: stdout.String(), stderr: stderr.String(), code: cmdr.ProcessState.ExitCode(), took: took}
				if err == nil || res.code != 1 {
					t.Fatalf("want exit 1:\n%s", res)
				}
				file := "main.gen.hcl"
				if strings.Contains(name, "JSON") {
					file = "main.gen.json"
				} else if name == "variables file" {
					file = "v.genvars.hcl"
				}
				if !strings.Contains(res.stderr, "Expression nested too deeply") || !strings.Contains(res.stderr, "on "+file+" line ") {
					t.Fatalf("want a nesting diagnostic on %s:\n%s", file, res)
				}
				// The race detector's runtime alone takes more than the
				// bound; the figure holds for the binary users run.
				if rss > 100<<20 && !harness.RaceEnabled || took > 10*time.Second {
					t.Errorf("genform %s took %s and %d MiB, want well under a second and 100 MiB", strings.Join(full, " "), took, rss>>20)
				}
				t.Logf("genform %s on %s of %d bytes: exit 1 after %s, peak %d MiB", strings.Join(full, " "), name, size, took.Round(time.Millisecond), rss>>20)
			}
		})
	}
}

// TestNestingAtTheLimitParses: a configuration nested as deep as genform
// allows parses, evaluates and plans with little memory, so the limit is
// not a wall against real files but a bound on what any file can cost.
func TestNestingAtTheLimitParses(t *testing.T) {
	t.Parallel()
	const levels = 250 // MaxNesting less the locals block and the attribute
	expr := strings.Repeat("(", levels) + "1" + strings.Repeat(")", levels)
	ws := newWorkspace(t, map[string]string{"main.gen.hcl": fmt.Sprintf("locals {\n  x = %s\n}\n\nimage \"a\" {\n  prompt       = \"a lighthouse ${local.x}\"\n  image_number = 1\n}\n", expr)})
	cmdr, stdout, stderr := genformCmd(t, ws.dir, childEnv("GENFORM_BASE_URL=http://127.0.0.1:9"), "plan")
	rss, err := harness.RunMeasured(t, cmdr)
	if err != nil {
		t.Fatalf("plan: %v\n%s%s", err, stdout, stderr)
	}
	if !strings.Contains(stdout.String(), `prompt       = "a lighthouse 1"`) {
		t.Errorf("plan did not evaluate the expression:\n%s", stdout)
	}
	if rss > 100<<20 && !harness.RaceEnabled {
		t.Errorf("plan took %d MiB", rss>>20)
	}
}
