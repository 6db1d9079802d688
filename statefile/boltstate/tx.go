package boltstate

import (
	"bytes"

	bolt "go.etcd.io/bbolt"

	"github.com/genform/genform/statefile"
)

// bucketRoot holds the layout's buckets, nested in it: the genform/ the
// layout drawing of package statefile starts with. Its presence is what
// makes a bbolt file a genform state file. It is part of the on-disk
// format.
var bucketRoot = []byte("genform")

// rawTx is a bbolt transaction: the layout's buckets are nested in
// bucketRoot.
type rawTx struct{ tx *bolt.Tx }

func (t rawTx) Layout() (statefile.Layout, error) {
	if t.tx.Bucket(bucketRoot) != nil {
		return statefile.LayoutGenform, nil
	}
	l := statefile.LayoutNone
	err := t.tx.ForEach(func([]byte, *bolt.Bucket) error {
		l = statefile.LayoutForeign
		return nil
	})
	return l, err
}

func (t rawTx) Bucket(name []byte) (statefile.Bucket, error) {
	root := t.tx.Bucket(bucketRoot)
	if root == nil {
		return nil, nil
	}
	if b := root.Bucket(name); b != nil {
		bb := bucket{b: b}
		if !t.tx.Writable() {
			bb.mapped = &mapping{data: t.tx.DB().Info().Data, size: t.tx.Size()}
		}
		return bb, nil
	}
	return nil, nil
}

func (t rawTx) CreateBucket(name []byte) (statefile.Bucket, error) {
	root, err := t.tx.CreateBucketIfNotExists(bucketRoot)
	if err != nil {
		return nil, err
	}
	b, err := root.CreateBucketIfNotExists(name)
	if err != nil {
		return nil, err
	}
	return bucket{b: b}, nil
}

// bucket is a bucket of the layout. mapped is where a read-only
// transaction reads the file; nil in a read-write one.
type bucket struct {
	b      *bolt.Bucket
	mapped *mapping
}

// mapping is the range of memory the file is read through.
type mapping struct {
	data uintptr
	size int64
}

func (b bucket) Get(key []byte) ([]byte, error) { return b.b.Get(key), nil }
func (b bucket) Put(key, value []byte) error    { return b.b.Put(key, value) }
func (b bucket) Delete(key []byte) error        { return b.b.Delete(key) }
func (b bucket) Len() (int, error)              { return b.b.Stats().KeyN, nil }

// ForEach calls fn for each key in order. In a read-only transaction the
// pages it has read past are given back as it goes (see releaser): fn must
// not keep k or v, which no Bucket allows anyway.
func (b bucket) ForEach(fn func(k, v []byte) error) error {
	if b.mapped == nil {
		return b.b.ForEach(fn)
	}
	r := newReleaser(b.mapped.data, b.mapped.size)
	defer r.done()
	return b.b.ForEach(func(k, v []byte) error {
		if err := fn(k, v); err != nil {
			return err
		}
		r.passed(v)
		return nil
	})
}

func (b bucket) ForEachPrefix(prefix []byte, fn func(k, v []byte) error) error {
	c := b.b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}
