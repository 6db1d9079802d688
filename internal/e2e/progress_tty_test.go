// What apply leaves on a user's terminal: the real binary runs under a
// pseudo-terminal, everything it writes is fed to a terminal emulator, and
// the tests read the screen the user is left with.

package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/hinshun/vt10x"

	"github.com/genform/genform/internal/simulator"
)

// ttyConfig declares four images, all generated at once.
const ttyConfig = `
service {
  poll_interval = "1s"
  parallelism   = 4
}

image "hero" {
  prompt       = "a lighthouse at dawn"
  image_number = 2
  dir          = "generated/image/hero"
}

image "tile" {
  for_each     = toset(["a", "b", "c"])
  prompt       = "a tile pattern ${each.key}"
  image_number = 1
}
`

// ttyRun is what a genform process left on a terminal.
type ttyRun struct {
	raw    []byte // every byte it wrote
	screen []string
	code   int
	took   time.Duration
}

func (r ttyRun) String() string {
	return fmt.Sprintf("exit %d after %s\n--- screen\n%s\n--- raw\n%q", r.code, r.took.Round(time.Millisecond), strings.Join(r.screen, "\n"), r.raw)
}

// genformTTY runs genform args in dir with a pseudo-terminal of cols×rows
// as its stdin, stdout and stderr (0×0: a terminal that reports no size),
// and returns all it wrote and the screen an emulator of emuCols×emuRows
// shows at the end.
func genformTTY(t *testing.T, dir string, env []string, cols, rows, emuCols, emuRows int, args ...string) ttyRun {
	t.Helper()
	cmd := exec.Command(genformPath(t), args...)
	cmd.Dir = dir
	cmd.Env = env
	start := time.Now()
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	if err != nil {
		t.Fatalf("starting genform under a pty: %v", err)
	}
	defer f.Close()
	timer := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	var raw bytes.Buffer
	_, err = io.Copy(&raw, f)
	// Linux answers EIO on the master once the last holder of the
	// terminal's other end has exited.
	if err != nil && !errors.Is(err, syscall.EIO) {
		t.Fatalf("reading the pty: %v", err)
	}
	werr := cmd.Wait()
	r := ttyRun{raw: raw.Bytes(), took: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case werr == nil:
	case errors.As(werr, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("waiting for genform: %v", werr)
	}
	vt := vt10x.New(vt10x.WithSize(emuCols, emuRows))
	if _, err := vt.Write(r.raw); err != nil {
		t.Fatalf("emulating the terminal: %v", err)
	}
	r.screen = screenLines(vt)
	return r
}

// ttyEnv is childEnv without automation mode, which turns the live display
// off.
func ttyEnv(extra ...string) []string {
	var env []string
	for _, kv := range childEnv(extra...) {
		if !strings.HasPrefix(kv, "GENFORM_IN_AUTOMATION=") {
			env = append(env, kv)
		}
	}
	return append(env, "TERM=xterm-256color")
}

// ttyApply plans four images, then applies the saved plan under a pty, so
// the apply's own output fills the screen.
func ttyApply(t *testing.T, cols, rows, emuCols, emuRows int) ttyRun {
	t.Helper()
	sim := startSim(t, simulator.Options{Token: fakeToken, Latency: 1500 * time.Millisecond})
	ws := newWorkspace(t, map[string]string{"main.gen.hcl": ttyConfig})
	env := ttyEnv("GENFORM_BASE_URL="+sim.URL, "GENFORM_TOKEN="+fakeToken)
	if r := genform(t, ws.dir, childEnv("GENFORM_BASE_URL="+sim.URL, "GENFORM_TOKEN="+fakeToken), "plan", "-out=four.tfplan"); r.code != 0 {
		t.Fatalf("plan: %s", r)
	}
	r := genformTTY(t, ws.dir, env, cols, rows, emuCols, emuRows, "apply", "four.tfplan")
	if r.code != 0 {
		t.Fatalf("apply under a pty: %s", r)
	}
	if jobs := len(sim.Server.Jobs().Jobs); jobs != 4 {
		t.Fatalf("the simulator made %d jobs, want 4", jobs)
	}
	return r
}

// finished is the lasting line of each of the four images.
var finished = map[string]*regexp.Regexp{
	"image.hero":      regexp.MustCompile(`^image\.hero: done: 2 file\(s\) in generated/image/hero \[\d+(\.\d+)?s\]$`),
	`image.tile["a"]`: regexp.MustCompile(`^image\.tile\["a"\]: done: 1 file\(s\) in \S+ \[\d+(\.\d+)?s\]$`),
	`image.tile["b"]`: regexp.MustCompile(`^image\.tile\["b"\]: done: 1 file\(s\) in \S+ \[\d+(\.\d+)?s\]$`),
	`image.tile["c"]`: regexp.MustCompile(`^image\.tile\["c"\]: done: 1 file\(s\) in \S+ \[\d+(\.\d+)?s\]$`),
}

// TestApplyOnTerminalLeavesLastingLines: on a 120×40 terminal, each
// finished image leaves one line saying what it made and how long it took,
// its bar is gone from the first redraw showing that line, the overall bar
// shows an ETA while running and stays at the end with 4/4.
func TestApplyOnTerminalLeavesLastingLines(t *testing.T) {
	t.Parallel()
	r := ttyApply(t, 120, 40, 120, 40)

	// Every redraw starts by moving the cursor up over the bars: just
	// before one, the screen shows a whole frame.
	vt := vt10x.New(vt10x.WithSize(120, 40))
	frames, eta := 0, false
	prev := 0
	for _, loc := range redraw.FindAllIndex(r.raw, -1) {
		vt.Write(r.raw[prev:loc[0]])
		prev = loc[0]
		frames++
		screen := screenLines(vt)
		for addr, re := range finished {
			if !containsMatch(screen, re) {
				continue
			}
			if bar := lineWithPrefix(screen, addr+" "); bar != "" {
				t.Errorf("frame %d: %s has its lasting line and still a bar: %q\n%s", frames, addr, bar, strings.Join(screen, "\n"))
			}
		}
		if strings.Contains(lineWithPrefix(screen, "overall "), " ETA ") {
			eta = true
		}
	}
	t.Logf("%d redraws in %s, %d bytes written", frames, r.took.Round(100*time.Millisecond), len(r.raw))
	if frames < 5 {
		t.Errorf("the apply redrew its bars %d times, want several", frames)
	}
	if !eta {
		t.Errorf("no frame showed an ETA on the overall bar")
	}

	// The final screen: a lasting line per image, then the overall bar,
	// then the summary, and no job's bar.
	for addr, re := range finished {
		if n := countMatches(r.screen, re); n != 1 {
			t.Errorf("%s has %d lasting lines on the final screen, want 1", addr, n)
		}
		if bar := lineWithPrefix(r.screen, addr+" "); bar != "" {
			t.Errorf("a finished job's bar stayed on screen: %q", bar)
		}
	}
	overall := regexp.MustCompile(`^overall +4/4 +\[=+\] +100 % +\d+s$`)
	if n := countMatches(r.screen, overall); n != 1 {
		t.Errorf("the final screen holds %d overall bars at 4/4, want 1", n)
	}
	if lineWithPrefix(r.screen, "Apply complete!") == "" {
		t.Errorf("the final screen does not say Apply complete!")
	}
	t.Logf("final screen:\n%s", strings.Join(r.screen, "\n"))
}

// redraw is the cursor movement mpb starts each redraw of its bars with.
var redraw = regexp.MustCompile(`\x1b\[\d+A`)

func screenLines(vt vt10x.Terminal) []string {
	var lines []string
	for _, line := range strings.Split(strings.TrimRight(vt.String(), "\n "), "\n") {
		lines = append(lines, strings.TrimRight(line, " "))
	}
	return lines
}

func lineWithPrefix(lines []string, prefix string) string {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

func countMatches(lines []string, re *regexp.Regexp) int {
	n := 0
	for _, l := range lines {
		if re.MatchString(l) {
			n++
		}
	}
	return n
}

func containsMatch(lines []string, re *regexp.Regexp) bool { return countMatches(lines, re) > 0 }

// TestApplyOnSizelessTerminalPrintsLines: a terminal that reports 0×0 (a
// pty nobody sized, as some CI runners and containers give) gets the plain
// lines, since bars cannot be drawn to no width.
func TestApplyOnSizelessTerminalPrintsLines(t *testing.T) {
	t.Parallel()
	r := ttyApply(t, 0, 0, 200, 60)
	for addr, re := range finished {
		if n := countMatches(r.screen, re); n != 1 {
			t.Errorf("%s has %d done lines, want 1", addr, n)
		}
	}
	if lineWithPrefix(r.screen, `image.tile["a"]: submitting`) == "" {
		t.Errorf("no plain line for a submission")
	}
	plain := 0
	for _, l := range r.screen {
		if strings.HasPrefix(l, "image.") {
			plain++
		}
	}
	t.Logf("%d plain lines in %s", plain, r.took.Round(100*time.Millisecond))
	if redraw.Match(r.raw) {
		t.Errorf("genform moved the cursor up to redraw on a terminal of no size")
	}
	if lineWithPrefix(r.screen, "Apply complete!") == "" {
		t.Errorf("the screen does not say Apply complete!")
	}
	if t.Failed() {
		t.Logf("final screen:\n%s", strings.Join(r.screen, "\n"))
	}
}

// TestPullOnTerminalShowsBytes: pull on a terminal draws a bar of the
// bytes moved, with the files done beside it, so one large video moves
// the bar as it comes, and ends at all of them.
func TestPullOnTerminalShowsBytes(t *testing.T) {
	f := newPullFixture(t, "video", 1, 64<<20)
	dir := f.workdir(t)
	r := genformTTY(t, dir, ttyEnv(f.srv.Env()...), 120, 40, 120, 40, "pull")
	if r.code != 0 {
		t.Fatalf("pull under a pty: %s", r)
	}
	if !containsMatch(r.screen, regexp.MustCompile(`^pull +1/1 files +64\.0 MiB / 64\.0 MiB .*100 %`)) {
		t.Errorf("the bar does not end at 1/1 files and 64.0 MiB:\n%s", r)
	}
	if !containsMatch(r.screen, regexp.MustCompile(`Done\. 1 file fetched from the store`)) {
		t.Errorf("no closing line:\n%s", r)
	}
	f.verify(t, dir, 1)
}
