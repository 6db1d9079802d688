package boltstate

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/statefile"
)

// helperEnv names the state file a re-executed test binary should lock; see
// TestHelperHoldLock. helperRecordsEnv, when set, is how many records it
// commits first, and then it holds a transaction open that records one
// more, image.pending, and rolls it back when released.
const (
	helperEnv        = "BOLTSTATE_TEST_HOLD_LOCK"
	helperRecordsEnv = "BOLTSTATE_TEST_RECORDS"
)

// TestHelperHoldLock is not a test: run as a child process by holdLock, it
// opens the state file as "genform apply" would, says "locked", and holds
// the lock until its stdin is closed.
func TestHelperHoldLock(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		t.Skip("helper process for the lock tests")
	}
	s, err := Open(path, statefile.Options{Command: "apply", Create: true})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	hold := func() error {
		fmt.Println("locked")
		_, err := io.Copy(io.Discard, os.Stdin)
		return err
	}
	if n := os.Getenv(helperRecordsEnv); n != "" {
		var records int
		fmt.Sscan(n, &records)
		fill(t, s, records)
		err := s.Update(func(tx *statefile.Tx) error {
			if err := tx.Record(sampleResource("image.pending", 1)); err != nil {
				return err
			}
			hold()
			return errors.New("rolled back")
		})
		if err == nil {
			fmt.Println("error: the pending record was committed")
			os.Exit(1)
		}
	} else {
		hold()
	}
	if err := s.Close(); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// holdLock starts a child process holding path's lock. release closes its
// stdin, so it closes the store and exits.
func holdLock(t *testing.T, path string, env ...string) (cmd *exec.Cmd, release func()) {
	t.Helper()
	cmd = exec.Command(os.Args[0], "-test.run=^TestHelperHoldLock$")
	cmd.Env = append(append(os.Environ(), helperEnv+"="+path), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "locked\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper did not take the lock: %q, %v", line, err)
	}
	released := false
	release = func() {
		if released {
			return
		}
		released = true
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("helper: %v", err)
		}
	}
	t.Cleanup(func() {
		if !released {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, release
}

func TestLockHeldByAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".genform", "state.db")
	child, release := holdLock(t, path)
	host, _ := os.Hostname()

	_, err := Open(path, statefile.Options{Command: "plan"})
	var le *statefile.LockedError
	if !errors.As(err, &le) {
		t.Fatalf("Open of a locked file = %v, want a *LockedError", err)
	}
	h := le.Holder
	if h == nil {
		t.Fatal("LockedError names no holder")
	}
	if h.PID != child.Process.Pid || h.Command != "apply" || h.Host != host || h.Started.IsZero() {
		t.Errorf("holder = %+v, want pid %d, command apply, host %s", h, child.Process.Pid, host)
	}
	for _, want := range []string{
		"state file " + path + " is locked by \"genform apply\"",
		fmt.Sprintf("(pid %d on host %s, since %s)", h.PID, host, h.Started.UTC().Format(time.RFC3339)),
		"wait for it to finish or pass -lock-timeout=DURATION",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}

	release()
	if _, err := os.Stat(path + infoSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("holder info left after Close: %v", err)
	}
	s, err := Open(path, statefile.Options{Command: "plan"})
	if err != nil {
		t.Fatalf("Open after the holder closed: %v", err)
	}
	s.Close()
}

// TestLockDiesWithItsHolder checks what the state promises: the lock
// cannot go stale, since the OS drops it with the process, and the info
// file a killed holder leaves is overwritten by the next one.
func TestLockDiesWithItsHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	child, _ := holdLock(t, path)
	if err := child.Process.Kill(); err != nil { // SIGKILL: no chance to clean up
		t.Fatal(err)
	}
	child.Wait()
	var left statefile.Holder
	if b, err := os.ReadFile(path + infoSuffix); err != nil || json.Unmarshal(b, &left) != nil || left.PID != child.Process.Pid {
		t.Fatalf("killed holder's info = %+v (%v), want its pid %d left behind", left, err, child.Process.Pid)
	}
	// The process it names is gone: the info says so.
	if h := readHolder(path); h == nil || !h.Gone || h.PID != child.Process.Pid {
		t.Errorf("readHolder = %+v, want pid %d marked gone", h, child.Process.Pid)
	}
	s, err := Open(path, statefile.Options{Command: "apply"})
	if err != nil {
		t.Fatalf("Open after the holder was killed: %v", err)
	}
	defer s.Close()
	if h := readHolder(path); h == nil || h.PID != os.Getpid() || h.Gone {
		t.Errorf("holder info after taking over = %+v, want pid %d, running", h, os.Getpid())
	}
}

