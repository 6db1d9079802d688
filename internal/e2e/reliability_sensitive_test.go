// A sensitive variable's value is sent to the service (it is part of the
// request) and kept in the state (the request as sent), and shown nowhere:
// every value made from one, however it was computed, prints as
// (sensitive) in every view of plans and of the state, and no file genform
// writes for people (saved plans, the gallery) holds it.

package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/simulator"
)

// TestSensitiveNeverShown runs every command that shows values, on a
// configuration that makes prompts, a negative prompt and a seed from
// sensitive variables (through interpolation, locals, upper() and
// format()) and builds the service token in a local from a variable; then
// again after the configuration stopped using the secret (a plain prompt,
// a removed block), whose records still hold it; and checks that neither
// the secret, in any case, nor the seed appears in anything printed, in
// the saved plans or in the gallery. The simulator's jobs prove the real
// values were sent.
func TestSensitiveNeverShown(t *testing.T) {
	parallelSlow(t, "runs genform many times")
	const (
		word  = "abracadabra-77"
		seed  = "918273"
		token = "tok-SENSITIVE-5150"
	)
	sim := startSim(t, simulator.Options{Token: token, Latency: 300 * time.Millisecond})
	// The variables both configurations declare: the secret, the seed and
	// the token.
	declarations := `
variable "word" {
  type      = string
  sensitive = true
}

variable "n" {
  type      = number
  sensitive = true
  default   = ` + seed + `
}

variable "tok" {
  type = string
}
`
	ws := newWorkspace(t, map[string]string{
		"main.gen.hcl": declarations + `
locals {
  shout  = upper(var.word)
  bearer = var.tok
}

service {
  token         = local.bearer
  poll_interval = "1s"
}

image "a" {
  prompt          = "a poster that says ${local.shout}"
  negative_prompt = format("no %s", var.word)
  seed            = var.n
  image_number    = 1
}

image "b" {
  count        = 2
  prompt       = "a plain picture ${count.index}"
  image_number = 1
}

video "v" {
  source_image = image.a.outputs[0].media_url
  prompt       = "slow zoom on ${var.word}"
  duration     = 2
}

output "shout" {
  value     = local.shout
  sensitive = true
}

output "files" {
  value = image.b[*].outputs[0].path
}
`,
		"later.gen.hcl.alt": declarations + `
service {
  token         = var.tok
  poll_interval = "1s"
}

image "a" {
  prompt       = "a plain poster"
  image_number = 1
}

image "b" {
  count        = 2
  prompt       = "a plain picture ${count.index}"
  image_number = 1
}
`,
	})
	env := childEnv("GENFORM_BASE_URL="+sim.URL, "GENFORM_VAR_tok="+token)
	vars := []string{"-var", "word=" + word}
	rec := &recorder{t: t, dir: ws.dir}
	run := func(wantCode int, args ...string) result {
		t.Helper()
		return rec.run(wantCode, env, args...)
	}
	// with puts the -var flags after the command, before its arguments.
	with := func(args ...string) []string {
		n := 1
		if args[0] == "state" {
			n = 2
		}
		return append(append(append([]string(nil), args[:n]...), vars...), args[n:]...)
	}

	run(0, with("validate")...)
	run(0, with("validate", "-json")...)
	run(0, with("plan")...)
	run(0, with("plan", "-json")...)
	run(0, with("plan", "-format=markdown")...)
	run(0, with("plan", "-out=first.plan")...)
	// show PLANFILE plans again as apply does: the secret is given again.
	run(0, with("show", "first.plan")...)
	run(0, with("show", "-json", "first.plan")...)
	run(0, with("apply", "first.plan")...)
	run(0, with("apply", "-auto-approve", "-json")...)
	run(0, with("show")...)
	run(0, with("show", "-json")...)
	run(0, with("show", "image.a")...)
	run(0, with("show", "-json", "video.v")...)
	run(0, with("state", "show", "image.a")...)
	run(0, with("state", "list")...)
	run(0, with("output")...)
	run(0, with("graph")...)
	run(0, with("gallery", "-out=gallery.html")...)

	// The configuration stops using the secret: the records still hold
	// what was made from it, and the plan's old values show them.
	later, err := os.ReadFile(filepath.Join(ws.dir, "later.gen.hcl.alt"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(ws.dir, "main.gen.hcl"), later)
	run(0, with("plan")...)
	run(0, with("plan", "-json")...)
	run(0, with("plan", "-format=markdown")...)
	run(0, with("plan", "-out=later.plan")...)
	run(0, with("show", "-json", "later.plan")...)
	run(0, with("show")...)
	run(0, with("show", "-json")...)
	run(0, with("state", "show", "video.v")...)
	run(0, with("gallery", "-out=gallery-later.html")...)
	run(0, with("destroy", "-auto-approve")...)
	// The history keeps every generation's request as it was sent.
	run(0, with("history")...)
	run(0, with("history", "-json")...)
	run(0, with("show", "-json")...)

	// The secret was sent: the views hid it, the service had it.
	sent := 0
	for _, j := range sim.Server.Jobs().Jobs {
		if strings.Contains(promptOf(t, j.Body), strings.ToUpper(word)) || strings.Contains(promptOf(t, j.Body), word) {
			sent++
		}
	}
	if sent != 2 {
		t.Errorf("%d jobs were sent the secret prompt, want 2 (image.a, video.v)", sent)
	}
	shown := 0
	for _, r := range rec.runs {
		if strings.Contains(r.stdout, "(sensitive)") {
			shown++
		}
	}
	if shown < 10 {
		t.Errorf("only %d commands printed (sensitive): the views may not show the attributes at all", shown)
	}

	forms := []string{word, strings.ToUpper(word), seed, base64.StdEncoding.EncodeToString([]byte(word)), token}
	leaks := func(where string, b []byte) {
		for _, s := range forms {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds %q", where, s)
			}
		}
	}
	// The command lines hold the secret: only what genform printed is
	// checked.
	rec.eachPrinted(leaks)
	for _, f := range []string{"first.plan", "later.plan", "gallery.html", "gallery-later.html"} {
		b, err := os.ReadFile(filepath.Join(ws.dir, f))
		if err != nil {
			t.Fatalf("%s was not written: %v", f, err)
		}
		leaks(f, b)
	}
	t.Logf("sensitive: %d commands and 4 files checked, %d printed (sensitive), 2 jobs sent the real prompt", len(rec.runs), shown)
}

