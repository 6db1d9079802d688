package boltstate

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/genform/genform/statefile"
)

// A writer that says it makes copies and does not answer (it hangs, or
// holds the lock without being a genform of this build) keeps a reader
// waiting copyWait at most; then the reader waits for the lock as before,
// up to -lock-timeout, and is refused naming the holder.
func TestNoAnswerFallsBackToTheLock(t *testing.T) {
	defer func(w time.Duration) { copyWait = w }(copyWait)
	copyWait = 300 * time.Millisecond
	path, _ := currentFile(t)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	h := statefile.Holder{PID: os.Getpid(), Host: hostname(t), Command: "apply", Started: time.Now().UTC().Truncate(time.Second)}
	if err := writeHolder(path, h); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = Open(path, statefile.Options{ReadOnly: true, Command: "show"})
	var le *statefile.LockedError
	if !errors.As(err, &le) || le.Holder == nil || le.Holder.Command != "apply" {
		t.Fatalf("a reader nobody answers: %v, want a LockedError naming the holder", err)
	}
	if d := time.Since(start); d < copyWait || d > copyWait+time.Second {
		t.Errorf("refused after %v, want after copyWait (%v)", d, copyWait)
	}
	// With a -lock-timeout longer than copyWait, it gets the lock once the
	// holder lets go.
	fd := int(f.Fd())
	unlocked := make(chan struct{})
	go func() {
		defer close(unlocked)
		time.Sleep(2 * copyWait)
		syscall.Flock(fd, syscall.LOCK_UN)
	}()
	r, err := Open(path, statefile.Options{ReadOnly: true, LockTimeout: time.Minute})
	<-unlocked
	if err != nil {
		t.Fatalf("waiting for the lock after no answer: %v", err)
	}
	r.Close()
}

// A FIFO at the copy's place is refused, not opened: opening one waits
// for a writer that never comes.
func TestCopyFIFORefused(t *testing.T) {
	path, _ := writerOnCurrentFile(t)
	if err := syscall.Mkfifo(path+copySuffix, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Open(path, statefile.Options{ReadOnly: true})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "is not a regular file") {
			t.Errorf("a reader beside a FIFO at the copy's place: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the reader hangs on the FIFO")
	}
}

// A reader in a checkout it cannot write to (a read-only mount of the
// directory a writer works in) cannot ask for a copy: it does as before,
// refused at once naming the writer, and writes nothing.
func TestReadOnlyDirectoryFallsBack(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rw", "state.db")
	holdLock(t, path, helperRecordsEnv+"=3")
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount(filepath.Dir(path), ro, "", syscall.MS_BIND, ""); err != nil {
		t.Skipf("cannot mount here (needs root): %v", err)
	}
	defer syscall.Unmount(ro, syscall.MNT_DETACH)
	if err := syscall.Mount("", ro, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("cannot remount read-only here: %v", err)
	}
	before := dirNames(t, ro)
	start := time.Now()
	_, err := Open(filepath.Join(ro, "state.db"), statefile.Options{ReadOnly: true, Command: "show"})
	var le *statefile.LockedError
	if !errors.As(err, &le) || le.Holder == nil || le.Holder.Command != "apply" {
		t.Fatalf("a reader of a read-only checkout beside a writer: %v, want a LockedError naming it", err)
	}
	if d := time.Since(start); d > recordWait {
		t.Errorf("refused after %v, want at once", d)
	}
	if got := dirNames(t, ro); !slices.Equal(got, before) {
		t.Errorf("the directory changed: %v, was %v", got, before)
	}
	if _, err := os.Lstat(path + requestSuffix); !errors.Is(err, fs.ErrNotExist) {
		t.Error("a request appeared")
	}
}
