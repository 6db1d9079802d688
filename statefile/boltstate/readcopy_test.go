package boltstate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/genform/genform/statefile"
	"github.com/genform/genform/statefile/filetest"
)

// heroes is what fill records: image.hero[0] to image.hero[n-1], in order.
func heroes(n int) []string {
	var names []string
	for i := range n {
		names = append(names, fmt.Sprintf("image.hero[%d]", i))
	}
	slices.Sort(names)
	return names
}

// A reader opening the state while a writer of another process holds it,
// in the middle of a transaction, reads at once exactly what the writer
// has committed, through the copy the writer makes for it; beside the
// state it writes nothing but its request. Once the writer lets go, no
// copy or request is left.
func TestReaderBesideWriterOfAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".genform", "state.db")
	_, release := holdLock(t, path, helperRecordsEnv+"=50")
	dir := filepath.Dir(path)

	start := time.Now()
	r, err := Open(path, statefile.Options{ReadOnly: true, Command: "state list"})
	if err != nil {
		t.Fatalf("a reader beside a writer: %v", err)
	}
	if d := time.Since(start); d > copyWait/2 {
		t.Errorf("the reader waited %v for its copy", d)
	}
	if got := resourceNames(t, r); !slices.Equal(got, heroes(50)) {
		t.Errorf("the reader sees %d resources (%v...), want the 50 committed and not image.pending", len(got), got[:min(3, len(got))])
	}
	if err := r.Update(func(tx *statefile.Tx) error { return tx.Protect(a("image.hero[0]"), true) }); err == nil {
		t.Error("a reader of a copy wrote")
	}
	allowed := []string{"state.db", "state.db" + infoSuffix, "state.db" + copySuffix, "state.db" + requestSuffix}
	for _, name := range dirNames(t, dir) {
		if !slices.Contains(allowed, name) {
			t.Errorf("%s appeared beside the state", name)
		}
	}
	release()
	// The reader reads its copy to its end, though the writer removed it.
	if got := resourceNames(t, r); len(got) != 50 {
		t.Errorf("after the writer let go, the reader sees %d resources", len(got))
	}
	r.Close()
	if got := dirNames(t, dir); !slices.Equal(got, []string{"state.db"}) {
		t.Errorf("left beside the state: %v", got)
	}
}

