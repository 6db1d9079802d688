package command

import (
	"bytes"
	"strings"
	"testing"

	"github.com/genform/genform/internal/views"
)

// Only a line that is "yes" approves, read from whatever standard input
// is; anything else cancels, and no line at all says why. With
// GENFORM_IN_AUTOMATION nothing is read.
func TestConfirm(t *testing.T) {
	for _, c := range []struct {
		name, input string
		stdin       bool // false: no standard input at all
		automation  bool
		want        int
		stdout      string
		stderr      string
	}{
		{name: "yes", input: "yes\n", stdin: true, want: ExitOK},
		{name: "yes without a newline", input: "yes", stdin: true, want: ExitOK},
		{name: "yes with spaces", input: "  yes \r\n", stdin: true, want: ExitOK},
		{name: "only the first line", input: "no\nyes\n", stdin: true, want: ExitError, stdout: "Apply cancelled."},
		{name: "YES", input: "YES\n", stdin: true, want: ExitError, stdout: "Apply cancelled."},
		{name: "an empty line", input: "\n", stdin: true, want: ExitError, stdout: "Apply cancelled."},
		{name: "end of input", input: "", stdin: true, want: ExitError, stdout: "Apply cancelled.", stderr: "No answer: standard input ended"},
		{name: "no standard input", want: ExitError, stdout: "Apply cancelled.", stderr: "No answer: standard input ended"},
		{name: "automation", input: "yes\n", stdin: true, automation: true, want: ExitError, stderr: "GENFORM_IN_AUTOMATION is set, so genform asks nothing; pass -auto-approve"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			env := &Env{Streams: views.Streams{Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string {
				if k == "GENFORM_IN_AUTOMATION" && c.automation {
					return "1"
				}
				return ""
			}}}
			if c.stdin {
				env.Stdin = strings.NewReader(c.input)
			}
			if got := confirm(env, "Apply", "apply", "; pass -auto-approve"); got != c.want {
				t.Errorf("exit %d, want %d", got, c.want)
			}
			if !strings.Contains(stdout.String(), c.stdout) || c.stdout == "" && strings.Contains(stdout.String(), "cancelled") {
				t.Errorf("stdout %q, want %q", stdout.String(), c.stdout)
			}
			if !strings.Contains(stderr.String(), c.stderr) || c.stderr == "" && stderr.Len() > 0 {
				t.Errorf("stderr %q, want %q", stderr.String(), c.stderr)
			}
			if c.automation && strings.Contains(stdout.String(), "Do you want") {
				t.Errorf("GENFORM_IN_AUTOMATION asked: %q", stdout.String())
			}
		})
	}
}
