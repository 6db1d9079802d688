package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// holdSyncs replaces syncFS for the test: every sync reports on started
// and waits for a value on release (nil: sync for real) before it
// returns.
func holdSyncs(t *testing.T) (started chan int, release chan error) {
	t.Helper()
	started, release = make(chan int, 1000), make(chan error)
	var mu sync.Mutex
	n := 0
	real := syncFS
	syncFS = func(dir string) error {
		mu.Lock()
		n++
		i := n
		mu.Unlock()
		started <- i
		if err := <-release; err != nil {
			return err
		}
		return real(dir)
	}
	t.Cleanup(func() { syncFS = real })
	return started, release
}

// TestGroupWaitsForASyncStartedAfterIt: a writer that asks while a sync
// runs is not covered by that sync, which may have started before its
// bytes were written, but by the next one; the writers that queued behind
// a sync all share the next.
func TestGroupWaitsForASyncStartedAfterIt(t *testing.T) {
	dir := t.TempDir()
	started, release := holdSyncs(t)
	var g Group
	const dev = 1

	first := make(chan error, 1)
	go func() { first <- g.sync(dev, dir) }()
	if n := <-started; n != 1 {
		t.Fatalf("sync %d started first", n)
	}
	// Sync 1 is running; these must not be answered by it.
	const queued = 20
	answers := make(chan error, queued)
	for range queued {
		go func() { answers <- g.sync(dev, dir) }()
	}
	waitQueued(t, &g, dev, queued)
	release <- nil
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-answers:
		t.Fatalf("a writer queued behind sync 1 was answered by it (%v)", err)
	default:
	}
	// One more sync covers all of them, and fails for all of them.
	if n := <-started; n != 2 {
		t.Fatalf("sync %d started second", n)
	}
	boom := errors.New("write-back failed")
	release <- boom
	for range queued {
		if err := <-answers; !errors.Is(err, boom) {
			t.Fatalf("a writer covered by the failed sync got %v", err)
		}
	}
	select {
	case n := <-started:
		t.Fatalf("sync %d started for writers already covered", n)
	default:
	}
	// A writer arriving when the group is idle syncs at once, alone, and
	// is not told of an earlier failure.
	go func() { first <- g.sync(dev, dir) }()
	if n := <-started; n != 3 {
		t.Fatalf("sync %d started third", n)
	}
	release <- nil
	if err := <-first; err != nil {
		t.Fatalf("a sync that worked reported %v", err)
	}
}

// waitQueued waits until n writers wait on the group's sync of dev.
func waitQueued(t *testing.T, g *Group, dev uint64, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		g.mu.Lock()
		w := g.fss[dev].waiting
		g.mu.Unlock()
		if w >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d writers of %d queued", w, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestGroupWritesTogether: concurrent writes through a group all land
// whole, with a handful of file-system syncs where alone they would make
// two syncs each. Every sync is held until all the other writers still
// writing wait for one, so that the count does not depend on how the
// scheduler happens to run them.
func TestGroupWritesTogether(t *testing.T) {
	dir := t.TempDir()
	started, release := holdSyncs(t)
	var g Group
	const writers = 64
	var finished sync.WaitGroup
	var mu sync.Mutex
	done := 0
	errs := make(chan error, writers)
	for i := range writers {
		finished.Add(1)
		go func() {
			defer finished.Done()
			err := WriteFile(filepath.Join(dir, fmt.Sprintf("%d.png", i)), []byte(strings.Repeat(fmt.Sprint(i), 1000)), 0o644, InGroup(&g))
			mu.Lock()
			done++
			mu.Unlock()
			errs <- err
		}()
	}
	go func() {
		for range started {
			// The writer running this sync is neither done nor waiting.
			deadline := time.Now().Add(10 * time.Second)
			for {
				mu.Lock()
				d := done
				mu.Unlock()
				g.mu.Lock()
				w := 0
				for _, fs := range g.fss {
					w += fs.waiting
				}
				g.mu.Unlock()
				if w+d >= writers-1 || time.Now().After(deadline) {
					break
				}
				time.Sleep(100 * time.Microsecond)
			}
			release <- nil
		}
	}()
	finished.Wait()
	close(started)
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i := range writers {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d.png", i)))
		if err != nil || string(b) != strings.Repeat(fmt.Sprint(i), 1000) {
			t.Fatalf("file %d: %v, %.20q", i, err, b)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != writers {
		t.Fatalf("%d entries in the directory, want %d: temporary files left", len(entries), writers)
	}
	if n := g.fss[onlyDevice(t, &g)].started; n > 6 {
		t.Errorf("%d writers made %d syncs; alone they make %d", writers, n, 2*writers)
	} else {
		t.Logf("%d writers, %d syncs", writers, n)
	}
}

func onlyDevice(t *testing.T, g *Group) uint64 {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.fss) != 1 {
		t.Fatalf("the group syncs %d file systems", len(g.fss))
	}
	for dev := range g.fss {
		return dev
	}
	return 0
}

// TestGroupSyncFailure: a sync that fails before the rename leaves the
// target as it was and no temporary file; one that fails after it says
// that the new file is in place but its rename may not survive a crash.
func TestGroupSyncFailure(t *testing.T) {
	for _, tc := range []struct {
		name     string
		failing  int // which of the write's two syncs fails
		wantErr  string
		wantFile string
	}{
		{"before the rename", 1, "syncing: write-back failed", "old"},
		{"after the rename", 2, "syncing its directory: write-back failed", "new"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "0.png")
			if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			started, release := holdSyncs(t)
			go func() {
				for n := range started {
					if n == tc.failing {
						release <- errors.New("write-back failed")
					} else {
						release <- nil
					}
				}
			}()
			var g Group
			err := WriteFile(path, []byte("new"), 0o644, InGroup(&g))
			close(started)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), path) {
				t.Fatalf("got %v, want an error naming %s and %q", err, path, tc.wantErr)
			}
			b, _ := os.ReadFile(path)
			if string(b) != tc.wantFile {
				t.Errorf("the target holds %q, want %q", b, tc.wantFile)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Errorf("%d entries in the directory: a temporary file was left", len(entries))
			}
		})
	}
}

// TestGroupWriteIsAnOrdinaryWrite: a write through an idle group is the
// same write as without one, streamed bytes and permissions included.
func TestGroupWriteIsAnOrdinaryWrite(t *testing.T) {
	dir := t.TempDir()
	var g Group
	path := filepath.Join(dir, "out.bin")
	err := Write(path, 0o640, func(w io.Writer) error {
		for range 100 {
			if _, err := io.WriteString(w, "0123456789"); err != nil {
				return err
			}
		}
		return nil
	}, InGroup(&g))
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Size() != 1000 || fi.Mode().Perm() != 0o640 {
		t.Fatalf("got %v, %v", fi, err)
	}
	if n := g.Syncs(); n != 2 {
		t.Errorf("a lone write made %d syncs, want 2 (its bytes, then its rename)", n)
	}
}