// TestGoneWriterBesideAReader checks the message a writer gets when a
// command reading the state holds the lock and the holder record is that
// of a writer killed before: it says that writer is gone and that a reader
// holds the lock (or a writer that has just taken it), rather than name a
// process that no longer runs as the holder. A reader kept out that way
// can only be kept out by a writer.
func TestGoneWriterBesideAReader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	child, _ := holdLock(t, path)
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	reader, err := Open(path, statefile.Options{ReadOnly: true, Command: "show"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(path, statefile.Options{Command: "apply"})
	var le *statefile.LockedError
	if !errors.As(err, &le) || le.Holder == nil || !le.Holder.Gone {
		t.Fatalf("a writer beside a reader, after a killed writer: %v, want a LockedError naming the holder as gone", err)
	}
	want := fmt.Sprintf(`state file %s is locked by commands reading it (show, state list, state show, state pull, output, history, gallery, pull), or by a writer that has just taken it: the writer recorded as its holder, "genform apply" (pid %d on host `, path, child.Process.Pid)
	if msg := err.Error(); !strings.HasPrefix(msg, want) || !strings.Contains(msg, "), is gone; wait for it") {
		t.Errorf("error = %q, want it to start %q and say the writer is gone", msg, want)
	}
	reader.Close()

	// A writer holds the lock and has not recorded itself yet (its
	// record is still the killed one's): a reader is told so.
	w, err := Open(path, statefile.Options{Command: "apply"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	dead := statefile.Holder{PID: child.Process.Pid, Host: hostname(t), Command: "apply", Started: time.Now().UTC()}
	if err := writeHolder(path, dead); err != nil {
		t.Fatal(err)
	}
	_, err = Open(path, statefile.Options{ReadOnly: true, Command: "show"})
	if err == nil || !strings.Contains(err.Error(), "is locked by a genform process writing it that has just taken the lock (the writer recorded before it, \"genform apply\"") {
		t.Errorf("a reader beside a writer not yet recorded: %v", err)
	}
}

// TestHolderWithAReusedPID checks that a holder record whose pid runs,
// but in a process started after the record was written, is taken for
// what it is: the pid reused, the writer gone.
func TestHolderWithAReusedPID(t *testing.T) {
	if _, ok := processStart(os.Getpid()); !ok {
		t.Skip("no process start times here")
	}
	if at, _ := processStart(os.Getpid()); time.Since(at) < 0 || time.Since(at) > time.Hour {
		t.Fatalf("this process started at %v, it says", at)
	}
	path := filepath.Join(t.TempDir(), "state.db")
	for _, c := range []struct {
		started time.Time
		gone    bool
	}{
		{time.Now().UTC().Truncate(time.Second), false},
		{time.Now().Add(-24 * time.Hour).UTC(), true},
	} {
		h := statefile.Holder{PID: os.Getpid(), Host: hostname(t), Command: "apply", Started: c.started}
		if err := writeHolder(path, h); err != nil {
			t.Fatal(err)
		}
		if got := readHolder(path); got == nil || got.Gone != c.gone {
			t.Errorf("a record of this pid written at %v: %+v, want gone %v", c.started, got, c.gone)
		}
	}
}

func hostname(t *testing.T) string {
	t.Helper()
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestLockTimeout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	first, err := Open(path, statefile.Options{Create: true, Command: "apply"})
	if err != nil {
		t.Fatal(err)
	}
	// flock locks belong to an open file, not a process: a second Open in
	// the same process conflicts like another process would.

	t.Run("0 fails at once", func(t *testing.T) {
		_, err := Open(path, statefile.Options{Command: "plan"})
		var le *statefile.LockedError
		if !errors.As(err, &le) || le.Waited != 0 {
			t.Fatalf("Open = %v, want a LockedError without waiting", err)
		}
		if le.Holder == nil || le.Holder.PID != os.Getpid() || le.Holder.Command != "apply" {
			t.Errorf("holder = %+v", le.Holder)
		}
	})

	t.Run("300ms waits then fails", func(t *testing.T) {
		_, err := Open(path, statefile.Options{Command: "plan", LockTimeout: 300 * time.Millisecond})
		var le *statefile.LockedError
		if !errors.As(err, &le) || le.Waited != 300*time.Millisecond {
			t.Fatalf("Open = %v, want a LockedError after waiting 300ms", err)
		}
		if want := "is still locked by \"genform apply\""; !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
		if want := "after waiting 300ms; wait for it to finish or pass a longer -lock-timeout"; !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	})

	t.Run("waiting succeeds when the holder closes", func(t *testing.T) {
		done := waitingWriter(path)
		// Close only once the other Open has certainly tried and found the
		// lock taken: without waiting it would already have failed.
		time.Sleep(200 * time.Millisecond)
		if err := first.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("waiting Open: %v", err)
		}
	})

	t.Run("released after Close", func(t *testing.T) {
		s, err := Open(path, statefile.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	})
}

func TestLockedErrorWithoutHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	first, err := Open(path, statefile.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	// The holder's info may be missing or half-written by hand; the error
	// still says what to do.
	for _, info := range []string{"", "{not json"} {
		if info == "" {
			os.Remove(path + infoSuffix)
		} else {
			os.WriteFile(path+infoSuffix, []byte(info), 0o600)
		}
		_, err = Open(path, statefile.Options{})
		var le *statefile.LockedError
		if !errors.As(err, &le) || le.Holder != nil {
			t.Fatalf("Open = %v (holder %+v), want a LockedError without holder", err, le)
		}
		want := "state file " + path + " is locked by another genform process, or by commands reading it (show, state list, state show, state pull, output, history, gallery, pull); wait for it to finish or pass -lock-timeout=DURATION"
		if err.Error() != want {
			t.Errorf("error = %q, want %q", err, want)
		}
	}
}
