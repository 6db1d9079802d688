package statefile

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/genform/genform/config/addrs"
)

// Options says how to open a state file.
type Options struct {
	// LockTimeout is how long to wait for the exclusive lock held by another
	// process; 0 fails at the first attempt.
	LockTimeout time.Duration
	// Command is the genform command opening the file (e.g. "apply"), shown
	// to anyone who finds the file locked.
	Command string
	// Create creates the file (mode 0600, missing parent directories 0700)
	// when it does not exist. Without it, a missing file is an error that
	// matches fs.ErrNotExist.
	Create bool
	// ReadOnly opens the file for reading only, under a shared lock: any
	// number of readers hold it together, and a writer waits for all of
	// them (and they for a writer, up to LockTimeout). A reader writes
	// nothing, not even the holder info, so it works on a read-only file
	// system; Update and Batch fail. It cannot be combined with Create,
	// and a file of an older schema, which only a writer can upgrade, is
	// refused.
	ReadOnly bool
}

// Store is an open state file. It holds the file's lock until Close:
// exclusive, or shared when opened ReadOnly. Its methods are safe for
// concurrent use: reads run in parallel, and Updates run one at a time.
type Store struct {
	path     string
	db       *bolt.DB
	readOnly bool
	// noHistory is set for a file of schema 1 opened read-only: it has no
	// history bucket yet (its first writer adds it), and reads as one with
	// an empty history.
	noHistory bool
	// now is the clock for record timestamps; tests replace it.
	now func() time.Time

	// verifyOnce runs the check of the page structure before the first
	// write, and verifyErr keeps its result (see verify).
	verifyOnce sync.Once
	verifyErr  error

	closeOnce sync.Once
	closeErr  error
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
}

// Snapshot is the whole state as of one moment.
type Snapshot struct {
	Meta        Meta
	Resources   map[addrs.Instance]*Resource
	Intents     map[addrs.Instance]*Intent
	Protections map[addrs.Instance]bool // true means prevent_destroy
}

// Open opens the state file at path and takes its lock (exclusive, or
// shared with opts.ReadOnly), waiting up to opts.LockTimeout for another
// process to release it; past that it returns a *LockedError naming the
// holder. It refuses, without changing it, a file that is not a genform
// state file, is truncated or corrupt, was written by a newer genform, or
// is a symbolic link; it upgrades, in one transaction, a file written by an
// older one.
func Open(path string, opts Options) (*Store, error) {
	if path == "" {
		return nil, errors.New("opening state file: no path given")
	}
	if opts.ReadOnly && opts.Create {
		return nil, errors.New("opening state file: a file opened read-only cannot be created")
	}
	checked, err := prepare(path, opts.Create)
	if err != nil {
		return nil, err
	}
	created := checked == nil
	// bbolt's Timeout 0 means wait forever; 1ns makes its lock loop try
	// once and give up.
	timeout := opts.LockTimeout
	if timeout <= 0 {
		timeout = time.Nanosecond
	}
	var file *os.File
	bopts := &bolt.Options{
		Timeout:  timeout,
		ReadOnly: opts.ReadOnly,
		// The freelist is written with every commit (NoFreelistSync off):
		// without it bbolt rebuilds the freelist by walking the whole file
		// at every Open, which costs time on every command. A reader does
		// not load it at all.
		NoFreelistSync: false,
		OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
			if name != path {
				return os.OpenFile(name, flag, perm)
			}
			// bbolt always opens with O_CREATE; without opts.Create a
			// missing file must stay missing (and be reported), not
			// appear empty.
			if !opts.Create {
				flag &^= os.O_CREATE
			}
			f, err := os.OpenFile(name, flag|oNoFollow, perm)
			if err != nil {
				return nil, err
			}
			// The file bbolt maps must be the one prepare checked, not
			// one put in its place since.
			if checked != nil {
				if fi, err := f.Stat(); err != nil || !os.SameFile(fi, checked) {
					f.Close()
					return nil, fmt.Errorf("the file was replaced while genform opened it; run the command again")
				}
			}
			file = f
			return f, nil
		},
	}
	var db *bolt.DB
	err = guard(path, func() error {
		// bbolt reads the freelist while it opens a file for writing, and
		// panics on a damaged one: then it returns no DB to close, and the
		// file it opened is unlocked and closed here. Its memory map is
		// left behind, until the process ends.
		returned := false
		defer func() {
			if !returned && file != nil {
				unlock(file)
				file.Close()
			}
		}()
		var err error
		db, err = bolt.Open(path, 0o600, bopts)
		returned = true
		return err
	})
	if db != nil {
		// Batch coalesces the steps of parallel jobs; a short window is
		// enough to gather the ones that arrive together, and each step
		// waits for it, so keep it well under bbolt's 10ms default.
		db.MaxBatchDelay = 2 * time.Millisecond
	}
	var ce *CorruptError
	switch {
	case errors.As(err, &ce):
		return nil, err
	case errors.Is(err, berrors.ErrTimeout):
		le := &LockedError{Path: path, Holder: readHolder(path)}
		if opts.LockTimeout > 0 {
			le.Waited = opts.LockTimeout
		}
		return nil, le
	case isLinkRefused(err):
		return nil, linkError(path, "state file")
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("opening state file: %w", err)
	case err != nil:
		return nil, fmt.Errorf("opening state file %s: %w", path, err)
	}

	s := &Store{path: path, db: db, readOnly: opts.ReadOnly, now: time.Now}
	if !opts.ReadOnly {
		host, _ := os.Hostname()
		holder := Holder{PID: os.Getpid(), Host: host, Command: opts.Command, Started: time.Now().UTC().Truncate(time.Second)}
		if err := writeHolder(path, holder); err != nil {
			db.Close()
			return nil, fmt.Errorf("opening state file %s: %w", path, err)
		}
	}
	if err := s.init(opts.Create); err != nil {
		s.Close()
		return nil, err
	}
	if created {
		// The new file's directory entry must survive a power loss too.
		if err := syncDir(filepath.Dir(path)); err != nil {
			s.Close()
			return nil, fmt.Errorf("creating state file %s: %w", path, err)
		}
	}
	return s, nil
}

