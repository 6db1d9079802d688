package boltstate

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/genform/genform/statefile"
)

// mappedKB is how much of the file at path this process has resident
// through its mappings, from /proc/self/smaps.
func mappedKB(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps:", err)
	}
	defer f.Close()
	total, in := 0, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if fields := strings.Fields(line); len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			in = strings.HasSuffix(line, path)
			continue
		}
		if in && strings.HasPrefix(line, "Rss:") {
			kb, _ := strconv.Atoi(strings.Fields(line)[1])
			total += kb
		}
	}
	return total
}

// Reading every record gives the file's pages back as it goes: once
// Snapshot has returned, with the store still open, little of the file is
// resident, where bbolt alone would keep every page read (and those the
// kernel mapped around them). The records read are whole.
func TestSnapshotGivesBackTheFilesPages(t *testing.T) {
	path := filledFile(t, 6000)
	s, err := Open(path, statefile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := s.PlanSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Resources) != 6000 {
		t.Fatalf("%d resources read, want 6000", len(snap.Resources))
	}
	for _, r := range snap.Resources {
		if len(r.Outputs) != 4 || r.Fingerprint == "" || r.Detail != nil {
			t.Fatalf("record read as %+v", r)
		}
	}
	resident := mappedKB(t, path)
	if limit := int(fi.Size()/1024) / 8; resident > limit {
		t.Errorf("%d KB of the %d KB file still resident after the snapshot, want at most %d", resident, fi.Size()/1024, limit)
	}
	// A read-write transaction's values may be heap memory: its buckets
	// give nothing back (the advice would zero them). A read-only one's
	// do.
	s.Close()
	be := openBackend(t, path, statefile.Options{})
	for _, run := range []func(func(statefile.RawTx) error) error{be.Update, be.View} {
		err = run(func(tx statefile.RawTx) error {
			b, err := tx.Bucket(bucketResources)
			if err != nil {
				return err
			}
			writable := tx.(rawTx).tx.Writable()
			if bb, ok := b.(bucket); !ok || (bb.mapped == nil) != writable {
				t.Errorf("a bucket of a transaction writable %v is %#v", writable, b)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
