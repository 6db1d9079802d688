package statefile

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/genform/genform/internal/addrs"
)

// Options says how to open a state, whatever its backend: the file
// (boltstate.Open) or PostgreSQL (pgstate.Open).
type Options struct {
	// LockTimeout is how long to wait for the exclusive lock held by another
	// process; 0 fails at the first attempt.
	LockTimeout time.Duration
	// Command is the genform command opening the state (e.g. "apply"),
	// shown to anyone who finds it locked.
	Command string
	// Create creates the state when it does not exist: the file (mode
	// 0600, missing parent directories 0700), or PostgreSQL's schema and
	// tables. Without it, a missing state is an error that matches
	// fs.ErrNotExist.
	Create bool
	// ReadOnly opens the state for reading only. A reader reads the last
	// state committed and does not wait for a writer: beside a command
	// that writes (a 30-minute apply), it reads what that command had
	// committed when the reader opened the state, and goes on reading
	// that one state until Close, however the writer goes on. Readers
	// run beside each other. How is each backend's: a bbolt file is read
	// under its shared lock while no writer holds it (a writer opening
	// then waits for it, up to its LockTimeout), and through a copy the
	// writer makes for the reader while one does (package boltstate);
	// PostgreSQL reads in one repeatable-read transaction and takes no
	// lock at all (package pgstate). Only when the writer makes no copy
	// (a genform from before them) or the reader cannot ask for one (a
	// read-only checkout) does a file's reader wait for the writer, up
	// to LockTimeout. A reader writes nothing, not even the holder info
	// (beside a bbolt file, only its request for a copy), so it works on
	// a read-only file system; Update and Batch fail. It cannot be
	// combined with Create, and a state of an older schema, which only a
	// writer can upgrade, is refused unless this build reads it as is.
	ReadOnly bool
	// WritesNothing says the command takes the exclusive lock only to
	// read a state no writer is changing, and writes nothing (plan): a
	// database role that may only read the state is enough for it, and
	// when that role cannot record the lock's holder, the holder goes
	// unrecorded. Every other writer is refused such a role before it
	// does anything.
	WritesNothing bool
	// KeepWritersOut, with ReadOnly, reads under the state's shared lock
	// instead: the reader waits for a writer (up to LockTimeout) and
	// writers wait for it until Close. For a command that must not read
	// a state a writer is still changing: genform init copying it to
	// another storage, which would leave behind what the writer adds.
	KeepWritersOut bool
}

// Store is an open state, in a file or another backend. Opened for
// writing, it holds the state's exclusive lock until Close. Its
// methods are safe for concurrent use: Updates run one at a time, and reads
// in parallel where the backend can (the file's can).
type Store struct {
	// path is the backend's name: the file's path, or the database's.
	path     string
	be       Backend
	readOnly bool
	// database is set for a state kept in a database, which messages
	// call the state, not the state file (what).
	database bool
	// noHistory is set for a file of schema 1 opened read-only: it has no
	// history bucket yet (its first writer adds it), and reads as one with
	// an empty history.
	noHistory bool
	// now is the clock for record timestamps; tests replace it.
	now func() time.Time

	// writeOnce runs the backend's check before the first write, and
	// writeErr keeps its result.
	writeOnce sync.Once
	writeErr  error

	closeOnce sync.Once
	closeErr  error

	// runStart is the serial before this Store's first change, written
	// as the meta's run_start with every change (Meta.RunStart).
	runStartOnce sync.Once
	runStart     uint64
}

// Meta is the state file's identity and version. A saved plan records
// Lineage and Serial, so applying it to another file, or to the same file
// after it changed, is refused.
type Meta struct {
	SchemaVersion int
	// Lineage is a random UUID given to the file when it is created; it
	// never changes.
	Lineage string
	// Serial counts the Updates that changed the file.
	Serial uint64
	// Service is the identity of the service the state's generations are
	// made with (a base URL, or the built-in simulator's name), as
	// Tx.SetService recorded it; "" when nothing has recorded one yet: a
	// new state, or one written by a genform that did not record it.
	Service string
	// RunStart is the serial the state had before the last command that
	// changed it made its first change: what that command (an apply, say)
	// recorded is what has a larger Resource.Serial. 0 when no command
	// has said.
	RunStart uint64
}