// TestServiceErrorQuotingSecretHidden: a service that refuses a request
// may quote what it was sent. apply prints the service's message, as text
// and as JSON, with the prompt made from a sensitive variable (and the
// secret in any other place) replaced by (sensitive), and the rest of the
// message kept, so the user still learns why.
func TestServiceErrorQuotingSecretHidden(t *testing.T) {
	parallelSlow(t, "runs genform against a fake service")
	const word = "hocus-pocus-88"
	svc := newFakeService(t, func(f *fakeService) {
		f.create = func(w http.ResponseWriter, r *http.Request) {
			var body struct {
				Prompt string `json:"prompt"`
			}
			json.NewDecoder(r.Body).Decode(&body)
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"message":%q,"code":400011,"details":[]}`,
				fmt.Sprintf("prompt %q breaks the content policy (flagged: %s)", body.Prompt, strings.Split(strings.ToLower(body.Prompt), " ")[3]))
		}
	})
	ws := newWorkspace(t, map[string]string{"main.gen.hcl": `
variable "word" {
  type      = string
  sensitive = true
}

image "a" {
  prompt       = "a poster says ${upper(var.word)}"
  image_number = 1
}
`})
	env := childEnv("GENFORM_BASE_URL="+svc.url, "GENFORM_VAR_word="+word)
	for _, args := range [][]string{{"apply", "-auto-approve"}, {"apply", "-auto-approve", "-json"}} {
		r := genform(t, ws.dir, env, args...)
		if r.code != 1 {
			t.Fatalf("exit %d, want 1:\n%s", r.code, r)
		}
		out := r.stdout + r.stderr
		if !strings.Contains(out, "breaks the content policy") || !strings.Contains(out, "prompt "+sensitiveQuoted(args)) {
			t.Errorf("genform %s does not say why, with the prompt hidden:\n%s", strings.Join(args, " "), r)
		}
		if strings.Contains(strings.ToLower(out), word) {
			t.Errorf("genform %s shows the secret:\n%s", strings.Join(args, " "), r)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "content policy") {
				t.Logf("genform %s: %s", strings.Join(args, " "), strings.TrimSpace(line))
				break
			}
		}
	}
	if n := svc.creates.Load(); n != 2 {
		t.Errorf("%d create requests, want 2", n)
	}
}

// sensitiveQuoted is how the hidden prompt reads in the service's quoted
// message: as text, or inside a JSON string.
func sensitiveQuoted(args []string) string {
	if slices.Contains(args, "-json") {
		return `\"(sensitive)\"`
	}
	return `"(sensitive)"`
}
