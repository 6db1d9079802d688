package statefile

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"
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

// TestAddressesWithADamagedRecord lists addresses even when a record no
// longer decodes, so the damaged one can be named and removed.
func TestAddressesWithADamagedRecord(t *testing.T) {
	s := openNew(t)
	if err := s.Update(func(tx *Tx) error {
		if err := tx.PutResource(sampleResource("image.a", 1)); err != nil {
			return err
		}
		return tx.PutIntent(&Intent{Addr: "image.b", Fingerprint: "f"})
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketRoot).Bucket(bucketResources).Put([]byte("image.a"), []byte{0x08, 0x01, 0x12, 0xff})
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Snapshot(); err == nil {
		t.Fatal("the damaged record should make Snapshot fail")
	}
	res, in, err := s.Addresses()
	if err != nil || len(res) != 1 || res[0] != "image.a" || len(in) != 1 || in[0] != "image.b" {
		t.Fatalf("Addresses: %v %v %v", res, in, err)
	}
	if err := s.Update(func(tx *Tx) error { return tx.DeleteResource("image.a") }); err != nil {
		t.Errorf("deleting the damaged record: %v", err)
	}
}
