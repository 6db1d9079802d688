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

// BenchmarkSnapshot10k measures what a no-op plan of 10,000 resources pays
// to read the state.
func BenchmarkSnapshot10k(b *testing.B) {
	s := openNew(b)
	fill(b, s, 10000)
	b.ReportAllocs()
	for b.Loop() {
		snap, err := s.Snapshot()
		if err != nil {
			b.Fatal(err)
		}
		if len(snap.Resources) != 10000 {
			b.Fatalf("%d resources", len(snap.Resources))
		}
	}
}

// BenchmarkOpen10k measures opening (locking, checking) a state file of
// 10,000 resources, which every command pays once.
func BenchmarkOpen10k(b *testing.B) {
	s := openNew(b)
	fill(b, s, 10000)
	path := s.Path()
	s.Close()
	for b.Loop() {
		s, err := Open(path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

// BenchmarkUpdate measures one apply step: one record written and
// committed with fsync.
func BenchmarkUpdate(b *testing.B) {
	s := openNew(b)
	fill(b, s, 1000)
	r := sampleResource("image.hero[0]", 4)
	b.ReportAllocs()
	for b.Loop() {
		r.Status = fmt.Sprint(b.N)
		if err := s.Update(func(tx *Tx) error { return tx.Record(r) }); err != nil {
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

// BenchmarkVerify10k measures the check of the page structure a command
// that writes pays once, before its first write, on a state of 10,000
// resources.
func BenchmarkVerify10k(b *testing.B) {
	s := openNew(b)
	fill(b, s, 10000)
	path := s.Path()
	s.Close()
	for b.Loop() {
		s, err := Open(path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.be.(*boltBackend).verify(); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}
