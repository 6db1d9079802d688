// A user's service token never leaves the environment: no file genform
// writes and nothing it prints holds it, in any encoding, even with the
// request trace on and the service failing.

package e2e

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/hex"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/simulator"
)

// TestSecretsNeverWritten runs every command a user runs, with the request
// trace on, against a service that fails often enough for retries and
// error messages to be printed, and proves that the token appears in none
// of the state file, the saved plans, the gallery, any other file genform
// wrote, or anything it printed.
func TestSecretsNeverWritten(t *testing.T) {
	parallelSlow(t, "runs genform many times")
	const secret = "tok-SECRET-4242-genform"
	// The errors make retries, whose traces must not hold the token; they
	// spare the creates, a 500 to which leaves a generation possibly paid
	// and the apply waiting for the user (the money tests' subject).
	sim := startSim(t, simulator.Options{Token: secret, Latency: 300 * time.Millisecond, ErrorRate: 0.15, ReadErrorsOnly: true, Seed: 3})
	other := startSim(t, simulator.Options{Token: "another-token", Latency: 300 * time.Millisecond})
	ws := newWorkspace(t, map[string]string{"main.gen.hcl": `
service {
  token         = env("GEN_TOKEN")
  poll_interval = "1s"
}

variable "style" {
  default = "noir"
}

image "a" {
  prompt       = "a red apple, ${var.style}"
  image_number = 2
}

image "b" {
  for_each     = toset(["x", "y"])
  prompt       = "a pear ${each.key}"
  image_number = 1
}

video "v" {
  source_image   = image.a.outputs[0].media_url
  prompt         = "slow spin"
  duration       = 2
  watermark_free = true
}

output "a_file" {
  value = image.a.outputs[0].path
}
`})
	env := childEnv("GENFORM_BASE_URL="+sim.URL, "GEN_TOKEN="+secret, "GENFORM_TOKEN="+secret, "GENFORM_LOG=debug")
	rec := &recorder{t: t, dir: ws.dir}
	run := rec.run
	run(0, env, "validate")
	run(0, env, "validate", "-json")
	run(0, env, "plan")
	run(0, env, "plan", "-json")
	run(0, env, "plan", "-format=markdown")
	run(0, env, "plan", "-out=saved.tfplan")
	run(0, env, "show", "saved.tfplan")
	run(0, env, "show", "-json", "saved.tfplan")
	applied := run(0, env, "apply", "saved.tfplan")
	run(0, env, "apply", "-auto-approve")
	run(0, env, "show")
	run(0, env, "show", "-json")
	run(0, env, "show", "image.a")
	run(0, env, "state", "list")
	run(0, env, "state", "show", "video.v")
	run(0, env, "output")
	run(0, env, "output", "-json")
	run(0, env, "graph")
	run(0, env, "gallery", "-out=gallery.html")
	run(0, env, "plan", "-replace=image.a", "-out=replace.tfplan")
	// A service that refuses the token: its errors are printed. It is
	// another service than the state's, hence -migrate-service.
	refused := run(1, childEnv("GENFORM_BASE_URL="+other.URL, "GEN_TOKEN="+secret, "GENFORM_LOG=debug"), "apply", "-auto-approve", "-migrate-service", "-target=image.a")
	if !strings.Contains(refused.stderr, "401") {
		t.Errorf("the refused apply does not report the service's 401:\n%s", refused)
	}

	// The token was really used and the trace was really on: the tests
	// below would otherwise prove nothing.
	if jobs := len(sim.Server.Jobs().Jobs); jobs == 0 {
		t.Fatal("the simulator that accepts only the token made no job")
	}
	if !strings.Contains(applied.stderr, "authorization=[redacted]") || !strings.Contains(applied.stderr, "retrying") {
		t.Fatalf("the apply's debug trace shows no redacted authorization header or no retry:\n%s", applied.stderr)
	}

	forms := map[string]string{
		"the token":            secret,
		"the token in base64":  base64.StdEncoding.EncodeToString([]byte(secret)),
		"the header in base64": base64.StdEncoding.EncodeToString([]byte("Bearer " + secret)),
		"the token in hex":     hex.EncodeToString([]byte(secret)),
	}
	leaks := func(where string, b []byte) {
		for what, s := range forms {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds %s", where, what)
			}
		}
	}
	rec.eachPrinted(leaks)
	var files []string
	err := filepath.WalkDir(ws.parent, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		leaks(path, b)
		rel, _ := filepath.Rel(ws.parent, path)
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{".genform/state.db", "saved.tfplan", "replace.tfplan", "gallery.html"} {
		if _, err := os.Stat(filepath.Join(ws.dir, filepath.FromSlash(want))); err != nil {
			t.Errorf("%s was not written, so it was not checked: %v", want, err)
		}
	}
	ws.checkNothingOutside(t)
	runs := rec.runs
	slowest := slices.MaxFunc(runs, func(a, b result) int { return cmp.Compare(a.took, b.took) })
	t.Logf("secrets: %d commands and %d files checked (the slowest: genform %s, %s): %v",
		len(runs), len(files), strings.Join(slowest.args, " "), slowest.took.Round(time.Millisecond), files)
}

// TestShortTokenRedactedAsAWholeWord: a token may be a short word ("sim")
// that other words of what genform prints hold. A service whose refusal
// echoes the request's header and talks of its simulator gets the token
// redacted where it stands, and every word that holds it shown whole.
func TestShortTokenRedactedAsAWholeWord(t *testing.T) {
	parallelSlow(t, "runs genform against a service echoing the token")
	const tok = "sim"
	f := newFakeService(t, func(f *fakeService) {
		f.status = func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, "simulator refused: "+r.Header.Get("Authorization")+"; simple similes")
		}
	})
	ws := newWorkspace(t, map[string]string{"main.gen.hcl": hostileConfig})
	r := genformWithin(t, hostileTimeout+hostileMargin, ws.dir, serviceEnv(f.url, tok, "GENFORM_LOG=debug"), "apply", "-auto-approve")
	if r.code != 1 || !strings.Contains(r.stderr, "401") {
		t.Fatalf("want the 401 reported:\n%s", r)
	}
	out := r.stdout + r.stderr
	if !strings.Contains(out, "simulator refused: Bearer [redacted]; simple similes") {
		t.Errorf("the refusal is not shown with its words whole and the token redacted:\n%s", r)
	}
	if regexp.MustCompile(`(^|[^\pL\pN_.-])sim([^\pL\pN_-]|$)`).MatchString(out) {
		t.Errorf("the output shows the token:\n%s", r)
	}
	if n := f.creates.Load(); n != 0 {
		t.Errorf("%d creates sent with a refused token", n)
	}
}
