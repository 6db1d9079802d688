package pgstate

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/genform/genform/statefile"
)

// rawTx is one transaction; tx is nil when the tables do not exist. Each
// statement has its own deadline (backend.roundTrip).
type rawTx struct {
	b  *backend
	tx pgx.Tx
	// buckets are the names in the buckets table, read once.
	buckets map[string]bool
}

func (t *rawTx) loadBuckets() error {
	if t.buckets != nil {
		return nil
	}
	t.buckets = map[string]bool{}
	if t.tx == nil {
		return nil
	}
	ctx, cancel := t.b.roundTrip()
	defer cancel()
	rows, err := t.tx.Query(ctx, "SELECT name FROM "+t.b.table("buckets"))
	if err != nil {
		return err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return err
	}
	for _, n := range names {
		t.buckets[string(n)] = true
	}
	return nil
}

func (t *rawTx) Layout() (statefile.Layout, error) {
	if err := t.loadBuckets(); err != nil {
		return 0, err
	}
	if len(t.buckets) == 0 {
		return statefile.LayoutNone, nil
	}
	return statefile.LayoutGenform, nil
}

func (t *rawTx) Bucket(name []byte) (statefile.Bucket, error) {
	if err := t.loadBuckets(); err != nil {
		return nil, err
	}
	if !t.buckets[string(name)] {
		return nil, nil
	}
	return &bucket{t: t, name: name}, nil
}

func (t *rawTx) CreateBucket(name []byte) (statefile.Bucket, error) {
	if err := t.loadBuckets(); err != nil {
		return nil, err
	}
	if t.tx == nil {
		return nil, errors.New("the state's tables do not exist")
	}
	if !t.buckets[string(name)] {
		ctx, cancel := t.b.roundTrip()
		defer cancel()
		if _, err := t.tx.Exec(ctx, "INSERT INTO "+t.b.table("buckets")+" (name) VALUES ($1) ON CONFLICT DO NOTHING", name); err != nil {
			return nil, err
		}
		t.buckets[string(name)] = true
	}
	return &bucket{t: t, name: name}, nil
}

// bucket is one bucket's rows of the records table.
type bucket struct {
	t    *rawTx
	name []byte
}

func (b *bucket) records() string { return b.t.b.table("records") }

func (b *bucket) Get(key []byte) ([]byte, error) {
	var v []byte
	ctx, cancel := b.t.b.roundTrip()
	defer cancel()
	err := b.t.tx.QueryRow(ctx, "SELECT value FROM "+b.records()+" WHERE bucket = $1 AND key = $2", b.name, key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if v == nil {
		v = []byte{}
	}
	return v, nil
}

func (b *bucket) Put(key, value []byte) error {
	if value == nil {
		value = []byte{}
	}
	ctx, cancel := b.t.b.roundTrip()
	defer cancel()
	_, err := b.t.tx.Exec(ctx, "INSERT INTO "+b.records()+" (bucket, key, value) VALUES ($1, $2, $3) ON CONFLICT (bucket, key) DO UPDATE SET value = excluded.value", b.name, key, value)
	return err
}

func (b *bucket) Delete(key []byte) error {
	ctx, cancel := b.t.b.roundTrip()
	defer cancel()
	_, err := b.t.tx.Exec(ctx, "DELETE FROM "+b.records()+" WHERE bucket = $1 AND key = $2", b.name, key)
	return err
}

func (b *bucket) Len() (int, error) {
	var n int
	ctx, cancel := b.t.b.roundTrip()
	defer cancel()
	err := b.t.tx.QueryRow(ctx, "SELECT count(*) FROM "+b.records()+" WHERE bucket = $1", b.name).Scan(&n)
	return n, err
}

func (b *bucket) ForEach(fn func(k, v []byte) error) error {
	return b.each(fn, "SELECT key, value FROM "+b.records()+" WHERE bucket = $1 ORDER BY key", b.name)
}

func (b *bucket) ForEachPrefix(prefix []byte, fn func(k, v []byte) error) error {
	if end := successor(prefix); end != nil {
		return b.each(fn, "SELECT key, value FROM "+b.records()+" WHERE bucket = $1 AND key >= $2 AND key < $3 ORDER BY key", b.name, prefix, end)
	}
	return b.each(fn, "SELECT key, value FROM "+b.records()+" WHERE bucket = $1 AND key >= $2 ORDER BY key", b.name, prefix)
}

// each reads the rows of one query, then calls fn for each: fn may run
// queries of its own (a migration writes while it reads), which the
// connection cannot while rows are still coming.
func (b *bucket) each(fn func(k, v []byte) error, query string, args ...any) error {
	ctx, cancel := b.t.b.roundTrip()
	defer cancel()
	rows, err := b.t.tx.Query(ctx, query, args...)
	if err != nil {
		return err
	}
	type kv struct{ k, v []byte }
	all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (kv, error) {
		var x kv
		err := r.Scan(&x.k, &x.v)
		if x.v == nil {
			x.v = []byte{}
		}
		return x, err
	})
	if err != nil {
		return fmt.Errorf("reading bucket %s: %w", b.name, err)
	}
	for _, x := range all {
		if err := fn(x.k, x.v); err != nil {
			return err
		}
	}
	return nil
}

// successor is the least key greater than every key starting with prefix,
// or nil when there is none (prefix is all 0xff bytes, or empty).
func successor(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}
