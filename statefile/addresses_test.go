package statefile

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/genform/genform/internal/addrs"
)

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
