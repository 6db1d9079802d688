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