// A reader never reads a copy older than the state it asked about: not the
// copy made for an earlier reader before the writer committed more, and
// not one a writer killed before left behind, which the next writer
// removes, with the temporary file of a copy it was writing.
func TestStaleCopyNeverRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	child, _ := holdLock(t, path, helperRecordsEnv+"=5")
	r, err := Open(path, statefile.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := resourceNames(t, r); !slices.Equal(got, heroes(5)) {
		t.Fatalf("first reader: %v", got)
	}
	r.Close()
	stale := filetest.ReadFile(t, path+copySuffix)
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	if _, err := os.Lstat(path + copySuffix); err != nil {
		t.Fatalf("the killed writer's copy: %v, want it left behind", err)
	}
	tmp := path + copyTemp + "12345.tmp"
	write(t, tmp, stale[:4096])

	w, err := Open(path, statefile.Options{Command: "apply"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, p := range []string{path + copySuffix, tmp} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the next writer left %s: %v", p, err)
		}
	}
	more := func(name string) {
		t.Helper()
		if err := w.Update(func(tx *statefile.Tx) error { return tx.Record(sampleResource(name, 1)) }); err != nil {
			t.Fatal(err)
		}
	}
	more("image.more[0]")
	// The killed writer's copy, back in place: older than the state.
	write(t, path+copySuffix, stale)
	r, err = Open(path, statefile.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := resourceNames(t, r); len(got) != 6 || !slices.Contains(got, "image.more[0]") {
		t.Errorf("a reader beside a stale copy sees %v", got)
	}
	r.Close()
	// The copy made for that reader, after another commit.
	more("image.more[1]")
	r, err = Open(path, statefile.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := resourceNames(t, r); len(got) != 7 || !slices.Contains(got, "image.more[1]") {
		t.Errorf("a reader after another commit sees %v", got)
	}
	r.Close()
}

// A writer that has not committed since its last copy answers the next
// request with that copy, without writing another.
func TestCopyReusedUntilACommit(t *testing.T) {
	path, w := writerOnCurrentFile(t)
	ino := func() os.FileInfo {
		t.Helper()
		r, err := Open(path, statefile.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		fi, err := os.Lstat(path + copySuffix)
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	first := ino()
	if !os.SameFile(first, ino()) {
		t.Error("a second copy was written with nothing committed")
	}
	if err := w.Update(func(tx *statefile.Tx) error { return tx.Protect(a("image.hero"), true) }); err != nil {
		t.Fatal(err)
	}
	if os.SameFile(first, ino()) {
		t.Error("no new copy after a commit")
	}
}

// A link planted where the copy or the request goes is refused by the
// reader, naming it, and neither the reader nor the writer writes through
// it or removes it.
func TestCopyLinksRefused(t *testing.T) {
	path, _ := currentFile(t)
	dir := t.TempDir()
	target := filepath.Join(dir, "elsewhere")
	write(t, target, []byte("not yours"))
	w, err := Open(path, statefile.Options{Command: "apply"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, c := range []struct{ at, what, to string }{
		{path + copySuffix, "the copy of the state file made for readers", target},
		{path + requestSuffix, "the request for a copy of the state file", target},
		{path + requestSuffix, "the request for a copy of the state file", filepath.Join(dir, "missing")},
	} {
		symlink(t, c.to, c.at)
		_, err := Open(path, statefile.Options{ReadOnly: true})
		if want := c.what + " " + c.at + " is a symbolic link"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a reader beside a link at %s: %v, want %q", c.at, err, want)
		}
		// Give the writer the time to answer a request, were there one.
		time.Sleep(2 * copyPoll)
		if fi, err := os.Lstat(c.at); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("the link at %s was removed or replaced: %v", c.at, err)
		}
		if got := filetest.ReadFile(t, target); string(got) != "not yours" {
			t.Errorf("written through the link: %q", got)
		}
		if _, err := os.Lstat(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
			t.Error("a file was created through the dangling link")
		}
		os.Remove(c.at)
	}
	// With a request pending (a reader's, since refused), a link at the
	// copy's place is not replaced by the writer either.
	write(t, path+requestSuffix, nil)
	symlink(t, target, path+copySuffix)
	time.Sleep(3 * copyPoll)
	if fi, err := os.Lstat(path + copySuffix); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the writer replaced the link at the copy's place: %v", err)
	}
	if got := filetest.ReadFile(t, target); string(got) != "not yours" {
		t.Errorf("written through the link: %q", got)
	}
}

// A reader finding the lock held by a writer that makes no copies (a
// genform from before them) does as before, at once: it is refused,
// naming the writer, or waits for it with -lock-timeout.
func TestWriterWithoutCopies(t *testing.T) {
	path, _ := currentFile(t)
	w, err := Open(path, statefile.Options{Command: "apply"})
	if err != nil {
		t.Fatal(err)
	}
	h := statefile.Holder{PID: os.Getpid(), Host: hostname(t), Command: "apply", Started: time.Now().UTC().Truncate(time.Second)}
	b, _ := json.Marshal(h) // no read_copies
	write(t, path+infoSuffix, b)
	start := time.Now()
	_, err = Open(path, statefile.Options{ReadOnly: true, Command: "show"})
	var le *statefile.LockedError
	if !errors.As(err, &le) || le.Holder == nil || le.Holder.Command != "apply" {
		t.Fatalf("a reader beside a writer making no copies: %v, want a LockedError naming it", err)
	}
	if d := time.Since(start); d > recordWait {
		t.Errorf("refused after %v, want at once", d)
	}
	if _, err := os.Lstat(path + requestSuffix); !errors.Is(err, fs.ErrNotExist) {
		t.Error("the reader asked a writer that makes no copies for one")
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		w.Close()
	}()
	r, err := Open(path, statefile.Options{ReadOnly: true, LockTimeout: time.Minute})
	if err != nil {
		t.Fatalf("waiting for the writer: %v", err)
	}
	r.Close()
}

// BenchmarkReadCopy100k measures what a writer pays to answer a reader on
// a state of 100,000 resources: one copy of the database written from a
// read transaction and renamed into place (MiB is the copy's size). The writer's commits are not
// held up meanwhile (only one that must grow the file's mapping waits for
// the read transaction to end).
func BenchmarkReadCopy100k(b *testing.B) {
	path := filledFile(b, 100000)
	be := openBackend(b, path, statefile.Options{Command: "apply"})
	be.copier.close() // this benchmark makes the copies itself
	var size int64
	for b.Loop() {
		// Replacing the last copy frees its blocks, which costs about as
		// much again (on ext4); a writer's first copy replaces none.
		b.StopTimer()
		os.Remove(path + copySuffix)
		b.StartTimer()
		err := be.db.View(func(tx *bolt.Tx) error {
			fi, err := writeCopy(tx, path)
			if err == nil {
				size = fi.Size()
			}
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(size)/(1<<20), "MiB")
}

// TestCopyIsTheCommittedState checks a copy against the state it was made
// of, as bbolt reads both, and its mode.
func TestCopyIsTheCommittedState(t *testing.T) {
	path := filledFile(t, 300)
	be := openBackend(t, path, statefile.Options{Command: "apply"})
	dump := func(tx *bolt.Tx) []byte {
		var out bytes.Buffer
		root := tx.Bucket(bucketRoot)
		err := root.ForEachBucket(func(name []byte) error {
			return root.Bucket(name).ForEach(func(k, v []byte) error {
				fmt.Fprintf(&out, "%s %s %x\n", name, k, v)
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		return out.Bytes()
	}
	var want []byte
	if err := be.db.View(func(tx *bolt.Tx) error {
		want = dump(tx)
		made, err := writeCopy(tx, path)
		if err == nil && made.Mode().Perm() != 0o600 {
			t.Errorf("the copy's mode is %v, want 0600", made.Mode().Perm())
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path+copySuffix, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.View(func(tx *bolt.Tx) error {
		if got := dump(tx); !bytes.Equal(got, want) || len(want) == 0 {
			t.Errorf("the copy holds %d bytes of records, the state %d", len(got), len(want))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// A reader that asked a writer for a copy, and got the lock instead when
// the writer finished, leaves no request behind: the next writer would
// copy the state for nobody.
func TestReaderLeavesNoRequest(t *testing.T) {
	defer func(p, r time.Duration) { copyPoll, readerPoll = p, r }(copyPoll, readerPoll)
	copyPoll, readerPoll = time.Hour, time.Millisecond // the writer never answers
	path, w := writerOnCurrentFile(t)
	done := make(chan error, 1)
	go func() {
		r, err := Open(path, statefile.Options{ReadOnly: true})
		if err == nil {
			err = r.Close()
		}
		done <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := os.Lstat(path + requestSuffix); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the reader asked for no copy")
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path + requestSuffix); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the request is still there (%v)", err)
	}
}
