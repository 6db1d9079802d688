package statefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/genform/genform/internal/addrs"
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
	// serial is the serial the transaction commits as, once read
	// (nextSerial).
	serial uint64
}

var errTxDone = errors.New("statefile: Tx used after its Update returned")

// Update runs fn in one read-write transaction and commits what it did,
// adding one to the serial, with an fsync before it returns: a step of an
// apply recorded by Update survives a crash or kill -9 from then on. If fn
// returns an error, or panics, nothing it did is kept and its error is
// returned as is. If fn changed nothing, nothing is committed. fn must not
// call Update (Updates run one at a time: it would wait for itself).
//
// The first Update or Batch of a Store runs the backend's check before it
// writes (Backend.BeforeWrite: the bbolt file's page structure), and
// refuses a damaged file.
func (s *Store) Update(fn func(tx *Tx) error) error {
	if err := s.writable(); err != nil {
		return err
	}
	err := s.be.Update(func(rtx RawTx) error {
		dirty, err := s.run(rtx, fn)
		if err == nil && !dirty {
			return errUnchanged
		}
		return err
	})
	if errors.Is(err, errUnchanged) {
		return nil
	}
	return err
}

// errReadOnly is returned by Update and Batch of a Store opened ReadOnly.
var errReadOnly = errors.New("opened read-only")

// writable is what Update and Batch check before they write.
func (s *Store) writable() error {
	if s.readOnly {
		return fmt.Errorf("writing %s %s: %w", s.what(), s.path, errReadOnly)
	}
	s.writeOnce.Do(func() { s.writeErr = s.be.BeforeWrite() })
	return s.writeErr
}

// Batch is Update for steps taken by many goroutines at once, such as the
// intents and records of jobs running in parallel: concurrent calls are
// coalesced into one transaction and one fsync (on the bbolt file, bbolt's
// DB.Batch) instead of queueing for one each. Like Update, Batch returns
// only once its changes are durably committed. fn may be called more than
// once (when a step it was batched with fails), so it must only write what
// it is given.
func (s *Store) Batch(fn func(tx *Tx) error) error {
	if err := s.writable(); err != nil {
		return err
	}
	err := s.be.Batch(func(rtx RawTx) error {
		_, err := s.run(rtx, fn)
		return err
	})
	var ce *CorruptError
	if err != nil && !errors.As(err, &ce) && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrExists) {
		return fmt.Errorf("committing to %s %s: %w", s.what(), s.path, err)
	}
	return err
}

// run applies fn in btx and counts the serial up when fn changed something.
func (s *Store) run(btx RawTx, fn func(tx *Tx) error) (dirty bool, err error) {
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
		return false, fmt.Errorf("writing %s %s: %w", s.what(), s.path, err)
	}
	// Every change of this command says where the command started, so
	// what it recorded can be told from what was there before.
	s.runStartOnce.Do(func() { s.runStart = serial })
	if err := b.meta.Put(keyRunStart, strconv.AppendUint(nil, s.runStart, 10)); err != nil {
		return false, fmt.Errorf("writing %s %s: %w", s.what(), s.path, err)
	}
	return true, nil
}

