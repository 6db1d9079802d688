package statefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Tx is one read-write transaction, given to the function passed to
// Update. It must not be used after that function returns.
type Tx struct {
	s   *Store
	b   buckets
	now time.Time // one clock reading per transaction
	// dirty records that something changed: an Update that changed nothing
	// is not committed and does not raise the serial, so it cannot make a
	// saved plan stale.
	dirty bool
	done  bool
}

var errTxDone = errors.New("statefile: Tx used after its Update returned")

// Update runs fn in one read-write transaction and commits what it did,
// adding one to the serial, with an fsync before it returns: a step of an
// apply recorded by Update survives a crash or kill -9 from then on. If fn
// returns an error, or panics, nothing it did is kept and its error is
// returned as is. If fn changed nothing, nothing is committed. fn must not
// call Update (Updates run one at a time: it would wait for itself).
func (s *Store) Update(fn func(tx *Tx) error) error {
	btx, err := s.db.Begin(true)
	if err != nil {
		return fmt.Errorf("writing state file %s: %w", s.path, err)
	}
	committed := false
	defer func() {
		if !committed {
			_ = btx.Rollback()
		}
	}()
	dirty, err := s.run(btx, fn)
	if err != nil || !dirty {
		return err
	}
	committed = true // Commit closes the transaction, even when it fails
	if err := btx.Commit(); err != nil {
		return fmt.Errorf("committing to state file %s: %w", s.path, err)
	}
	return nil
}

// Batch is Update for steps taken by many goroutines at once, such as the
// intents and records of jobs running in parallel: concurrent calls are
// coalesced into one transaction and one fsync (bbolt's DB.Batch) instead
// of queueing for one each. Like Update, Batch returns only once its
// changes are durably committed. fn may be called more than once (when a
// step it was batched with fails), so it must only write what it is given.
func (s *Store) Batch(fn func(tx *Tx) error) error {
	err := s.db.Batch(func(btx *bolt.Tx) error {
		_, err := s.run(btx, fn)
		return err
	})
	var ce *CorruptError
	if err != nil && !errors.As(err, &ce) && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrExists) {
		return fmt.Errorf("committing to state file %s: %w", s.path, err)
	}
	return err
}

// run applies fn in btx and counts the serial up when fn changed something.
func (s *Store) run(btx *bolt.Tx, fn func(tx *Tx) error) (dirty bool, err error) {
	b, err := s.begin(btx)
	if err != nil {
		return false, err
	}
	tx := &Tx{s: s, b: b, now: s.now().UTC()}
	err = fn(tx)
	tx.done = true
	if err != nil || !tx.dirty {
		return false, err
	}
	serial, err := s.readUint(b.meta, keySerial)
	if err != nil {
		return false, err
	}
	if err := b.meta.Put(keySerial, strconv.AppendUint(nil, serial+1, 10)); err != nil {
		return false, fmt.Errorf("writing state file %s: %w", s.path, err)
	}
	return true, nil
}

func (tx *Tx) use() error {
	if tx.done {
		return errTxDone
	}
	return nil
}

// Meta returns the file's meta record as this transaction sees it; the
// serial is the one before this Update's commit.
func (tx *Tx) Meta() (Meta, error) {
	if err := tx.use(); err != nil {
		return Meta{}, err
	}
	return tx.s.readMeta(tx.b)
}

// Resource returns the resource recorded at addr, as this transaction sees
// it, or nil, nil when there is none.
func (tx *Tx) Resource(addr string) (*Resource, error) {
	if err := tx.use(); err != nil {
		return nil, err
	}
	return tx.s.getResource(tx.b, addr)
}

// PutResource records r at r.Addr, replacing any record there. UpdatedAt is
// set to the time of the transaction; a zero CreatedAt is kept from the
// record it replaces, or set to the time of the transaction. r itself is
// not modified.
func (tx *Tx) PutResource(r *Resource) error {
	if err := tx.use(); err != nil {
		return err
	}
	if r == nil || r.Addr == "" {
		return errors.New("recording a resource: no address")
	}
	if err := validJSON(r.Addr, "request", r.Request); err != nil {
		return err
	}
	if err := validJSON(r.Addr, "creation detail", r.Detail); err != nil {
		return err
	}
	if err := checkPaths(r); err != nil {
		return fmt.Errorf("recording %s: %w", r.Addr, err)
	}
	rec := *r
	rec.UpdatedAt = tx.now
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = tx.now
		// A damaged record being overwritten has no creation time to keep.
		if old, err := tx.s.getResource(tx.b, r.Addr); err == nil && old != nil && !old.CreatedAt.IsZero() {
			rec.CreatedAt = old.CreatedAt
		}
	}
	return tx.put(tx.b.resources, rec.Addr, encodeResource(&rec))
}

// DeleteResource forgets the resource at addr, and its protection with it:
// a protection is for a resource, and one left behind would guard whatever
// is created at that address next. An intent at addr is left alone (see
// DeleteIntent). A missing resource is an error matching ErrNotFound.
func (tx *Tx) DeleteResource(addr string) error {
	if err := tx.use(); err != nil {
		return err
	}
	key := []byte(addr)
	if tx.b.resources.Get(key) == nil {
		return fmt.Errorf("resource %s: %w", displayAddr(addr), ErrNotFound)
	}
	if err := tx.delete(tx.b.resources, key); err != nil {
		return err
	}
	if tx.b.protections.Get(key) != nil {
		return tx.delete(tx.b.protections, key)
	}
	return nil
}

