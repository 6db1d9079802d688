package statefile

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

// TestBatchConcurrentSteps runs the steps of many parallel jobs through
// Batch, with some steps failing: every successful step is durable after
// reopening, no failed step left anything, and each committed change
// counted the serial up.
func TestBatchConcurrentSteps(t *testing.T) {
	s := openNew(t)
	const n = 60
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			addr := fmt.Sprintf("image.p%02d", i)
			errs[i] = s.Batch(func(tx *Tx) error {
				if err := tx.PutResource(sampleResource(addr, 2)); err != nil {
					return err
				}
				if i%7 == 0 {
					return errors.New("step refused")
				}
				return nil
			})
		}(i)
	}
	wg.Wait()
	s = reopen(t, s)
	snap, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for i := 0; i < n; i++ {
		addr := fmt.Sprintf("image.p%02d", i)
		_, got := snap.Resources[addr]
		if i%7 == 0 {
			if errs[i] == nil || got {
				t.Errorf("%s: failed step returned %v and left a record: %v", addr, errs[i], got)
			}
			continue
		}
		want++
		if errs[i] != nil || !got {
			t.Errorf("%s: Batch returned %v, recorded %v", addr, errs[i], got)
		}
	}
	if snap.Meta.Serial != uint64(want) {
		t.Errorf("serial %d after %d committed steps", snap.Meta.Serial, want)
	}
	if err := s.Check(); err != nil {
		t.Errorf("Check: %v", err)
	}
}
