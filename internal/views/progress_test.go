package views

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/hinshun/vt10x"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/reconcile/apply"
	"github.com/genform/genform/reconcile/plans"
)

// openTerminal opens a pseudo-terminal of cols×rows and returns its
// terminal end, and a function that closes it and returns the screen an
// emulator of 100×30 shows of all that was written to it.
func openTerminal(t *testing.T, cols, rows int) (*os.File, func() []string) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { ptmx.Close(); tty.Close() })
	if err := pty.Setsize(tty, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)}); err != nil {
		t.Fatal(err)
	}
	var raw bytes.Buffer
	copied := make(chan error, 1)
	go func() {
		_, err := io.Copy(&raw, ptmx)
		copied <- err
	}()
	return tty, func() []string {
		tty.Close()
		// Linux answers EIO on the other end once this one is closed.
		if err := <-copied; err != nil && !errors.Is(err, syscall.EIO) {
			t.Fatalf("reading the pty: %v", err)
		}
		vt := vt10x.New(vt10x.WithSize(100, 30))
		vt.Write(raw.Bytes())
		var lines []string
		for _, l := range strings.Split(strings.TrimRight(vt.String(), "\n "), "\n") {
			lines = append(lines, strings.TrimRight(l, " "))
		}
		return lines
	}
}

// closeWithin closes view, failing the test if that takes longer than d
// (mpb's Wait never returns while a bar is neither complete nor aborted).
func closeWithin(t *testing.T, view Progress, d time.Duration) {
	t.Helper()
	closed := make(chan struct{})
	go func() {
		view.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(d):
		t.Fatalf("closing the progress still waits after %s", d)
	}
}

func terminalEnv(stdout *os.File, vars map[string]string) *Streams {
	return &Streams{Stdout: stdout, Stderr: io.Discard, Getenv: func(k string) string { return vars[k] }}
}

// TestBarProgressEveryEnding: on a sized terminal, an instance that is done,
// failed, skipped (never started) or interrupted leaves one lasting line
// with its time, and no bar; one still running when apply ends loses its
// bar too; the overall bar stays, counting the four that finished.
func TestBarProgressEveryEnding(t *testing.T) {
	tty, screen := openTerminal(t, 100, 30)
	view := NewProgress(terminalEnv(tty, nil), 5)
	if _, ok := view.(*barProgress); !ok {
		t.Fatalf("a sized terminal got %T, want bars", view)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ev := func(addr string, after time.Duration, phase apply.Phase) apply.Event {
		return apply.Event{Time: t0.Add(after), Addr: addrs.MustParseInstance(addr), Action: plans.Create, Phase: phase}
	}
	for _, a := range []string{"image.done", "image.failed", "image.stopped", "image.running"} {
		view.Event(ev(a, 0, apply.PhaseSubmitting))
		e := ev(a, 200*time.Millisecond, apply.PhaseRunning)
		e.Status, e.Progress = "processing", 0.5
		view.Event(e)
	}
	time.Sleep(400 * time.Millisecond) // a redraw or two with four bars
	done := ev("image.done", 2500*time.Millisecond, apply.PhaseDone)
	done.Files, done.Dir = 2, "generated/image/done"
	view.Event(done)
	failed := ev("image.failed", 1200*time.Millisecond, apply.PhaseFailed)
	failed.Err = errors.New("the service refused the prompt")
	view.Event(failed)
	skipped := ev("image.after", 1300*time.Millisecond, apply.PhaseSkipped)
	skipped.Err = errors.New("image.failed failed")
	view.Event(skipped)
	view.Event(ev("image.stopped", 3*time.Second, apply.PhaseInterrupted))
	time.Sleep(400 * time.Millisecond)
	closeWithin(t, view, 10*time.Second)

	got := screen()
	want := []string{
		"image.done: done: 2 file(s) in generated/image/done [2.5s]",
		"image.failed: failed (its error is listed at the end) [1.2s]",
		"image.after: skipped (why is listed at the end)",
		"image.stopped: interrupted [3s]",
	}
	if len(got) != len(want)+1 {
		t.Fatalf("final screen has %d lines, want %d:\n%s", len(got), len(want)+1, strings.Join(got, "\n"))
	}
	for i, w := range want {
		if got[i] != w {
			t.Errorf("line %d: %q, want %q", i+1, got[i], w)
		}
	}
	if last := got[len(got)-1]; !strings.HasPrefix(last, "overall 4/5 ") || strings.Contains(last, "ETA") {
		t.Errorf("the overall bar at the end: %q, want it at 4/5 with no ETA", last)
	}
}

// TestProgressOnTerminalsOfNoSize: a terminal that reports 0×0, and any
// terminal with GENFORM_IN_AUTOMATION, get the plain lines.
func TestProgressOnTerminalsOfNoSize(t *testing.T) {
	for _, c := range []struct {
		name       string
		cols, rows int
		vars       map[string]string
	}{
		{"0x0", 0, 0, nil},
		{"no rows", 80, 0, nil},
		{"automation", 100, 30, map[string]string{"GENFORM_IN_AUTOMATION": "1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tty, screen := openTerminal(t, c.cols, c.rows)
			view := NewProgress(terminalEnv(tty, c.vars), 1)
			if _, ok := view.(*lineProgress); !ok {
				t.Errorf("got %T, want plain lines", view)
			}
			view.Event(apply.Event{Time: time.Now(), Addr: addrs.MustParseInstance("image.a"), Action: plans.Create, Phase: apply.PhaseSubmitting})
			closeWithin(t, view, 5*time.Second)
			if got := strings.Join(screen(), "\n"); got != "image.a: submitting" {
				t.Errorf("screen %q, want the plain line", got)
			}
		})
	}
}