// MoveResource records the resource at src under dst instead, with its
// protection, and sets its UpdatedAt. It is an error matching ErrNotFound
// if src has no resource, and one matching ErrExists if dst has one. Output
// paths are recorded as they are: moving the files, and recording their new
// paths, is the caller's.
func (tx *Tx) MoveResource(src, dst string) error {
	if err := tx.use(); err != nil {
		return err
	}
	if dst == "" {
		return fmt.Errorf("moving resource %s: no destination address", displayAddr(src))
	}
	r, err := tx.s.getResource(tx.b, src)
	if err != nil {
		return err
	}
	if r == nil {
		return fmt.Errorf("moving resource %s: %w", displayAddr(src), ErrNotFound)
	}
	if tx.b.resources.Get([]byte(dst)) != nil {
		return fmt.Errorf("moving resource %s to %s: resource %s: %w", displayAddr(src), displayAddr(dst), displayAddr(dst), ErrExists)
	}
	r.Addr = dst
	r.UpdatedAt = tx.now
	if err := tx.put(tx.b.resources, dst, encodeResource(r)); err != nil {
		return err
	}
	if err := tx.delete(tx.b.resources, []byte(src)); err != nil {
		return err
	}
	p, err := tx.s.getProtection(tx.b, src)
	if err != nil || p == nil {
		return err
	}
	p.Addr = dst
	if err := tx.put(tx.b.protections, dst, encodeProtection(p)); err != nil {
		return err
	}
	return tx.delete(tx.b.protections, []byte(src))
}

// PutIntent records the intent to submit i.Addr, replacing any intent
// there. A zero CreatedAt is kept from the intent it replaces, or set to the
// time of the transaction; a zero SubmittedAt, when GenerationID is set, is
// set to the time of the transaction. i itself is not modified.
func (tx *Tx) PutIntent(i *Intent) error {
	if err := tx.use(); err != nil {
		return err
	}
	if i == nil || i.Addr == "" {
		return errors.New("recording a submission: no address")
	}
	if err := validJSON(i.Addr, "request", i.Request); err != nil {
		return err
	}
	rec := *i
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = tx.now
		if old, err := tx.s.getIntent(tx.b, i.Addr); err == nil && old != nil && !old.CreatedAt.IsZero() {
			rec.CreatedAt = old.CreatedAt
		}
	}
	if rec.SubmittedAt.IsZero() && rec.GenerationID != "" {
		rec.SubmittedAt = tx.now
	}
	return tx.put(tx.b.intents, rec.Addr, encodeIntent(&rec))
}

// Intent returns the intent recorded at addr, or nil, nil when there is
// none.
func (tx *Tx) Intent(addr string) (*Intent, error) {
	if err := tx.use(); err != nil {
		return nil, err
	}
	return tx.s.getIntent(tx.b, addr)
}

// DeleteIntent removes the intent at addr, once its generation is
// recorded or abandoned. Deleting an intent that is not there does nothing,
// so finishing a step twice is harmless.
func (tx *Tx) DeleteIntent(addr string) error {
	if err := tx.use(); err != nil {
		return err
	}
	key := []byte(addr)
	if tx.b.intents.Get(key) == nil {
		return nil
	}
	return tx.delete(tx.b.intents, key)
}

// SetProtected records (on) or lifts (off) prevent_destroy for addr.
// Setting what is already recorded changes nothing.
func (tx *Tx) SetProtected(addr string, on bool) error {
	if err := tx.use(); err != nil {
		return err
	}
	if addr == "" {
		return errors.New("protecting a resource: no address")
	}
	key := []byte(addr)
	old := tx.b.protections.Get(key)
	if !on {
		if old == nil {
			return nil
		}
		return tx.delete(tx.b.protections, key)
	}
	rec := encodeProtection(&Protection{Addr: addr, PreventDestroy: true})
	if bytes.Equal(old, rec) {
		return nil
	}
	return tx.put(tx.b.protections, addr, rec)
}

// Protected reports whether prevent_destroy is recorded for addr.
func (tx *Tx) Protected(addr string) (bool, error) {
	if err := tx.use(); err != nil {
		return false, err
	}
	p, err := tx.s.getProtection(tx.b, addr)
	if err != nil || p == nil {
		return false, err
	}
	return p.PreventDestroy, nil
}

func (tx *Tx) put(b *bolt.Bucket, addr string, rec []byte) error {
	if err := b.Put([]byte(addr), rec); err != nil {
		return fmt.Errorf("recording %s: %w", displayAddr(addr), err)
	}
	tx.dirty = true
	return nil
}

func (tx *Tx) delete(b *bolt.Bucket, key []byte) error {
	if err := b.Delete(key); err != nil {
		return fmt.Errorf("forgetting %s: %w", displayAddr(string(key)), err)
	}
	tx.dirty = true
	return nil
}

// validJSON refuses bytes that are not JSON in a json.RawMessage field:
// they would be stored fine and fail much later, when a command prints the
// state.
func validJSON(addr, what string, raw json.RawMessage) error {
	if len(raw) > 0 && !json.Valid(raw) {
		return fmt.Errorf("recording %s: the %s is not valid JSON", displayAddr(addr), what)
	}
	return nil
}