// prepare checks what is at path before bbolt opens it, and creates the
// parent directory of a new file. It returns what it found at path, or nil
// when the file is to be created.
func prepare(path string, create bool) (os.FileInfo, error) {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if !create {
			return nil, &fs.PathError{Op: "open state file", Path: path, Err: fs.ErrNotExist}
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("creating state file %s: %w", path, err)
		}
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("opening state file: %w", err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, linkError(path, "state file")
	case !fi.Mode().IsRegular():
		// Checked before opening: opening a FIFO would wait for a writer.
		return nil, fmt.Errorf("state file %s is not a regular file", path)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow, 0)
	if isLinkRefused(err) {
		return nil, linkError(path, "state file")
	}
	if err != nil {
		return nil, fmt.Errorf("opening state file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("opening state file: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("state file %s is not a regular file", path)
	}
	if st.Size() == 0 {
		// Left by a genform stopped between creating the file and writing
		// its first page: nothing to lose, bbolt initialises it.
		if !create {
			return nil, &noStateError{path: path}
		}
		return st, nil
	}
	if err := checkFile(f, st.Size()); err != nil {
		if re := (*readError)(nil); errors.As(err, &re) {
			return nil, fmt.Errorf("reading state file %s: %w", path, re.err)
		}
		ce := &CorruptError{Path: path, Err: err}
		nameBackup(ce, path)
		return nil, ce
	}
	return st, nil
}

// init checks the genform layout inside the bbolt file: it creates it in a
// new file, upgrades an older one and refuses a newer or foreign one.
func (s *Store) init(create bool) error {
	const (
		fresh = iota
		foreign
		genform
	)
	kind := genform
	version := 0
	err := s.view(func(tx *bolt.Tx) error {
		root := tx.Bucket(bucketRoot)
		if root == nil {
			kind = fresh
			return tx.ForEach(func([]byte, *bolt.Bucket) error {
				kind = foreign
				return nil
			})
		}
		var err error
		version, err = s.readSchema(root)
		return err
	})
	if err != nil {
		return err
	}
	switch {
	case kind == foreign:
		return &CorruptError{Path: s.path, Err: errors.New("a bbolt database, but not a genform state file")}
	case kind == fresh && !create:
		return &noStateError{path: s.path}
	case kind == fresh:
		if err := s.create(); err != nil {
			return fmt.Errorf("creating state file %s: %w", s.path, err)
		}
	case version > currentSchema:
		return fmt.Errorf("state file %s was written by a newer genform (schema %d; this genform reads schema %d); upgrade genform", s.path, version, currentSchema)
	case version < currentSchema && s.readOnly && readableAsIs(version):
		s.noHistory = version < 2
	case version < currentSchema && s.readOnly:
		return fmt.Errorf("state file %s was written by an older genform (schema %d); this genform upgrades it to schema %d when a command that writes the state opens it (plan, apply): run one where the file is writable", s.path, version, currentSchema)
	case version < currentSchema:
		if err := s.migrate(version); err != nil {
			return err
		}
	}
	// Whatever path was taken, the file must now read as a whole layout.
	return s.view(func(btx *bolt.Tx) error {
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
	return s.update(func(tx *bolt.Tx) error {
		root, err := tx.CreateBucket(bucketRoot)
		if err != nil {
			return err
		}
		meta, err := root.CreateBucket(bucketMeta)
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
			if _, err := root.CreateBucket(name); err != nil {
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

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}

// Path returns the state file's path as given to Open.
func (s *Store) Path() string { return s.path }

// Close releases the lock and closes the file. A writer removes its holder
// info first, while the lock is still held, so it can never remove the next
// holder's. Calling it again returns the first result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		var herr error
		if !s.readOnly {
			herr = removeHolder(s.path)
		}
		var derr error
		if err := s.db.Close(); err != nil {
			derr = fmt.Errorf("closing state file %s: %w", s.path, err)
		}
		s.closeErr = errors.Join(herr, derr)
	})
	return s.closeErr
}

// buckets are the buckets of the layout, as one transaction sees them.
type buckets struct {
	meta, resources, intents, protections, history *bolt.Bucket
}

// begin finds the layout's buckets in tx; a missing one means the file is
// damaged.
func (s *Store) begin(tx *bolt.Tx) (buckets, error) {
	var b buckets
	root := tx.Bucket(bucketRoot)
	if root == nil {
		return b, &CorruptError{Path: s.path, Err: fmt.Errorf("bucket %q is missing", bucketRoot)}
	}
	for _, x := range []struct {
		name []byte
		b    **bolt.Bucket
	}{
		{bucketMeta, &b.meta},
		{bucketResources, &b.resources},
		{bucketIntents, &b.intents},
		{bucketProtections, &b.protections},
		{bucketHistory, &b.history},
	} {
		if *x.b = root.Bucket(x.name); *x.b == nil && !(s.noHistory && x.b == &b.history) {
			return b, &CorruptError{Path: s.path, Err: fmt.Errorf("bucket %s/%s is missing", bucketRoot, x.name)}
		}
	}
	return b, nil
}

func (s *Store) readSchema(root *bolt.Bucket) (int, error) {
	meta := root.Bucket(bucketMeta)
	if meta == nil {
		return 0, &CorruptError{Path: s.path, Err: fmt.Errorf("bucket %s/%s is missing", bucketRoot, bucketMeta)}
	}
	v, err := s.readUint(meta, keySchemaVersion)
	if err != nil {
		return 0, err
	}
	if v < 1 || v > 1<<20 {
		return 0, &CorruptError{Path: s.path, Record: "meta", Addr: string(keySchemaVersion), Err: fmt.Errorf("schema version %d", v)}
	}
	return int(v), nil
}

func (s *Store) readUint(meta *bolt.Bucket, key []byte) (uint64, error) {
	raw := meta.Get(key)
	if raw == nil {
		return 0, &CorruptError{Path: s.path, Record: "meta", Addr: string(key), Err: errors.New("missing")}
	}
	v, err := strconv.ParseUint(string(raw), 10, 64)
	if err != nil {
		return 0, &CorruptError{Path: s.path, Record: "meta", Addr: string(key), Err: fmt.Errorf("%q is not a number", raw)}
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
	lineage := b.meta.Get(keyLineage)
	if len(lineage) == 0 {
		return m, &CorruptError{Path: s.path, Record: "meta", Addr: string(keyLineage), Err: errors.New("missing")}
	}
	m.Lineage = string(lineage)
	// The service is optional (see the package documentation); present, it
	// is never empty, since SetService refuses to write that.
	if service := b.meta.Get(keyService); service != nil {
		if len(service) == 0 {
			return m, &CorruptError{Path: s.path, Record: "meta", Addr: string(keyService), Err: errors.New("empty")}
		}
		m.Service = string(service)
	}
	return m, nil
}

// Meta returns the file's schema version, lineage, serial and service.
func (s *Store) Meta() (Meta, error) {
	var m Meta
	err := s.view(func(tx *bolt.Tx) error {
		b, err := s.begin(tx)
		if err != nil {
			return err
		}
		m, err = s.readMeta(b)
		return err
	})
	return m, err
}

// Resource returns the resource recorded at addr, or nil, nil when there is
// none.
func (s *Store) Resource(addr addrs.Instance) (*Resource, error) {
	var r *Resource
	err := s.view(func(tx *bolt.Tx) error {
		b, err := s.begin(tx)
		if err != nil {
			return err
		}
		r, err = s.getResource(b, addr)
		return err
	})
	return r, err
}

// Intent returns the intent recorded at addr, or nil, nil when there is
// none.
func (s *Store) Intent(addr addrs.Instance) (*Intent, error) {
	var it *Intent
	err := s.view(func(tx *bolt.Tx) error {
		b, err := s.begin(tx)
		if err != nil {
			return err
		}
		it, err = s.getIntent(b, addr)
		return err
	})
	return it, err
}

// Snapshot reads the whole state in one read transaction. It fails on the
// first record it cannot decode, naming it: planning on a partial state
// would propose to generate again what is already paid for.
func (s *Store) Snapshot() (*Snapshot, error) {
	var snap *Snapshot
	err := s.view(func(tx *bolt.Tx) error {
		b, err := s.begin(tx)
		if err != nil {
			return err
		}
		meta, err := s.readMeta(b)
		if err != nil {
			return err
		}
		snap = &Snapshot{
			Meta:        meta,
			Resources:   make(map[addrs.Instance]*Resource, b.resources.Stats().KeyN),
			Intents:     make(map[addrs.Instance]*Intent),
			Protections: make(map[addrs.Instance]bool),
		}
		if err := s.forEach(b.resources, "resource", func(k, v []byte) error {
			r, err := decodeResource(k, v)
			if err != nil {
				return err
			}
			snap.Resources[r.Addr] = r
			return nil
		}); err != nil {
			return err
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
func (s *Store) forEach(bucket *bolt.Bucket, record string, fn func(k, v []byte) error) error {
	return bucket.ForEach(func(k, v []byte) error {
		if v == nil {
			return &CorruptError{Path: s.path, Record: record, Addr: string(k), Err: errors.New("a bucket where a record belongs")}
		}
		if err := fn(k, v); err != nil {
			return &CorruptError{Path: s.path, Record: record, Addr: string(k), Err: err}
		}
		return nil
	})
}

// get decodes the record filed under addr in bucket, or returns nil, nil
// when there is none; an undecodable one is a CorruptError naming it.
func get[T any](s *Store, bucket *bolt.Bucket, record string, addr addrs.Instance, decode func(k, v []byte) (*T, error)) (*T, error) {
	key := []byte(addr.String())
	v := bucket.Get(key)
	if v == nil {
		return nil, nil
	}
	rec, err := decode(key, v)
	if err != nil {
		return nil, &CorruptError{Path: s.path, Record: record, Addr: string(key), Err: err}
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

// Check runs bbolt's consistency check of the file's page structure and
// then decodes every record, and returns every problem found (nil when
// there is none).
func (s *Store) Check() error {
	var problems []error
	err := s.view(func(tx *bolt.Tx) error {
		var err error
		if problems, err = checkPages(tx); err != nil {
			return err
		}
		if len(problems) > 0 {
			// Reading records through a damaged page tree is not safe.
			return nil
		}
		b, err := s.begin(tx)
		if err != nil {
			problems = append(problems, err)
			return nil
		}
		if _, err := s.readMeta(b); err != nil {
			problems = append(problems, err)
		}
		collect := func(bucket *bolt.Bucket, record string, decode func(k, v []byte) error) {
			_ = bucket.ForEach(func(k, v []byte) error {
				err := errors.New("a bucket where a record belongs")
				if v != nil {
					err = decode(k, v)
				}
				if err != nil {
					problems = append(problems, &CorruptError{Path: s.path, Record: record, Addr: string(k), Err: err})
				}
				return nil
			})
		}
		collect(b.resources, "resource", func(k, v []byte) error {
			_, err := decodeResource(k, v)
			return err
		})
		collect(b.intents, "intent", func(k, v []byte) error {
			_, err := decodeIntent(k, v)
			return err
		})
		collect(b.protections, "protection", func(k, v []byte) error {
			_, err := decodeProtection(k, v)
			return err
		})
		if b.history != nil {
			_ = b.history.ForEach(func(k, v []byte) error {
				if _, err := decodeEntry(k, v); err != nil {
					problems = append(problems, &CorruptError{Path: s.path, Record: "history", Addr: historyName(k), Err: err})
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("checking state file %s: %w", s.path, err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("state file %s has %d problem(s):\n%w", s.path, len(problems), errors.Join(problems...))
	}
	return nil
}

// Addresses lists the addresses that have a resource record and those that
// have an intent, without decoding any record, so that a state holding a
// damaged record can still be inspected and mended ('genform state rm'). A
// key that is no address at all is left out: no command could name it.
func (s *Store) Addresses() (resources, intents []addrs.Instance, err error) {
	err = s.view(func(tx *bolt.Tx) error {
		b, err := s.begin(tx)
		if err != nil {
			return err
		}
		keys := func(bucket *bolt.Bucket) []addrs.Instance {
			var out []addrs.Instance
			bucket.ForEach(func(k, _ []byte) error {
				if a, ok := canonicalAddr(string(k)); ok {
					out = append(out, a)
				}
				return nil
			})
			return out
		}
		resources, intents = keys(b.resources), keys(b.intents)
		return nil
	})
	return resources, intents, err
}
