package statefile

import (
	"fmt"
	"strconv"
)

// Copied says what Copy wrote.
type Copied struct {
	Resources, Intents, History int
}

// Copy replaces the state held by dst with src's, whatever backends the
// two run on: its records, intents, protections, history, lineage and
// service, byte for byte, in one transaction of dst. It is how a state
// moves from a file into PostgreSQL and back. dst's serial becomes one
// more than the larger of the two, so a plan saved against either is
// stale.
//
// src is checked first (every record must decode), and nothing is copied
// from a damaged state. Unless force, Copy refuses a dst that would lose
// what was applied there: one holding records of another lineage, or the
// same lineage at a higher serial than src.
func Copy(dst, src *Store, force bool) (Copied, error) {
	var c Copied
	if src.noHistory {
		return c, fmt.Errorf("state %s has no history yet (an older genform wrote it): run genform plan on it once to upgrade it, then copy it", src.path)
	}
	if err := src.Check(); err != nil {
		return c, err
	}
	if err := dst.writable(); err != nil {
		return c, err
	}
	type kv struct{ k, v []byte }
	data := map[string][]kv{}
	var srcMeta Meta
	err := src.view(func(tx RawTx) error {
		b, err := src.begin(tx)
		if err != nil {
			return err
		}
		if srcMeta, err = src.readMeta(b); err != nil {
			return err
		}
		for i, bucket := range []Bucket{b.meta, b.resources, b.intents, b.protections, b.history} {
			name := string(bucketNames[i])
			err := bucket.ForEach(func(k, v []byte) error {
				data[name] = append(data[name], kv{append([]byte(nil), k...), append([]byte(nil), v...)})
				return nil
			})
			if err != nil {
				return src.readErr(err)
			}
		}
		return nil
	})
	if err != nil {
		return c, err
	}
	c = Copied{Resources: len(data[string(bucketResources)]), Intents: len(data[string(bucketIntents)]), History: len(data[string(bucketHistory)])}
	err = dst.be.Update(func(tx RawTx) error {
		b, err := dst.begin(tx)
		if err != nil {
			return err
		}
		dstMeta, err := dst.readMeta(b)
		if err != nil {
			return err
		}
		if srcMeta.SchemaVersion != dstMeta.SchemaVersion {
			return fmt.Errorf("copying state %s to %s: schema %d to schema %d", src.path, dst.path, srcMeta.SchemaVersion, dstMeta.SchemaVersion)
		}
		held := 0
		for _, bucket := range []Bucket{b.resources, b.intents, b.history} {
			n, err := bucket.Len()
			if err != nil {
				return dst.readErr(err)
			}
			held += n
		}
		switch {
		case force:
		case held > 0 && dstMeta.Lineage != srcMeta.Lineage:
			return fmt.Errorf("state %s already holds another state (lineage %s, not %s's %s), which the copy would replace: pass -force to replace it anyway", dst.path, dstMeta.Lineage, src.path, srcMeta.Lineage)
		case held > 0 && dstMeta.Serial > srcMeta.Serial:
			return fmt.Errorf("state %s is newer (serial %d) than %s (serial %d), and the copy would lose its changes since: pass -force to replace it anyway", dst.path, dstMeta.Serial, src.path, srcMeta.Serial)
		}
		for i, bucket := range []Bucket{b.meta, b.resources, b.intents, b.protections, b.history} {
			name := string(bucketNames[i])
			var old [][]byte
			if err := bucket.ForEach(func(k, _ []byte) error {
				old = append(old, append([]byte(nil), k...))
				return nil
			}); err != nil {
				return dst.readErr(err)
			}
			for _, k := range old {
				if err := bucket.Delete(k); err != nil {
					return fmt.Errorf("writing state %s: %w", dst.path, err)
				}
			}
			for _, x := range data[name] {
				v := x.v
				if name == string(bucketMeta) && string(x.k) == string(keySerial) {
					v = strconv.AppendUint(nil, max(srcMeta.Serial, dstMeta.Serial)+1, 10)
				}
				if err := bucket.Put(x.k, v); err != nil {
					return fmt.Errorf("writing state %s: %w", dst.path, err)
				}
			}
		}
		return nil
	})
	return c, err
}
