package statefile

import (
	"errors"
	"fmt"
	"time"
)

// The storage seam. A Store keeps its records in a Backend: buckets of
// key-ordered byte values read and written in transactions. Everything
// above that (the layout, record encoding and validation, the history, the
// named operations, schema migrations) is this package's shared code, so
// every backend stores the same bytes under the same keys and is upgraded
// by the same migrations. What is particular to one storage stays in its
// backend's package: for the bbolt file (package boltstate) its lock, the
// guard against its panics on a damaged page, its page check and the
// backup taken before a migration; for PostgreSQL (package pgstate) its
// connection, advisory lock and tables.

// Backend is a transactional store of buckets, as one Store uses it. A
// Backend is opened (and its lock taken) by its own package and handed to
// OpenBackend, which owns it from then on. Its methods may be called from
// several goroutines; a backend that cannot run transactions in parallel
// runs them one at a time.
type Backend interface {
	// Name names the storage in messages: the file's path, or the
	// database and schema. It must not hold a password.
	Name() string
	// Database reports whether the storage is a database rather than a
	// file: messages then call it the state, not the state file.
	Database() bool
	// View runs fn in a read-only transaction that sees one consistent
	// state.
	View(fn func(RawTx) error) error
	// Update runs fn in a read-write transaction and commits it, durably,
	// when fn returns nil; it rolls back when fn returns an error or
	// panics, and returns fn's error as is.
	Update(fn func(RawTx) error) error
	// Batch is Update for calls made by many goroutines at once; it may
	// coalesce them into one transaction, and then calls fn again alone
	// when the transaction fails, so fn must only write what it is given.
	Batch(fn func(RawTx) error) error
	// Migrate runs fn, which upgrades the layout from schema from, in one
	// read-write transaction, keeping whatever copy of the old state the
	// storage keeps before an upgrade.
	Migrate(from int, fn func(RawTx) error) error
	// BeforeWrite is called before the Store's first write; an error
	// refuses every write (a damaged file).
	BeforeWrite() error
	// CheckStorage checks the storage beneath the records (bbolt's page
	// structure) and returns the problems it finds.
	CheckStorage() ([]error, error)
	// Close releases the lock and the storage. The Store calls it once.
	Close() error
}

// Layout says what a backend holds.
type Layout int

const (
	// LayoutNone is an empty storage: no genform state yet.
	LayoutNone Layout = iota
	// LayoutForeign is a storage that holds something else than a
	// genform state.
	LayoutForeign
	// LayoutGenform is a storage holding genform's buckets.
	LayoutGenform
)

// RawTx is one transaction of a Backend, valid only inside the function
// it was given to.
type RawTx interface {
	// Layout says whether the storage holds genform's buckets.
	Layout() (Layout, error)
	// Bucket returns the named bucket of the layout, or nil, nil when it
	// does not exist.
	Bucket(name []byte) (Bucket, error)
	// CreateBucket returns the named bucket, creating it (and whatever
	// holds the layout) when it does not exist. Write transactions only.
	CreateBucket(name []byte) (Bucket, error)
}

// Bucket is an ordered map of byte keys to byte values. Keys are ordered
// as bytes. The slices a Bucket returns are valid only inside the
// transaction.
type Bucket interface {
	// Get returns the value under key, or nil when there is none.
	Get(key []byte) ([]byte, error)
	// Put stores value under key.
	Put(key, value []byte) error
	// Delete removes key; removing a missing key does nothing.
	Delete(key []byte) error
	// ForEach calls fn for every key in order, stopping at fn's first
	// error. A nil value stands for something that is not a value (a
	// nested bbolt bucket, which only damage puts there).
	ForEach(fn func(k, v []byte) error) error
	// ForEachPrefix is ForEach for the keys that start with prefix.
	ForEachPrefix(prefix []byte, fn func(k, v []byte) error) error
	// Len is the number of keys.
	Len() (int, error)
}

// errUnchanged rolls back an Update whose function changed nothing: it is
// not committed and does not raise the serial.
var errUnchanged = errors.New("statefile: nothing changed")

// OpenBackend opens the state a backend holds, which it owns from then on
// (closing it on failure): it creates the layout in an empty storage when
// opts.Create is set, upgrades an older one, and refuses a newer or
// foreign one. The backend's package calls it from its own Open, once the
// backend has taken its lock, so of opts only Create and ReadOnly matter
// here.
func OpenBackend(be Backend, opts Options) (*Store, error) {
	if opts.ReadOnly && opts.Create {
		be.Close()
		return nil, fmt.Errorf("opening state %s: a state opened read-only cannot be created", be.Name())
	}
	s := &Store{path: be.Name(), be: be, readOnly: opts.ReadOnly, database: be.Database(), now: time.Now}
	if err := s.init(opts.Create); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// bucketNames are the buckets of the layout, as begin finds them.
var bucketNames = [][]byte{bucketMeta, bucketResources, bucketIntents, bucketProtections, bucketHistory}