// Snapshot is the whole state as of one moment.
type Snapshot struct {
	Meta        Meta
	Resources   map[addrs.Instance]*Resource
	Intents     map[addrs.Instance]*Intent
	Protections map[addrs.Instance]bool // true means prevent_destroy
}

// init checks the genform layout in the backend: it creates it in a
// new state, upgrades an older one and refuses a newer or foreign one.
func (s *Store) init(create bool) error {
	const (
		fresh = iota
		foreign
		genform
	)
	kind := genform
	version := 0
	err := s.view(func(tx RawTx) error {
		layout, err := tx.Layout()
		if err != nil {
			return err
		}
		switch layout {
		case LayoutNone:
			kind = fresh
			return nil
		case LayoutForeign:
			kind = foreign
			return nil
		}
		meta, err := tx.Bucket(bucketMeta)
		if err != nil {
			return err
		}
		if meta == nil {
			return &CorruptError{Path: s.path, Database: s.database, Err: fmt.Errorf("bucket %s/%s is missing", bucketRoot, bucketMeta)}
		}
		version, err = s.readSchema(meta)
		return err
	})
	if err != nil {
		return err
	}
	switch {
	case kind == foreign:
		return &CorruptError{Path: s.path, Database: s.database, Err: errors.New("a bbolt database, but not a genform state file")}
	case kind == fresh && !create:
		return &NoStateError{Path: s.path, Database: s.database}
	case kind == fresh:
		if err := s.create(); err != nil {
			return fmt.Errorf("creating %s %s: %w", s.what(), s.path, err)
		}
	case version > currentSchema:
		return fmt.Errorf("%s %s was written by a newer genform (schema %d; this genform reads schema %d); upgrade genform", s.what(), s.path, version, currentSchema)
	case version < currentSchema && s.readOnly && readableAsIs(version):
		s.noHistory = version < 2
	case version < currentSchema && s.readOnly:
		where := "where the file is writable"
		if s.database {
			where = "with a role that may write the state"
		}
		return fmt.Errorf("%s %s was written by an older genform (schema %d); this genform upgrades it to schema %d when a command that writes the state opens it (plan, apply): run one %s", s.what(), s.path, version, currentSchema, where)
	case version < currentSchema:
		if err := s.migrate(version); err != nil {
			return err
		}
	}
	// Whatever path was taken, the file must now read as a whole layout.
	return s.view(func(btx RawTx) error {
		b, err := s.begin(btx)
		if err != nil {
			return err
		}
		_, err = s.readMeta(b)
		return err
	})
}

// create writes the layout of a new state file.
func (s *Store) create() error {
	lineage, err := newLineage()
	if err != nil {
		return err
	}
	return s.be.Update(func(tx RawTx) error {
		meta, err := tx.CreateBucket(bucketMeta)
		if err != nil {
			return err
		}
		for _, kv := range [][2][]byte{
			{keySchemaVersion, formatUint(uint64(currentSchema))},
			{keyLineage, []byte(lineage)},
			{keySerial, formatUint(0)},
		} {
			if err := meta.Put(kv[0], kv[1]); err != nil {
				return err
			}
		}
		for _, name := range [][]byte{bucketResources, bucketIntents, bucketProtections, bucketHistory} {
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
		}
		return nil
	})
}

// newLineage returns a random (version 4) UUID.
func newLineage() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generating the state lineage: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

func formatUint(v uint64) []byte { return strconv.AppendUint(nil, v, 10) }

// Path returns the backend's name for the state: the file's path as given
// to boltstate.Open, or the database and schema.
func (s *Store) Path() string { return s.path }

// what names the state in messages.
func (s *Store) what() string {
	if s.database {
		return "state"
	}
	return "state file"
}

// view runs fn in a read transaction of the Store's backend.
func (s *Store) view(fn func(RawTx) error) error { return s.be.View(fn) }

// viewBuckets runs fn on the layout's buckets in a read transaction: what
// nearly every read of the state begins with.
func (s *Store) viewBuckets(fn func(b buckets) error) error {
	return s.view(func(tx RawTx) error {
		b, err := s.begin(tx)
		if err != nil {
			return err
		}
		return fn(b)
	})
}

