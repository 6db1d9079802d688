package boltstate

import (
	"errors"
	"fmt"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"

	"github.com/genform/genform/statefile"
)

// verify checks the file's page structure once, before the Store first
// writes to it, with bbolt's own consistency check (tx.Check), which also
// compares the freelist with the pages in use. A write to a file whose
// freelist names a page still in use would reuse that page and spread the
// damage to records that read well now; reads need no such check, since
// guard turns whatever they trip over into an error. It costs a walk of
// the whole file, once per command that writes, and nothing for one that
// only reads.
func (b *backend) verify() error {
	b.verifyOnce.Do(func() {
		problems, err := b.CheckStorage()
		switch {
		case err != nil:
			b.verifyErr = err
		case len(problems) > 0:
			ce := &statefile.CorruptError{Path: b.path, Err: fmt.Errorf("bbolt's consistency check finds %d problem(s), the first: %w", len(problems), problems[0])}
			nameBackup(ce, b.path)
			b.verifyErr = ce
		}
	})
	return b.verifyErr
}

// checkPages runs bbolt's consistency check in tx and returns the problems
// it finds. It must run under guard: it first reads every page the check
// will read (see touchAll).
func checkPages(tx *bolt.Tx) ([]error, error) {
	if err := touchAll(tx); err != nil {
		return nil, err
	}
	var problems []error
	for err := range tx.Check() {
		problems = append(problems, err)
	}
	return problems, nil
}

// touchAll reads every key and value of every bucket in tx. tx.Check walks
// the pages in a goroutine of its own, where guard's recover does not
// reach and a fault would kill the process: a page number that leads
// outside the file must fault here first, where guard turns it into an
// error.
func touchAll(tx *bolt.Tx) error {
	var sum byte
	var walk func(b *bolt.Bucket) error
	walk = func(b *bolt.Bucket) error {
		return b.ForEach(func(k, v []byte) error {
			sum ^= touch(k)
			if v != nil {
				sum ^= touch(v)
				return nil
			}
			child := b.Bucket(k)
			if child == nil {
				return errors.New("a bucket entry that opens no bucket")
			}
			return walk(child)
		})
	}
	err := tx.ForEach(func(_ []byte, b *bolt.Bucket) error { return walk(b) })
	touched.Add(uint32(sum)) // so that the reads are not optimised away
	return err
}

// touched keeps what touchAll read.
var touched atomic.Uint32

// touch reads a byte of every page b spans.
func touch(b []byte) byte {
	var x byte
	for i := 0; i < len(b); i += minPageSize {
		x ^= b[i]
	}
	if len(b) > 0 {
		x ^= b[len(b)-1]
	}
	return x
}
