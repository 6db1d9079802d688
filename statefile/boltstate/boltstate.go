package boltstate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/genform/genform/internal/atomicfile"
	"github.com/genform/genform/statefile"
)

// Open opens the state file at path and takes its lock (exclusive, or
// shared with opts.ReadOnly), waiting up to opts.LockTimeout for another
// process to release it; past that it returns a *statefile.LockedError
// naming the holder. A reader (opts.ReadOnly without KeepWritersOut)
// finding a writer of this genform holding the lock reads, instead of
// waiting, the copy of the last committed state the writer makes for it
// (readcopy.go). It refuses, without changing it, a file that is not a
// genform state file, is truncated or corrupt, was written by a newer
// genform, or is a symbolic link; it upgrades, in one transaction, a file
// written by an older one.
func Open(path string, opts statefile.Options) (*statefile.Store, error) {
	be, created, err := open(path, opts)
	if err != nil {
		return nil, err
	}
	s, err := statefile.OpenBackend(be, opts)
	if err != nil {
		return nil, err
	}
	if created {
		// The new file's directory entry must survive a power loss too.
		if err := atomicfile.SyncDir(filepath.Dir(path)); err != nil {
			s.Close()
			return nil, fmt.Errorf("creating state file %s: %w", path, err)
		}
	}
	return s, nil
}

// open opens the file at path as Open does, up to the backend that
// statefile.OpenBackend takes, and says whether it created the file.
func open(path string, opts statefile.Options) (*backend, bool, error) {
	if path == "" {
		return nil, false, errors.New("opening state file: no path given")
	}
	if opts.ReadOnly && opts.Create {
		return nil, false, errors.New("opening state file: a file opened read-only cannot be created")
	}
	if !opts.ReadOnly || opts.KeepWritersOut {
		return openLocked(path, opts, opts.LockTimeout)
	}
	be, err := openReader(path, opts)
	return be, false, err
}

// openLocked opens the file at path under its lock, waiting up to timeout
// for it (0: trying once), and says whether it created the file. A writer
// records itself as the holder and starts answering readers' requests for
// a copy.
func openLocked(path string, opts statefile.Options, timeout time.Duration) (*backend, bool, error) {
	checked, err := prepare(path, opts.Create)
	if err != nil {
		return nil, false, err
	}
	created := checked == nil
	// bbolt's Timeout 0 means wait forever; 1ns makes its lock loop try
	// once and give up.
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
	var ce *statefile.CorruptError
	switch {
	case errors.As(err, &ce):
		return nil, false, err
	case errors.Is(err, berrors.ErrTimeout):
		le := &statefile.LockedError{Path: path, Shared: opts.ReadOnly, Holder: readHolder(path)}
		if opts.LockTimeout > 0 {
			le.Waited = opts.LockTimeout
		}
		return nil, false, le
	case isLinkRefused(err):
		return nil, false, linkError(path, "state file")
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, fmt.Errorf("opening state file: %w", err)
	case err != nil:
		return nil, false, fmt.Errorf("opening state file %s: %w", path, err)
	}

	// The lock was waited for on the file the path named when it was
	// opened: one removed (a workspace deleted) or replaced meanwhile is
	// not the state any more, and what is written to it would be lost.
	if fi, err := os.Stat(path); err != nil || file == nil {
		db.Close()
		return nil, false, fmt.Errorf("the state file %s was removed while genform waited for its lock (its workspace deleted?); run the command again", path)
	} else if ffi, err := file.Stat(); err != nil || !os.SameFile(fi, ffi) {
		db.Close()
		return nil, false, fmt.Errorf("the state file %s was replaced while genform waited for its lock; run the command again", path)
	}

	be := &backend{path: path, db: db, readOnly: opts.ReadOnly}
	if !opts.ReadOnly {
		// What a writer killed before this one left for readers is of no
		// use to anyone now: readers read only what this one makes.
		removeCopies(path)
		host, _ := os.Hostname()
		holder := statefile.Holder{PID: os.Getpid(), Host: host, Command: opts.Command, Started: time.Now().UTC().Truncate(time.Second)}
		be.copier = startCopier(path, db)
		if err := writeHolder(path, holder); err != nil {
			be.copier.close()
			db.Close()
			return nil, false, fmt.Errorf("opening state file %s: %w", path, err)
		}
	}
	return be, created, nil
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
			return nil, &statefile.NoStateError{Path: path}
		}
		return st, nil
	}
	if err := checkFile(f, st.Size()); err != nil {
		if re := (*readError)(nil); errors.As(err, &re) {
			return nil, fmt.Errorf("reading state file %s: %w", path, re.err)
		}
		ce := &statefile.CorruptError{Path: path, Err: err}
		nameBackup(ce, path)
		return nil, ce
	}
	return st, nil
}

