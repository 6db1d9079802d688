package statefile

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// The tests of this package run the shared layer (records, the named
// operations, the history, migrations, the document) on memBackend, a
// Backend in memory, as database/sql's tests run on a fake driver: this
// package knows no storage, and what is particular to one is tested in its
// own package (boltstate, pgstate), which also runs the conformance suite
// (storetest) on it.
//
// memBackend holds to the seam's contract more strictly than bbolt does:
// every slice it hands out is overwritten when its transaction ends, so a
// caller that keeps one past it reads garbage at once; a write in a
// read-only transaction, or through a Store opened ReadOnly, fails; and a
// second Close fails.

// memData is what a storage holds: each bucket's keys and values, by
// bucket name. nil is a storage without genform's layout.
type memData map[string]map[string][]byte

// clone copies d; the values are never changed in place (Put stores a
// copy), so they are shared.
func (d memData) clone() memData {
	if d == nil {
		return nil
	}
	c := make(memData, len(d))
	for name, b := range d {
		c[name] = maps.Clone(b)
	}
	return c
}

// memState is a storage in memory, as a file or a database holds it: the
// Stores opened on it one after another (reopen) see what those before
// them committed, as commands do.
type memState struct {
	name string
	// database makes it stand for a state in a database, for messages.
	database bool
	// mu is held shared by a read transaction, and exclusively to commit.
	mu sync.RWMutex
	// wmu runs the write transactions one at a time.
	wmu  sync.Mutex
	data memData
	// backups are the copies Migrate kept, by the schema they upgraded
	// from.
	backups map[int]memData
}

// newState returns an empty storage, named after the test.
func newState(t testing.TB) *memState {
	return &memState{name: "mem/" + t.Name(), backups: map[int]memData{}}
}

// open opens the storage as a backend's Open would.
func (st *memState) open(readOnly bool) *memBackend {
	return &memBackend{st: st, readOnly: readOnly}
}

// snapshot is a copy of what the storage holds, for a test to compare.
func (st *memState) snapshot() memData {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return st.data.clone()
}

// edit changes what the storage holds past any Store, as a hand-edited or
// damaged file would: fn gets the buckets to change in place.
func (st *memState) edit(fn func(d memData)) {
	st.wmu.Lock()
	defer st.wmu.Unlock()
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.data == nil {
		st.data = memData{}
	}
	fn(st.data)
}

// memBackend is one Store's Backend on a memState.
type memBackend struct {
	st       *memState
	readOnly bool
	closed   atomic.Bool
}

var errMemClosed = errors.New("the memory state is closed")

func (b *memBackend) Name() string { return b.st.name }

func (b *memBackend) Database() bool { return b.st.database }

func (b *memBackend) View(fn func(RawTx) error) error {
	if b.closed.Load() {
		return errMemClosed
	}
	b.st.mu.RLock()
	defer b.st.mu.RUnlock()
	tx := &memTx{data: b.st.data}
	defer tx.end()
	return fn(tx)
}

func (b *memBackend) Update(fn func(RawTx) error) error { return b.write(fn, -1) }

// Batch runs fn alone, as pgstate's does.
func (b *memBackend) Batch(fn func(RawTx) error) error { return b.write(fn, -1) }

// Migrate keeps a copy of the state as it was once fn has succeeded.
func (b *memBackend) Migrate(from int, fn func(RawTx) error) error { return b.write(fn, from) }

// write runs fn on a copy of the state, and makes the copy the state when
// fn succeeds; a backup of the state before is kept under from, unless
// from is -1.
func (b *memBackend) write(fn func(RawTx) error, from int) error {
	if b.closed.Load() {
		return errMemClosed
	}
	if b.readOnly {
		return errors.New("writing the memory state: opened read-only")
	}
	b.st.wmu.Lock()
	defer b.st.wmu.Unlock()
	old := b.st.data
	tx := &memTx{data: old.clone(), writable: true}
	defer tx.end()
	if err := fn(tx); err != nil {
		return err
	}
	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	b.st.data = tx.data
	if from >= 0 {
		b.st.backups[from] = old
	}
	return nil
}

func (b *memBackend) BeforeWrite() error { return nil }

func (b *memBackend) CheckStorage() ([]error, error) { return nil, nil }

func (b *memBackend) Close() error {
	if !b.closed.CompareAndSwap(false, true) {
		return errors.New("the memory state was closed twice")
	}
	return nil
}

