package statefile

import (
	"bytes"
	"fmt"
	"strconv"
)

// Copied says what Copy or Push wrote.
type Copied struct {
	Resources, Intents, History int
	// Unchanged is set when the target already held exactly this state:
	// nothing was written and its serial stayed.
	Unchanged bool
}

// LoseError is a copy or push refused because the target would lose what
// was applied there: another lineage's records, or newer changes. The
// caller says how to force it.
type LoseError struct{ msg string }

func (e *LoseError) Error() string { return e.msg }

// kv is one key and value of a bucket.
type kv struct{ k, v []byte }

// rawState is a whole state as bytes: every bucket's keys and values, and
// the meta they hold. It is what Copy and Push write into a target.
type rawState struct {
	meta Meta
	// data holds each bucket's keys and values in key order, by bucket name.
	data map[string][]kv
}

func (r *rawState) copied() Copied {
	return Copied{Resources: len(r.data[string(bucketResources)]), Intents: len(r.data[string(bucketIntents)]), History: len(r.data[string(bucketHistory)])}
}

// Copy replaces the state held by dst with src's, whatever backends the
// two run on: its records, intents, protections, history, lineage and
// service, byte for byte, in one transaction of dst. It is how a state
// moves from a file into PostgreSQL and back (genform init
// -migrate-state). dst's serial becomes one more than the larger of the
// two, so a plan saved against either is stale; a dst that holds src's
// state already is left as it is.
//
// src is checked first (every record must decode), and nothing is copied
// from a damaged state. Unless force, Copy refuses a dst that would lose
// what was applied there: one holding records of another lineage, or the
// same lineage at a higher serial than src.
func Copy(dst, src *Store, force bool) (Copied, error) {
	raw, err := src.dump()
	if err != nil {
		return Copied{}, err
	}
	return dst.replace(raw, src.path, force)
}

// dump reads the whole state, checked, as bytes.
func (s *Store) dump() (rawState, error) {
	raw := rawState{data: map[string][]kv{}}
	if s.noHistory {
		return raw, fmt.Errorf("state %s has no history yet (an older genform wrote it): run genform plan on it once to upgrade it, then copy it", s.path)
	}
	if err := s.Check(); err != nil {
		return raw, err
	}
	err := s.viewBuckets(func(b buckets) error {
		var err error
		if raw.meta, err = s.readMeta(b); err != nil {
			return err
		}
		for i, bucket := range []Bucket{b.meta, b.resources, b.intents, b.protections, b.history} {
			name := string(bucketNames[i])
			err := bucket.ForEach(func(k, v []byte) error {
				raw.data[name] = append(raw.data[name], kv{append([]byte(nil), k...), append([]byte(nil), v...)})
				return nil
			})
			if err != nil {
				return s.readErr(err)
			}
		}
		return nil
	})
	return raw, err
}

// replace makes src the state of s in one transaction, unless force
// refusing to lose another lineage's records or newer changes (see Copy).
// from names src in messages.
func (s *Store) replace(src rawState, from string, force bool) (Copied, error) {
	c := src.copied()
	if err := s.writable(); err != nil {
		return c, err
	}
	err := s.be.Update(func(tx RawTx) error {
		b, err := s.begin(tx)
		if err != nil {
			return err
		}
		dstMeta, err := s.readMeta(b)
		if err != nil {
			return err
		}
		if src.meta.SchemaVersion != dstMeta.SchemaVersion {
			return fmt.Errorf("copying %s to state %s: schema %d to schema %d", from, s.path, src.meta.SchemaVersion, dstMeta.SchemaVersion)
		}
		held := 0
		for _, bucket := range []Bucket{b.resources, b.intents, b.history, b.protections} {
			n, err := bucket.Len()
			if err != nil {
				return s.readErr(err)
			}
			held += n
		}
		switch {
		case force:
		case held > 0 && dstMeta.Lineage != src.meta.Lineage:
			return &LoseError{fmt.Sprintf("state %s holds another state (lineage %s), not %s's (lineage %s), which this would replace", s.path, dstMeta.Lineage, from, src.meta.Lineage)}
		case held > 0 && dstMeta.Serial > src.meta.Serial:
			return &LoseError{fmt.Sprintf("state %s is newer (serial %d) than %s (serial %d), and this would lose its changes since", s.path, dstMeta.Serial, from, src.meta.Serial)}
		}
		same := true
		buckets := []Bucket{b.meta, b.resources, b.intents, b.protections, b.history}
		old := make([][]kv, len(buckets))
		for i, bucket := range buckets {
			if err := bucket.ForEach(func(k, v []byte) error {
				old[i] = append(old[i], kv{append([]byte(nil), k...), append([]byte(nil), v...)})
				return nil
			}); err != nil {
				return s.readErr(err)
			}
			if !sameData(old[i], src.data[string(bucketNames[i])]) {
				same = false
			}
		}
		if same {
			c.Unchanged = true
			return errUnchanged
		}
		for i, bucket := range buckets {
			name := string(bucketNames[i])
			for _, x := range old[i] {
				if err := bucket.Delete(x.k); err != nil {
					return fmt.Errorf("writing state %s: %w", s.path, err)
				}
			}
			for _, x := range src.data[name] {
				v := x.v
				if name == string(bucketMeta) && string(x.k) == string(keySerial) {
					v = strconv.AppendUint(nil, max(src.meta.Serial, dstMeta.Serial)+1, 10)
				}
				if err := bucket.Put(x.k, v); err != nil {
					return fmt.Errorf("writing state %s: %w", s.path, err)
				}
			}
		}
		return nil
	})
	if err == errUnchanged {
		err = nil
	}
	return c, err
}

// sameData reports whether two buckets hold the same keys and values, the
// serial aside: a state copied onto itself changes nothing.
func sameData(a, b []kv) bool {
	strip := func(l []kv) []kv {
		out := make([]kv, 0, len(l))
		for _, x := range l {
			if !bytes.Equal(x.k, keySerial) {
				out = append(out, x)
			}
		}
		return out
	}
	a, b = strip(a), strip(b)
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i].k, b[i].k) || !bytes.Equal(a[i].v, b[i].v) {
			return false
		}
	}
	return true
}
