package statefile

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/genform/genform/internal/addrs"
)

// The history keeps every generation the state ever recorded, succeeded or
// failed, after the instance that held it was replaced, deleted or
// forgotten: the bytes a generation made cannot be made again, so what
// was paid for stays findable by the request that made it.
//
// An entry is a Resource record: the record of the instance as it was when
// the generation was last recorded (Addr is the instance that last held
// it; Dir and the outputs' paths are where its files were then). It is
// filed under historyKey(fingerprint, generation id), so the entries of
// one request are adjacent and found with one cursor seek. CreatedAt is
// when the generation was first recorded, UpdatedAt when last.
//
// Entries are written by Record and Move (putResource), in the same
// transaction as the record, and never removed by Forget.

// historySep separates the fingerprint from the generation id in a
// history key. Neither may contain it (checkHistoryKey).
const historySep = 0

func historyKey(fp, gid string) []byte {
	k := make([]byte, 0, len(fp)+1+len(gid))
	k = append(k, fp...)
	k = append(k, historySep)
	return append(k, gid...)
}

// splitHistoryKey is historyKey's inverse.
func splitHistoryKey(k []byte) (fp, gid string, ok bool) {
	i := bytes.IndexByte(k, historySep)
	if i <= 0 || i == len(k)-1 {
		return "", "", false
	}
	return string(k[:i]), string(k[i+1:]), true
}

// checkHistoryKey reports whether a generation can be filed under fp and
// gid. Ids come from the service and fingerprints from genform; one with a
// NUL byte is not filed (putHistory skips it) rather than refusing the
// record that holds it.
func checkHistoryKey(fp, gid string) error {
	if fp == "" || gid == "" || strings.IndexByte(fp, historySep) >= 0 || strings.IndexByte(gid, historySep) >= 0 {
		return fmt.Errorf("a generation is filed in the history by a fingerprint and an id without NUL bytes; got %q and %q", fp, gid)
	}
	return nil
}

// putHistory files the generation r holds, and the failed one kept beside
// it, in the history.
func (tx *Tx) putHistory(r *Resource) error {
	if r.Status != "" && checkHistoryKey(r.Fingerprint, r.GenerationID) == nil {
		e := *r
		e.Failure = nil
		e.CreatedAt = tx.now
		if err := tx.putEntry(&e); err != nil {
			return err
		}
	}
	if f := r.Failure; f != nil && checkHistoryKey(f.Fingerprint, f.GenerationID) == nil {
		at := f.At
		if at.IsZero() {
			at = tx.now
		}
		e := Resource{Addr: r.Addr, Endpoint: f.Endpoint, Fingerprint: f.Fingerprint, Request: f.Request,
			GenerationID: f.GenerationID, CreationID: f.GenerationID, Status: "failed", Error: f.Error,
			Dir: r.Dir, Deps: r.Deps, CreatedAt: at}
		if err := tx.putEntry(&e); err != nil {
			return err
		}
	}
	return nil
}

// putEntry writes one history entry, keeping the first-recorded time of
// an entry already there; rewriting what is there changes nothing.
func (tx *Tx) putEntry(e *Resource) error {
	if err := checkHistoryKey(e.Fingerprint, e.GenerationID); err != nil {
		return fmt.Errorf("recording %s: %w", e.Addr, err)
	}
	if tx.b.history == nil {
		return fmt.Errorf("recording %s: the %s has no history yet (it is open for reading)", e.Addr, tx.s.what())
	}
	key := historyKey(e.Fingerprint, e.GenerationID)
	old, err := tx.b.history.Get(key)
	if err != nil {
		return tx.s.readErr(err)
	}
	if old != nil {
		// A damaged entry is overwritten: the record being written is the
		// better account of the generation.
		if prev, err := decodeResourceRecord(key, old, false, true); err == nil && !prev.CreatedAt.IsZero() {
			e.CreatedAt = prev.CreatedAt
			if prev.Serial != 0 {
				e.Serial = prev.Serial
			}
		}
	}
	e.UpdatedAt = tx.now
	enc := encodeResource(e)
	if old != nil {
		// UpdatedAt aside, an unchanged entry is not written again.
		if prev, err := decodeResourceRecord(key, old, false, true); err == nil {
			prev.UpdatedAt = e.UpdatedAt
			if bytes.Equal(encodeResource(prev), enc) {
				return nil
			}
		}
	}
	if err := tx.b.history.Put(key, enc); err != nil {
		return fmt.Errorf("recording the history of %s: %w", e.Addr, err)
	}
	tx.dirty = true
	return nil
}

// decodeEntry decodes the history entry filed under key, checking that it
// is the generation the key names.
func decodeEntry(key, v []byte) (*Resource, error) {
	if v == nil {
		return nil, errors.New("a bucket where an entry belongs")
	}
	fp, gid, ok := splitHistoryKey(key)
	if !ok {
		return nil, errors.New("the key is not a fingerprint and a generation id")
	}
	e, err := decodeResourceRecord(key, v, false, true)
	if err != nil {
		return nil, err
	}
	if e.Fingerprint != fp || e.GenerationID != gid {
		return nil, errors.New("the entry is not the generation its key names")
	}
	return e, nil
}

// historyName is how an entry is named in errors.
func historyName(key []byte) string {
	if fp, gid, ok := splitHistoryKey(key); ok {
		return fmt.Sprintf("generation %s (fingerprint %s)", displayAddr(gid), displayAddr(fp))
	}
	return displayAddr(string(key))
}

