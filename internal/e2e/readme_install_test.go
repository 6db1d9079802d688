package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeInstallWorks runs the README's install commands (the go
// lines of the code block under "## Install") as a newcomer does, in the
// clone (here the module's root), with the binary put in a folder of the
// test's, and runs what they built.
func TestReadmeInstallWorks(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Install\n")
	if !ok {
		t.Fatal("README.md has no ## Install section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, ok := strings.Cut(section, "```sh\n")
	if !ok {
		t.Fatal("the Install section has no sh block")
	}
	block, _, _ = strings.Cut(block, "```")
	var lines []string
	for _, line := range strings.Split(block, "\n") {
		cmd, _, _ := strings.Cut(line, "#")
		if cmd = strings.TrimSpace(cmd); cmd != "" {
			lines = append(lines, cmd)
		}
	}
	if len(lines) == 0 {
		t.Fatal("the Install block has no command")
	}
	for _, line := range lines {
		if strings.Contains(line, "@latest") {
			t.Errorf("the install line %q needs a published version, which there is not", line)
		}
	}
	gobin := t.TempDir()
	cmd := exec.Command("bash", "-e", "-c", strings.Join(lines, "\n"))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOBIN="+gobin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the README's install commands failed: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(gobin, "genform"), "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "genform") {
		t.Fatalf("the installed genform does not run: %v\n%s", err, out)
	}
}
