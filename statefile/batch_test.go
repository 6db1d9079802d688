package statefile

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/genform/genform/internal/addrs"
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
				if err := tx.Record(sampleResource(addr, 2)); err != nil {
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
		_, got := snap.Resources[a(addr)]
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

// TestAddressesWithADamagedRecord lists addresses even when a record no
// longer decodes, so the damaged one can be named and forgotten. A key that
// is no address is left out.
func TestAddressesWithADamagedRecord(t *testing.T) {
	s := openNew(t)
	if err := s.Update(func(tx *Tx) error {
		if err := tx.Record(sampleResource("image.a", 1)); err != nil {
			return err
		}
		return tx.RecordIntent(intent("image.b", ""))
	}); err != nil {
		t.Fatal(err)
	}
	rawPut(t, s, bucketResources, "image.a", []byte{0x08, 0x01, 0x12, 0xff})
	rawPut(t, s, bucketResources, "not an address", []byte{0xff})
	if _, err := s.Snapshot(); err == nil {
		t.Fatal("the damaged record should make Snapshot fail")
	}
	res, in, err := s.Addresses()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]addrs.Instance{a("image.a")}, res, cmpAddrs); diff != "" {
		t.Errorf("Addresses: resources (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]addrs.Instance{a("image.b")}, in, cmpAddrs); diff != "" {
		t.Errorf("Addresses: intents (-want +got):\n%s", diff)
	}
	var f Forgotten
	if err := s.Update(func(tx *Tx) (err error) { f, err = tx.Forget(a("image.a")); return err }); err != nil {
		t.Errorf("forgetting the damaged record: %v", err)
	}
	if !f.Record || f.Intent {
		t.Errorf("Forget = %+v, want the record only", f)
	}
	if res, _, _ := s.Addresses(); len(res) != 0 {
		t.Errorf("Addresses after Forget: %v", res)
	}
}
