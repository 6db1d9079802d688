package statefile

import (
	"encoding/json"
	"fmt"
	"testing"
)

// fill records n resources with four outputs each, as a state after an
// apply of n images would hold.
func fill(b testing.TB, s *Store, n int) {
	b.Helper()
	const batch = 2000
	for start := 0; start < n; start += batch {
		err := s.Update(func(tx *Tx) error {
			for i := start; i < min(start+batch, n); i++ {
				if err := tx.Record(sampleResource(fmt.Sprintf("image.hero[%d]", i), 4)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeResource measures decoding one resource record with four
// outputs.
func BenchmarkDecodeResource(b *testing.B) {
	r := sampleResource("image.hero[0]", 4)
	key, rec := []byte(r.Addr.String()), encodeResource(r)
	b.SetBytes(int64(len(rec)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeResource(key, rec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeResourceJSON decodes the same resource with encoding/json,
// the format this package does not use: it is here to keep the reason
// checkable (see wire.go).
func BenchmarkDecodeResourceJSON(b *testing.B) {
	rec, err := json.Marshal(sampleResource("image.hero[0]", 4))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(rec)))
	b.ReportAllocs()
	for b.Loop() {
		var r Resource
		if err := json.Unmarshal(rec, &r); err != nil {
			b.Fatal(err)
		}
	}
}