// nextSerial is the serial this transaction commits as.
func (tx *Tx) nextSerial() (uint64, error) {
	if tx.serial == 0 {
		cur, err := tx.s.readUint(tx.b.meta, keySerial)
		if err != nil {
			return 0, err
		}
		tx.serial = cur + 1
	}
	return tx.serial, nil
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
func (tx *Tx) Resource(addr addrs.Instance) (*Resource, error) {
	if err := tx.use(); err != nil {
		return nil, err
	}
	return tx.s.getResource(tx.b, addr)
}

// Intent returns the intent recorded at addr, or nil, nil when there is
// none.
func (tx *Tx) Intent(addr addrs.Instance) (*Intent, error) {
	if err := tx.use(); err != nil {
		return nil, err
	}
	return tx.s.getIntent(tx.b, addr)
}

// Protected reports whether prevent_destroy is recorded for addr.
func (tx *Tx) Protected(addr addrs.Instance) (bool, error) {
	if err := tx.use(); err != nil {
		return false, err
	}
	p, err := tx.s.getProtection(tx.b, addr)
	if err != nil || p == nil {
		return false, err
	}
	return p.PreventDestroy, nil
}

// The state changes. Every command changes the state through these named
// operations and nothing else, each one keeping the records, intents and
// protections of an address consistent with each other.

// SetService records id as the service the state's generations are made
// with: its base URL, or the built-in simulator's name. It is recorded in
// the transaction of the first submission or download against a service
// (the engine's), or of an import, and commands refuse to
// use a state that names another one unless told to move it, since every
// fingerprint depends on the service and a silent switch would generate
// everything anew. Setting the service already recorded changes nothing.
func (tx *Tx) SetService(id string) error {
	if err := tx.use(); err != nil {
		return err
	}
	if id == "" {
		return errors.New("recording the service: no service given")
	}
	if !utf8.ValidString(id) || strings.ContainsFunc(id, unicode.IsControl) {
		return fmt.Errorf("recording the service: %q is not a service identity", id)
	}
	cur, err := tx.b.meta.Get(keyService)
	if err != nil {
		return tx.s.readErr(err)
	}
	if string(cur) == id {
		return nil
	}
	if err := tx.b.meta.Put(keyService, []byte(id)); err != nil {
		return fmt.Errorf("recording the service: %w", err)
	}
	tx.dirty = true
	return nil
}

// AddSpent adds amount, millionths of currency's unit, to what the state's
// workspace spent (Meta.Spent): the estimated price of a generation sent,
// recorded in the transaction that records its job. Zero adds nothing.
func (tx *Tx) AddSpent(currency string, amount int64) error {
	if err := tx.use(); err != nil {
		return err
	}
	if amount == 0 {
		return nil
	}
	if currency == "" || amount < 0 {
		return fmt.Errorf("recording what was spent: %d of currency %q is not an amount", amount, currency)
	}
	m := map[string]int64{}
	raw, err := tx.b.meta.Get(keySpent)
	if err != nil {
		return tx.s.readErr(err)
	}
	if raw != nil {
		if m, err = decodeSpent(raw); err != nil {
			// A damaged record is started again rather than blocking the
			// recording of a paid job.
			m = map[string]int64{}
		}
	}
	if m[currency] > math.MaxInt64-amount {
		m[currency] = math.MaxInt64
	} else {
		m[currency] += amount
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := tx.b.meta.Put(keySpent, b); err != nil {
		return fmt.Errorf("recording what was spent: %w", err)
	}
	tx.dirty = true
	return nil
}

// RecordIntent records the intent to submit i.Addr, replacing any intent
// there: before a create request is sent (GenerationID ""), and again
// once the service answered with the job's id. A zero CreatedAt is kept
// from the intent it replaces, or set to the time of the transaction; a
// zero SubmittedAt, when GenerationID is set, is set to the time of the
// transaction. i itself is not modified.
func (tx *Tx) RecordIntent(i *Intent) error {
	if err := tx.use(); err != nil {
		return err
	}
	if i == nil || i.Addr.IsZero() {
		return errors.New("recording a submission: no address")
	}
	if err := checkRecord(i.Addr, i.Endpoint, nil); err != nil {
		return err
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

// RecordHistory files e, a generation no record holds (the job of an
// interrupted submission for a request no longer declared, followed to
// its end, or an entry of another workspace's history kept when that
// workspace is deleted), in the history, and changes nothing else. e.Addr
// is the instance it was submitted for; a zero CreatedAt is the time of
// the transaction, and an entry already there keeps the time it was first
// recorded.
func (tx *Tx) RecordHistory(e *Resource) error {
	if err := tx.use(); err != nil {
		return err
	}
	if e == nil || e.Addr.IsZero() {
		return errors.New("recording a generation in the history: no address")
	}
	if err := checkRecord(e.Addr, e.Endpoint, e.Deps); err != nil {
		return err
	}
	for what, raw := range map[string]json.RawMessage{"request": e.Request, "creation detail": e.Detail} {
		if err := validJSON(e.Addr, what, raw); err != nil {
			return err
		}
	}
	if err := checkPaths(e); err != nil {
		return fmt.Errorf("recording %s: %w", e.Addr, err)
	}
	if e.Status == "" {
		return fmt.Errorf("recording generation %s of %s in the history: it has no status", e.GenerationID, e.Addr)
	}
	if err := checkHistoryKey(e.Fingerprint, e.GenerationID); err != nil {
		return fmt.Errorf("recording %s: %w", e.Addr, err)
	}
	entry := *e
	entry.Failure = nil
	if entry.CreatedAt.IsZero() {
		entry.CreatedAt = tx.now
	}
	return tx.putEntry(&entry)
}

// ClearIntent removes the intent at addr: its submission was refused, so
// nothing was paid for. Clearing an intent that is not there does nothing,
// so finishing a step twice is harmless.
func (tx *Tx) ClearIntent(addr addrs.Instance) error {
	if err := tx.use(); err != nil {
		return err
	}
	return tx.deleteIf(tx.b.intents, addr)
}

// Record stores r as the record of r.Addr, replacing any record there,
// and clears the intent at r.Addr: the submission it stood for has ended
// in this record (a generation that succeeded or failed, a creation
// adopted by import), or the record's files changed (moved, downloaded
// again). UpdatedAt is set to the time of the transaction; a zero
// CreatedAt is kept from the record it replaces, or set to the time of
// the transaction. r itself is not modified.
func (tx *Tx) Record(r *Resource) error {
	if err := tx.use(); err != nil {
		return err
	}
	if err := tx.putResource(r); err != nil {
		return err
	}
	return tx.deleteIf(tx.b.intents, r.Addr)
}

// Protect records (on) or lifts (off) lifecycle.prevent_destroy for addr.
// Setting what is already recorded changes nothing.
func (tx *Tx) Protect(addr addrs.Instance, on bool) error {
	if err := tx.use(); err != nil {
		return err
	}
	if addr.IsZero() {
		return errors.New("protecting a resource: no address")
	}
	if err := checkAddr(addr); err != nil {
		return err
	}
	if !on {
		return tx.deleteIf(tx.b.protections, addr)
	}
	key := addr.String()
	rec := encodeProtection(&Protection{Addr: addr, PreventDestroy: true})
	cur, err := tx.b.protections.Get([]byte(key))
	if err != nil {
		return tx.s.readErr(err)
	}
	if bytes.Equal(cur, rec) {
		return nil
	}
	return tx.put(tx.b.protections, addr, rec)
}

// Forgotten says what Forget removed.
type Forgotten struct {
	// Record and Intent report whether addr had a record and an intent.
	Record, Intent bool
	// GenerationID is the job of the intent, "" when it had none (or
	// could not be read): a job the service may still run, and that the
	// state no longer follows.
	GenerationID string
}

// Forget removes everything the state holds for addr: its record, its
// intent and its protection. The files stay where they are; deleting them
// is the caller's. Forgetting an address that has only an intent, or
// nothing, succeeds. It reads no record, so it also forgets one that can
// no longer be decoded.
func (tx *Tx) Forget(addr addrs.Instance) (Forgotten, error) {
	var f Forgotten
	if err := tx.use(); err != nil {
		return f, err
	}
	key := []byte(addr.String())
	rec, err := tx.b.resources.Get(key)
	if err != nil {
		return f, tx.s.readErr(err)
	}
	f.Record = rec != nil
	v, err := tx.b.intents.Get(key)
	if err != nil {
		return f, tx.s.readErr(err)
	}
	if v != nil {
		f.Intent = true
		if in, err := decodeIntent(key, v); err == nil {
			f.GenerationID = in.GenerationID
		}
	}
	for _, b := range []Bucket{tx.b.resources, tx.b.intents, tx.b.protections} {
		if err := tx.deleteIf(b, addr); err != nil {
			return f, err
		}
	}
	return f, nil
}

// Move records r, the record of src as it now is (its files moved by the
// caller and its paths updated), under r.Addr instead of src, with src's
// protection. It is an error matching ErrNotFound if src has no record,
// and one matching ErrExists if r.Addr has a record or an intent of its
// own. An intent at src stays where it is.
func (tx *Tx) Move(src addrs.Instance, r *Resource) error {
	if err := tx.use(); err != nil {
		return err
	}
	if r == nil || r.Addr.IsZero() {
		return fmt.Errorf("moving resource %s: no destination address", src)
	}
	dst := r.Addr
	has := func(b Bucket, addr addrs.Instance) (bool, error) {
		v, err := b.Get([]byte(addr.String()))
		return v != nil, tx.s.readErr(err)
	}
	if ok, err := has(tx.b.resources, src); err != nil || !ok {
		if err != nil {
			return err
		}
		return fmt.Errorf("moving resource %s: %w", src, ErrNotFound)
	}
	if dst != src {
		if ok, err := has(tx.b.resources, dst); err != nil || ok {
			if err != nil {
				return err
			}
			return fmt.Errorf("moving resource %s to %s: resource %s: %w", src, dst, dst, ErrExists)
		}
		if ok, err := has(tx.b.intents, dst); err != nil || ok {
			if err != nil {
				return err
			}
			return fmt.Errorf("moving resource %s to %s: an unfinished submission of %s: %w", src, dst, dst, ErrExists)
		}
	}
	prot, err := tx.Protected(src)
	if err != nil {
		return err
	}
	if dst != src {
		if err := tx.deleteIf(tx.b.resources, src); err != nil {
			return err
		}
		if err := tx.deleteIf(tx.b.protections, src); err != nil {
			return err
		}
	}
	if err := tx.putResource(r); err != nil {
		return err
	}
	return tx.Protect(dst, prot)
}

// putResource writes r's record (see Record).
func (tx *Tx) putResource(r *Resource) error {
	if r == nil || r.Addr.IsZero() {
		return errors.New("recording a resource: no address")
	}
	if err := checkRecord(r.Addr, r.Endpoint, r.Deps); err != nil {
		return err
	}
	if err := validJSON(r.Addr, "request", r.Request); err != nil {
		return err
	}
	if err := validJSON(r.Addr, "creation detail", r.Detail); err != nil {
		return err
	}
	if f := r.Failure; f != nil {
		if f.Endpoint.Kind() != r.Addr.Resource.Kind {
			return fmt.Errorf("recording %s: the failed request's endpoint %v does not generate a %s", r.Addr, f.Endpoint, r.Addr.Resource.Kind)
		}
		if err := validJSON(r.Addr, "failed request", f.Request); err != nil {
			return err
		}
	}
	if err := checkPaths(r); err != nil {
		return fmt.Errorf("recording %s: %w", r.Addr, err)
	}
	rec := *r
	rec.UpdatedAt = tx.now
	// A damaged record being overwritten has nothing to keep.
	old, err := tx.s.getResource(tx.b, r.Addr)
	if err != nil {
		old = nil
	}
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = tx.now
		if old != nil && !old.CreatedAt.IsZero() {
			rec.CreatedAt = old.CreatedAt
		}
	}
	// The serial says when the generation was first recorded: a record
	// written again for the same generation (files moved, downloaded
	// again) keeps it.
	if rec.Serial == 0 || old != nil && old.GenerationID != rec.GenerationID {
		if old != nil && old.GenerationID == rec.GenerationID && old.Serial != 0 {
			rec.Serial = old.Serial
		} else if rec.Serial, err = tx.nextSerial(); err != nil {
			return err
		}
	}
	if err := tx.put(tx.b.resources, rec.Addr, encodeResource(&rec)); err != nil {
		return err
	}
	return tx.putHistory(&rec)
}

func (tx *Tx) put(b Bucket, addr addrs.Instance, rec []byte) error {
	if err := b.Put([]byte(addr.String()), rec); err != nil {
		return fmt.Errorf("recording %s: %w", addr, err)
	}
	tx.dirty = true
	return nil
}

// deleteIf removes addr's entry from b when there is one.
func (tx *Tx) deleteIf(b Bucket, addr addrs.Instance) error {
	key := []byte(addr.String())
	if v, err := b.Get(key); err != nil || v == nil {
		return tx.s.readErr(err)
	}
	if err := b.Delete(key); err != nil {
		return fmt.Errorf("forgetting %s: %w", addr, err)
	}
	tx.dirty = true
	return nil
}

// validJSON refuses bytes that are not JSON in a json.RawMessage field:
// they would be stored fine and fail much later, when a command prints the
// state.
func validJSON(addr addrs.Instance, what string, raw json.RawMessage) error {
	if len(raw) > 0 && !json.Valid(raw) {
		return fmt.Errorf("recording %s: the %s is not valid JSON", addr, what)
	}
	return nil
}