// readOne returns what get reads from the layout's buckets, in a read
// transaction of its own.
func readOne[T any](s *Store, get func(b buckets) (T, error)) (T, error) {
	var v T
	err := s.viewBuckets(func(b buckets) error {
		var err error
		v, err = get(b)
		return err
	})
	return v, err
}

// Close releases the lock and closes the state. Calling it again returns
// the first result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.be.Close() })
	return s.closeErr
}

// buckets are the buckets of the layout, as one transaction sees them.
type buckets struct {
	meta, resources, intents, protections, history Bucket
}

// begin finds the layout's buckets in tx; a missing one means the state is
// damaged.
func (s *Store) begin(tx RawTx) (buckets, error) {
	var b buckets
	for i, dst := range []*Bucket{&b.meta, &b.resources, &b.intents, &b.protections, &b.history} {
		name := bucketNames[i]
		bk, err := tx.Bucket(name)
		if err != nil {
			return b, s.readErr(err)
		}
		if bk == nil && !(s.noHistory && dst == &b.history) {
			return b, &CorruptError{Path: s.path, Database: s.database, Err: fmt.Errorf("bucket %s/%s is missing", bucketRoot, name)}
		}
		*dst = bk
	}
	return b, nil
}

// readErr wraps an error of the backend met while reading.
func (s *Store) readErr(err error) error {
	var ce *CorruptError
	if err == nil || errors.As(err, &ce) {
		return err
	}
	return fmt.Errorf("reading state %s: %w", s.path, err)
}

func (s *Store) readSchema(meta Bucket) (int, error) {
	v, err := s.readUint(meta, keySchemaVersion)
	if err != nil {
		return 0, err
	}
	if v < 1 || v > 1<<20 {
		return 0, &CorruptError{Path: s.path, Database: s.database, Record: "meta", Addr: string(keySchemaVersion), Err: fmt.Errorf("schema version %d", v)}
	}
	return int(v), nil
}

func (s *Store) readUint(meta Bucket, key []byte) (uint64, error) {
	raw, err := meta.Get(key)
	if err != nil {
		return 0, s.readErr(err)
	}
	if raw == nil {
		return 0, &CorruptError{Path: s.path, Database: s.database, Record: "meta", Addr: string(key), Err: errors.New("missing")}
	}
	v, err := strconv.ParseUint(string(raw), 10, 64)
	if err != nil {
		return 0, &CorruptError{Path: s.path, Database: s.database, Record: "meta", Addr: string(key), Err: fmt.Errorf("%q is not a number", raw)}
	}
	return v, nil
}

func (s *Store) readMeta(b buckets) (Meta, error) {
	var m Meta
	v, err := s.readUint(b.meta, keySchemaVersion)
	if err != nil {
		return m, err
	}
	m.SchemaVersion = int(v)
	if m.Serial, err = s.readUint(b.meta, keySerial); err != nil {
		return m, err
	}
	if v, err := b.meta.Get(keyRunStart); err != nil {
		return m, s.readErr(err)
	} else if v != nil {
		if m.RunStart, err = s.readUint(b.meta, keyRunStart); err != nil {
			return m, err
		}
	}
	lineage, err := b.meta.Get(keyLineage)
	if err != nil {
		return m, s.readErr(err)
	}
	if len(lineage) == 0 {
		return m, &CorruptError{Path: s.path, Database: s.database, Record: "meta", Addr: string(keyLineage), Err: errors.New("missing")}
	}
	m.Lineage = string(lineage)
	// The service is optional (see the package documentation); present, it
	// is never empty, since SetService refuses to write that.
	service, err := b.meta.Get(keyService)
	if err != nil {
		return m, s.readErr(err)
	}
	if service != nil {
		if len(service) == 0 {
			return m, &CorruptError{Path: s.path, Database: s.database, Record: "meta", Addr: string(keyService), Err: errors.New("empty")}
		}
		m.Service = string(service)
	}
	return m, nil
}

