package boltstate

import (
	"fmt"
	"testing"

	"github.com/genform/genform/statefile"
)

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
	path := filledFile(b, 10000)
	for b.Loop() {
		s, err := Open(path, statefile.Options{})
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
		if err := s.Update(func(tx *statefile.Tx) error { return tx.Record(r) }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify10k measures the check of the page structure a command
// that writes pays once, before its first write, on a state of 10,000
// resources.
func BenchmarkVerify10k(b *testing.B) {
	path := filledFile(b, 10000)
	for b.Loop() {
		be, _, err := open(path, statefile.Options{})
		if err != nil {
			b.Fatal(err)
		}
		s, err := statefile.OpenBackend(be, statefile.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := be.verify(); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}
