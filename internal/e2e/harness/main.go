package harness

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/genform/genform/internal/command"
	"github.com/genform/genform/statefile/pgstate/pgtest"
)

// Main is the TestMain of a package of end-to-end tests: it runs m's tests
// with two commands in PATH, both this test binary under another name,
// and stops the PostgreSQL server pgtest started for them, if any. genform
// is the real command (command.Run, as main.go runs it); peak-rss is the
// launcher RunMeasured measures a genform process through. Run under
// either name, the test binary is that command and runs no test.
func Main(m *testing.M) {
	testscript.Main(pgtest.Wrap(m), map[string]func(){
		"genform":  func() { os.Exit(command.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
		"peak-rss": peakRSSMain,
	})
}

// peakRSSFile names the file where the peak-rss launcher writes the peak
// resident memory of its child, in KiB.
const peakRSSFile = "PEAK_RSS_FILE"

// RunMeasured runs cmd, as cmd.Run does, and returns its peak resident
// memory in bytes. It goes through the peak-rss launcher that Main puts in
// PATH: ru_maxrss of a direct child counts this test process's own peak,
// which the child's memory inherits at exec, while the launcher's children
// inherit only the launcher's few MiB.
func RunMeasured(t testing.TB, cmd *exec.Cmd) (int64, error) {
	t.Helper()
	launcher, err := exec.LookPath("peak-rss")
	if err != nil {
		t.Fatalf("peak-rss is not in PATH (harness.Main installs it): %v", err)
	}
	file := filepath.Join(t.TempDir(), "peak-rss")
	cmd.Args = append([]string{"peak-rss", cmd.Path}, cmd.Args[1:]...)
	cmd.Path = launcher
	cmd.Env = append(cmd.Env, peakRSSFile+"="+file)
	runErr := cmd.Run()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the peak-rss launcher wrote no figure: %v (run: %v)", err, runErr)
	}
	kib, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
	if err != nil {
		t.Fatalf("the peak-rss launcher wrote %q", b)
	}
	return kib << 10, runErr
}

// peakRSSMain is the peak-rss launcher: it runs its arguments as a child
// with its own standard streams, writes the child's ru_maxrss where
// PEAK_RSS_FILE says, and exits with the child's code.
func peakRSSMain() {
	file := os.Getenv(peakRSSFile)
	os.Unsetenv(peakRSSFile)
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, "peak-rss:", err)
		os.Exit(2)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if err := os.WriteFile(file, []byte(strconv.FormatInt(ru.Maxrss, 10)), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "peak-rss:", err)
		os.Exit(2)
	}
	code := cmd.ProcessState.ExitCode()
	if code < 0 {
		code = 2 // killed by a signal
	}
	os.Exit(code)
}