// backend is a statefile.Backend on one state file, opened by Open.
type backend struct {
	path     string
	db       *bolt.DB
	readOnly bool
	// copier answers readers' requests while a writer holds the file
	// (readcopy.go); nil for a reader.
	copier *copier

	// verifyOnce runs the check of the page structure before the first
	// write, and verifyErr keeps its result (see verify).
	verifyOnce sync.Once
	verifyErr  error
}

func (b *backend) Name() string { return b.path }

func (b *backend) Database() bool { return false }

// View runs fn in a read transaction, under guard.
func (b *backend) View(fn func(statefile.RawTx) error) error {
	return guard(b.path, func() error {
		return b.db.View(func(tx *bolt.Tx) error { return fn(rawTx{tx}) })
	})
}

// Update runs fn in a read-write transaction, under guard, and commits it
// with an fsync when fn succeeds.
func (b *backend) Update(fn func(statefile.RawTx) error) error {
	return guard(b.path, func() error {
		btx, err := b.db.Begin(true)
		if err != nil {
			return fmt.Errorf("writing state file %s: %w", b.path, err)
		}
		committed := false
		defer func() {
			if !committed {
				_ = btx.Rollback()
			}
		}()
		if err := fn(rawTx{btx}); err != nil {
			return err
		}
		committed = true // Commit closes the transaction, even when it fails
		if err := btx.Commit(); err != nil {
			return fmt.Errorf("committing to state file %s: %w", b.path, err)
		}
		return nil
	})
}

// Batch is bbolt's DB.Batch, under guard.
func (b *backend) Batch(fn func(statefile.RawTx) error) error {
	return guard(b.path, func() error {
		return b.db.Batch(func(btx *bolt.Tx) error {
			// bbolt runs a batch in a goroutine of its own and recovers a
			// panic of fn there, to run fn again alone, in this goroutine
			// and under guard; a fault must be a panic there too.
			defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
			return fn(rawTx{btx})
		})
	})
}

// Migrate runs fn in one transaction, after checking the file's pages and
// copying the file to path.schema-N.backup, so a user who must go back to
// the older genform still can.
func (b *backend) Migrate(from int, fn func(statefile.RawTx) error) error {
	if err := b.verify(); err != nil {
		return err
	}
	backup := backupPath(b.path, from)
	if err := refuseLink(backup, "the copy of the state file kept before a schema upgrade"); err != nil {
		return fmt.Errorf("backing up state file %s before migrating it: %w", b.path, err)
	}
	err := guard(b.path, func() error {
		return b.db.Update(func(tx *bolt.Tx) error {
			if err := writeBackup(tx, backup); err != nil {
				return fmt.Errorf("backing up state file %s before migrating it: %w", b.path, err)
			}
			return fn(rawTx{tx})
		})
	})
	if err != nil {
		// The transaction rolled back: the backup is a copy of an unchanged
		// file and would only mislead.
		os.Remove(backup)
		return err
	}
	return nil
}

func (b *backend) BeforeWrite() error { return b.verify() }

func (b *backend) CheckStorage() ([]error, error) {
	var problems []error
	err := guard(b.path, func() error {
		return b.db.View(func(tx *bolt.Tx) error {
			var err error
			problems, err = checkPages(tx)
			return err
		})
	})
	return problems, err
}

// Close stops a writer answering readers and removes its copy, then
// removes its holder info, while the lock is still held, so it can never
// remove the next holder's.
func (b *backend) Close() error {
	var herr error
	if b.copier != nil {
		b.copier.close()
	}
	if !b.readOnly {
		herr = removeHolder(b.path)
	}
	var derr error
	if err := b.db.Close(); err != nil {
		derr = fmt.Errorf("closing state file %s: %w", b.path, err)
	}
	return errors.Join(herr, derr)
}