// Spent is what the generations submitted into this state were estimated
// to cost when they were sent, by currency, in millionths of its unit
// (Tx.AddSpent): its workspace's spend, which a ceiling bounds. nil when
// nothing priced was sent.
func (s *Store) Spent() (map[string]int64, error) {
	return readOne(s, func(b buckets) (map[string]int64, error) {
		raw, err := b.meta.Get(keySpent)
		if err != nil || raw == nil {
			return nil, s.readErr(err)
		}
		m, err := decodeSpent(raw)
		if err != nil {
			return nil, &CorruptError{Path: s.path, Database: s.database, Record: "meta", Addr: string(keySpent), Err: err}
		}
		return m, nil
	})
}

// decodeSpent reads the meta's spent record.
func decodeSpent(raw []byte) (map[string]int64, error) {
	var m map[string]int64
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("not a spend record: %w", err)
	}
	for cur, v := range m {
		if cur == "" || v < 0 {
			return nil, fmt.Errorf("not a spend record: %q: %d", cur, v)
		}
	}
	return m, nil
}

// Meta returns the file's schema version, lineage, serial and service.
func (s *Store) Meta() (Meta, error) { return readOne(s, s.readMeta) }

// Resource returns the resource recorded at addr, or nil, nil when there is
// none.
func (s *Store) Resource(addr addrs.Instance) (*Resource, error) {
	return readOne(s, func(b buckets) (*Resource, error) { return s.getResource(b, addr) })
}

// Intent returns the intent recorded at addr, or nil, nil when there is
// none.
func (s *Store) Intent(addr addrs.Instance) (*Intent, error) {
	return readOne(s, func(b buckets) (*Intent, error) { return s.getIntent(b, addr) })
}

// Snapshot reads the whole state in one read transaction. It fails on the
// first record it cannot decode, naming it: planning on a partial state
// would propose to generate again what is already paid for.
func (s *Store) Snapshot() (*Snapshot, error) { return s.snapshot(true) }

// PlanSnapshot is Snapshot without the records' creation details
// (Resource.Detail), which planning never reads: they are most of an
// applied record (about 1 KB of the simulator's 1.6), and would be most of
// the memory a large plan holds for the state.
func (s *Store) PlanSnapshot() (*Snapshot, error) { return s.snapshot(false) }