// Generations returns the history's entries for the request whose
// fingerprint is fp, the most recently made first.
func (s *Store) Generations(fp string) ([]*Resource, error) {
	if fp == "" || strings.IndexByte(fp, historySep) >= 0 {
		return nil, nil
	}
	prefix := append([]byte(fp), historySep)
	return s.entries(func(h Bucket, fn func(k, v []byte) error) error { return h.ForEachPrefix(prefix, fn) }, nil)
}

// entries decodes the history entries visit walks, keeping those keep
// accepts (every one when keep is nil), the most recently made first.
func (s *Store) entries(visit func(h Bucket, fn func(k, v []byte) error) error, keep func(*Resource) bool) ([]*Resource, error) {
	var out []*Resource
	err := s.viewHistory(func(h Bucket) error {
		return visit(h, func(k, v []byte) error {
			e, err := decodeEntry(k, v)
			if err != nil {
				return &CorruptError{Path: s.path, Database: s.database, Record: "history", Addr: historyName(k), Err: err}
			}
			if keep == nil || keep(e) {
				out = append(out, e)
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, newestFirst)
	return out, nil
}

// Generation returns the history entry of generation gid made for the
// request fp, or nil, nil when the history has none.
func (s *Store) Generation(fp, gid string) (*Resource, error) {
	if checkHistoryKey(fp, gid) != nil {
		return nil, nil
	}
	var e *Resource
	err := s.viewHistory(func(h Bucket) error {
		key := historyKey(fp, gid)
		v, err := h.Get(key)
		if err != nil || v == nil {
			return s.readErr(err)
		}
		if e, err = decodeEntry(key, v); err != nil {
			return &CorruptError{Path: s.path, Database: s.database, Record: "history", Addr: historyName(key), Err: err}
		}
		return nil
	})
	return e, err
}

// History returns the entries last recorded for addr, or every entry
// when addr is the zero Instance, the most recently made first.
func (s *Store) History(addr addrs.Instance) ([]*Resource, error) {
	var keep func(*Resource) bool
	if !addr.IsZero() {
		keep = func(e *Resource) bool { return e.Addr == addr }
	}
	return s.entries(Bucket.ForEach, keep)
}

// HistoryLen is the number of entries in the history.
func (s *Store) HistoryLen() (int, error) {
	n := 0
	err := s.viewHistory(func(h Bucket) error {
		var err error
		n, err = h.Len()
		return s.readErr(err)
	})
	return n, err
}

// viewHistory runs fn on the history bucket in a read transaction, and
// nothing on a state an older genform wrote, which has none yet: such a
// state's history is empty.
func (s *Store) viewHistory(fn func(h Bucket) error) error {
	return s.viewBuckets(func(b buckets) error {
		if b.history == nil {
			return nil
		}
		return fn(b.history)
	})
}

// newestFirst orders entries by when their generation was first
// recorded, the newest first.
func newestFirst(a, b *Resource) int {
	if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
		return c
	}
	return b.UpdatedAt.Compare(a.UpdatedAt)
}

// migrateHistory is the migration to schema 2: it creates the history
// and files in it the generation every record holds, and the failure kept
// beside it. A record that cannot be decoded is left for the commands that
// read it to report (and state rm to mend); it has no history to give.
func migrateHistory(btx RawTx) error {
	hist, err := btx.CreateBucket(bucketHistory)
	if err != nil {
		return err
	}
	resources, err := btx.Bucket(bucketResources)
	if err != nil {
		return err
	}
	if resources == nil {
		return fmt.Errorf("bucket %s/%s is missing", bucketRoot, bucketResources)
	}
	tx := &Tx{s: &Store{}, b: buckets{history: hist}}
	return resources.ForEach(func(k, v []byte) error {
		if v == nil {
			return nil
		}
		r, err := decodeResource(k, v)
		if err != nil {
			return nil
		}
		// The old layout does not know when the generation was made; when
		// its record was last written is the closest it has.
		tx.now = r.UpdatedAt
		if tx.now.IsZero() {
			tx.now = time.Now().UTC()
		}
		return tx.putHistory(r)
	})
}

// MoveHistory files the history's entries last recorded for an address
// that moved (a key of moved) under the address it moved to (its value),
// so that the history of an instance a moved block renamed lists the
// generations it held under its old name too. It walks the history once
// however many moves there are; an entry that cannot be decoded is left
// as it is.
func (tx *Tx) MoveHistory(moved map[addrs.Instance]addrs.Instance) error {
	if err := tx.use(); err != nil {
		return err
	}
	if len(moved) == 0 || tx.b.history == nil {
		return nil
	}
	type entry struct {
		key []byte
		e   *Resource
	}
	var list []entry
	err := tx.b.history.ForEach(func(k, v []byte) error {
		e, err := decodeEntry(k, v)
		if err != nil {
			return nil
		}
		if dst, ok := moved[e.Addr]; ok {
			e.Addr = dst
			list = append(list, entry{append([]byte(nil), k...), e})
		}
		return nil
	})
	if err != nil {
		return tx.s.readErr(err)
	}
	for _, it := range list {
		if err := tx.b.history.Put(it.key, encodeResource(it.e)); err != nil {
			return fmt.Errorf("recording the history of %s: %w", it.e.Addr, err)
		}
		tx.dirty = true
	}
	return nil
}
