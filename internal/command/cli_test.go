package command

import (
	"bytes"
	"strings"
	"testing"

	"github.com/genform/genform/internal/views"
)

// A command that panics (a bug) ends with status 1, not the 2 Go gives a
// crash, which plan -detailed-exitcode means as "changes present".
func TestCrashIsAnError(t *testing.T) {
	var stderr bytes.Buffer
	env := &Env{Streams: views.Streams{Stderr: &stderr}}
	c := &command{name: "plan", run: func(*Env, []string) int { panic("index out of range") }}
	if code := runCommand(env, c, nil); code != ExitError {
		t.Errorf("exit %d, want %d", code, ExitError)
	}
	for _, want := range []string{"genform plan crashed, which is a bug", "index out of range", "TestCrashIsAnError"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr does not say %q:\n%s", want, &stderr)
		}
	}
}

// TestEveryCommandHelp: `genform COMMAND -help` prints the command's usage
// on stdout and exits 0, for every command, as the docs promise.
func TestEveryCommandHelp(t *testing.T) {
	for name, c := range commands {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := []string{name, "-help"}
			if name == "state" {
				args = []string{"state", "list", "-help"}
			}
			if code := Run(args, nil, &stdout, &stderr); code != ExitOK || stderr.Len() != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr.String())
			}
			if name != "state" && stdout.String() != c.usage {
				t.Errorf("printed:\n%s\nnot its usage:\n%s", stdout.String(), c.usage)
			}
			if !strings.HasPrefix(stdout.String(), "Usage: genform ") {
				t.Errorf("printed %q", stdout.String())
			}
		})
	}
}