// memTx is one transaction. A writable one works on a copy of the state.
type memTx struct {
	data     memData
	writable bool
	// handed are the slices given out, overwritten by end.
	mu     sync.Mutex
	handed [][]byte
}

// hand returns a copy of v that end overwrites.
func (t *memTx) hand(v []byte) []byte {
	c := make([]byte, len(v))
	copy(c, v)
	t.mu.Lock()
	t.handed = append(t.handed, c)
	t.mu.Unlock()
	return c
}

// end overwrites every slice the transaction gave out.
func (t *memTx) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.handed {
		for i := range c {
			c[i] = 0xAA
		}
	}
	t.handed = nil
}

func (t *memTx) Layout() (Layout, error) {
	if t.data == nil {
		return LayoutNone, nil
	}
	return LayoutGenform, nil
}

func (t *memTx) Bucket(name []byte) (Bucket, error) {
	if _, ok := t.data[string(name)]; !ok {
		return nil, nil
	}
	return &memBucket{t: t, name: string(name)}, nil
}

func (t *memTx) CreateBucket(name []byte) (Bucket, error) {
	if !t.writable {
		return nil, errors.New("creating a bucket in a read-only transaction")
	}
	if t.data == nil {
		t.data = memData{}
	}
	if _, ok := t.data[string(name)]; !ok {
		t.data[string(name)] = map[string][]byte{}
	}
	return &memBucket{t: t, name: string(name)}, nil
}

// memBucket is one bucket of a transaction.
type memBucket struct {
	t    *memTx
	name string
}

func (b *memBucket) m() map[string][]byte { return b.t.data[b.name] }

func (b *memBucket) Get(key []byte) ([]byte, error) {
	v, ok := b.m()[string(key)]
	if !ok {
		return nil, nil
	}
	return b.t.hand(v), nil
}

func (b *memBucket) Put(key, value []byte) error {
	if !b.t.writable {
		return errors.New("writing in a read-only transaction")
	}
	b.m()[string(key)] = append([]byte{}, value...)
	return nil
}

func (b *memBucket) Delete(key []byte) error {
	if !b.t.writable {
		return errors.New("deleting in a read-only transaction")
	}
	delete(b.m(), string(key))
	return nil
}

func (b *memBucket) ForEach(fn func(k, v []byte) error) error {
	return b.ForEachPrefix(nil, fn)
}

func (b *memBucket) ForEachPrefix(prefix []byte, fn func(k, v []byte) error) error {
	m := b.m()
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v, ok := m[k]
		if !ok || !strings.HasPrefix(k, string(prefix)) {
			continue
		}
		if err := fn(b.t.hand([]byte(k)), b.t.hand(v)); err != nil {
			return err
		}
	}
	return nil
}

func (b *memBucket) Len() (int, error) { return len(b.m()), nil }

// openMem opens a Store on st, as a backend's Open does.
func openMem(st *memState, opts Options) (*Store, error) {
	return OpenBackend(st.open(opts.ReadOnly), opts)
}

// memOf is the storage a Store opened by openMem runs on.
func memOf(s *Store) *memState { return s.be.(*memBackend).st }

// TestMemBackendOverwritesWhatItHandsOut checks the stricter contract
// these tests rely on: a value read in a transaction is overwritten once
// the transaction ends, and a read-only one writes nothing.
func TestMemBackendOverwritesWhatItHandsOut(t *testing.T) {
	st := newState(t)
	be := st.open(false)
	err := be.Update(func(tx RawTx) error {
		b, err := tx.CreateBucket([]byte("b"))
		if err != nil {
			return err
		}
		return b.Put([]byte("k"), []byte("value"))
	})
	if err != nil {
		t.Fatal(err)
	}
	var kept []byte
	err = be.View(func(tx RawTx) error {
		b, err := tx.Bucket([]byte("b"))
		if err != nil || b == nil {
			t.Fatalf("bucket: %v, %v", b, err)
		}
		if kept, err = b.Get([]byte("k")); err != nil || string(kept) != "value" {
			t.Fatalf("Get = %q, %v", kept, err)
		}
		if err := b.Put([]byte("k"), []byte("x")); err == nil {
			t.Error("a read-only transaction wrote")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if string(kept) == "value" {
		t.Error("a value kept past its transaction still reads")
	}
	if err := be.Close(); err != nil {
		t.Fatal(err)
	}
	if err := be.Close(); err == nil {
		t.Error("a second Close succeeded")
	}
}