func (s *Store) snapshot(detail bool) (*Snapshot, error) {
	var snap *Snapshot
	err := s.viewBuckets(func(b buckets) error {
		meta, err := s.readMeta(b)
		if err != nil {
			return err
		}
		snap = &Snapshot{
			Meta:        meta,
			Intents:     make(map[addrs.Instance]*Intent),
			Protections: make(map[addrs.Instance]bool),
		}
		// The records are listed first and the map made at its size:
		// grown a record at a time, it left as much garbage as it holds,
		// a megabyte for 10,000 records, while the state is read.
		var recs []*Resource
		if err := s.forEach(b.resources, "resource", func(k, v []byte) error {
			r, err := decodeResourceRecord(k, v, true, detail)
			if err != nil {
				return err
			}
			recs = append(recs, r)
			return nil
		}); err != nil {
			return err
		}
		snap.Resources = make(map[addrs.Instance]*Resource, len(recs))
		for _, r := range recs {
			snap.Resources[r.Addr] = r
		}
		if err := s.forEach(b.intents, "intent", func(k, v []byte) error {
			in, err := decodeIntent(k, v)
			if err != nil {
				return err
			}
			snap.Intents[in.Addr] = in
			return nil
		}); err != nil {
			return err
		}
		return s.forEach(b.protections, "protection", func(k, v []byte) error {
			p, err := decodeProtection(k, v)
			if err != nil {
				return err
			}
			snap.Protections[p.Addr] = p.PreventDestroy
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return snap, nil
}

// forEach calls fn for every record of bucket, turning fn's errors into a
// CorruptError naming the record.
func (s *Store) forEach(bucket Bucket, record string, fn func(k, v []byte) error) error {
	return bucket.ForEach(func(k, v []byte) error {
		if v == nil {
			return &CorruptError{Path: s.path, Database: s.database, Record: record, Addr: string(k), Err: errors.New("a bucket where a record belongs")}
		}
		if err := fn(k, v); err != nil {
			return &CorruptError{Path: s.path, Database: s.database, Record: record, Addr: string(k), Err: err}
		}
		return nil
	})
}

// get decodes the record filed under addr in bucket, or returns nil, nil
// when there is none; an undecodable one is a CorruptError naming it.
func get[T any](s *Store, bucket Bucket, record string, addr addrs.Instance, decode func(k, v []byte) (*T, error)) (*T, error) {
	key := []byte(addr.String())
	v, err := bucket.Get(key)
	if err != nil {
		return nil, s.readErr(err)
	}
	if v == nil {
		return nil, nil
	}
	rec, err := decode(key, v)
	if err != nil {
		return nil, &CorruptError{Path: s.path, Database: s.database, Record: record, Addr: string(key), Err: err}
	}
	return rec, nil
}

func (s *Store) getResource(b buckets, addr addrs.Instance) (*Resource, error) {
	return get(s, b.resources, "resource", addr, decodeResource)
}

func (s *Store) getIntent(b buckets, addr addrs.Instance) (*Intent, error) {
	return get(s, b.intents, "intent", addr, decodeIntent)
}

func (s *Store) getProtection(b buckets, addr addrs.Instance) (*Protection, error) {
	return get(s, b.protections, "protection", addr, decodeProtection)
}

// Check runs the backend's check of its storage (bbolt's consistency
// check of the file's page structure) and then decodes every record, and
// returns every problem found (nil when there is none).
func (s *Store) Check() error {
	problems, err := s.be.CheckStorage()
	if err != nil {
		return fmt.Errorf("checking %s %s: %w", s.what(), s.path, err)
	}
	if len(problems) == 0 {
		// Reading records through a damaged page tree is not safe.
		err = s.view(func(tx RawTx) error {
			b, err := s.begin(tx)
			if err != nil {
				problems = append(problems, err)
				return nil
			}
			if _, err := s.readMeta(b); err != nil {
				problems = append(problems, err)
			}
			collect := func(bucket Bucket, record string, decode func(k, v []byte) error) error {
				return bucket.ForEach(func(k, v []byte) error {
					err := errors.New("a bucket where a record belongs")
					if v != nil {
						err = decode(k, v)
					}
					if err != nil {
						problems = append(problems, &CorruptError{Path: s.path, Database: s.database, Record: record, Addr: string(k), Err: err})
					}
					return nil
				})
			}
			return errors.Join(
				collect(b.resources, "resource", func(k, v []byte) error {
					_, err := decodeResource(k, v)
					return err
				}),
				collect(b.intents, "intent", func(k, v []byte) error {
					_, err := decodeIntent(k, v)
					return err
				}),
				collect(b.protections, "protection", func(k, v []byte) error {
					_, err := decodeProtection(k, v)
					return err
				}),
				func() error {
					if b.history == nil {
						return nil
					}
					return b.history.ForEach(func(k, v []byte) error {
						if _, err := decodeEntry(k, v); err != nil {
							problems = append(problems, &CorruptError{Path: s.path, Database: s.database, Record: "history", Addr: historyName(k), Err: err})
						}
						return nil
					})
				}(),
			)
		})
	}
	if err != nil {
		return fmt.Errorf("checking %s %s: %w", s.what(), s.path, err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s %s has %d problem(s):\n%w", s.what(), s.path, len(problems), errors.Join(problems...))
	}
	return nil
}

// Addresses lists the addresses that have a resource record and those that
// have an intent, without decoding any record, so that a state holding a
// damaged record can still be inspected and mended ('genform state rm'). A
// key that is no address at all is left out: no command could name it.
func (s *Store) Addresses() (resources, intents []addrs.Instance, err error) {
	err = s.viewBuckets(func(b buckets) error {
		var err error
		keys := func(bucket Bucket) ([]addrs.Instance, error) {
			var out []addrs.Instance
			err := bucket.ForEach(func(k, _ []byte) error {
				if a, ok := canonicalAddr(string(k)); ok {
					out = append(out, a)
				}
				return nil
			})
			return out, err
		}
		if resources, err = keys(b.resources); err != nil {
			return s.readErr(err)
		}
		intents, err = keys(b.intents)
		return s.readErr(err)
	})
	return resources, intents, err
}
