package boltstate

import (
	"runtime"
	"testing"
)

// Reading the state for a plan allocates its records and the map that
// indexes them, made at its size: grown a record at a time, the map left
// as much garbage as it holds while the state was read (measured as the
// difference between 2,000 and 1,000 records of four outputs each): 2,682
// bytes a record, 2,782 with the map grown.
func TestPlanSnapshotBytesPerRecord(t *testing.T) {
	measure := func(n int) float64 {
		s := openNew(t)
		fill(t, s, n)
		if _, err := s.PlanSnapshot(); err != nil {
			t.Fatal(err)
		}
		const runs = 3
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			snap, err := s.PlanSnapshot()
			if err != nil || len(snap.Resources) != n {
				t.Fatalf("snapshot of %d records: %v", n, err)
			}
		}
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc-before.TotalAlloc) / runs
	}
	// An address holds its module's (a pointer): a record's keys in the
	// snapshot's maps grew by 8 bytes each.
	const most = 2760
	if per := (measure(2000) - measure(1000)) / 1000; per > most {
		t.Errorf("reading a record for a plan allocates %.0f bytes, more than %d", per, most)
	}
}
