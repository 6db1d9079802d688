package boltstate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// checkFile reads a state file's bbolt header before bbolt opens it, and
// refuses a file bbolt would misread. bbolt memory-maps the file and trusts
// the header's high-water mark: on a truncated file it reads pages past the
// end and panics (or faults, which Go cannot recover from) instead of
// returning an error. So genform checks the two meta pages and the file
// length here, with only reads, which also guarantees that a refused file is
// left untouched.
//
// The layout mirrors go.etcd.io/bbolt/internal/common (page header, Meta)
// and bbolt's own choice of meta page; it is bbolt's on-disk format, which
// is stable (format version 2 since 2014). No lock is needed to run it:
// bbolt grows the file before it writes a meta page naming the new size,
// never shrinks it, and writes one meta page per commit, so the other one
// is always whole.
func checkFile(f *os.File, size int64) error {
	_, err := readHead(f, size)
	return err
}

// readHead is checkFile, and returns the meta page bbolt would open the
// file with: its txid is that of the last transaction committed to it.
func readHead(f *os.File, size int64) (boltMeta, error) {
	if size < 2*minPageSize {
		return boltMeta{}, fmt.Errorf("file is %d bytes, too short for a bbolt database", size)
	}
	// bbolt's getPageSize: the page size is in meta page 0, or failing that
	// in meta page 1, whose offset is the unknown page size.
	pageSize := 0
	var buf [4096]byte
	// What was wrong with the meta pages, for the message: a file with the
	// magic number but a bad checksum is a damaged database, not a stranger.
	var badVersion, badSum bool
	note := func(err error) {
		switch err {
		case errBoltVersion:
			badVersion = true
		case errBoltSum:
			badSum = true
		}
	}
	readAt := func(off int64) (int, error) {
		n, err := f.ReadAt(buf[:], off)
		if err != nil && err != io.EOF {
			return n, &readError{err}
		}
		return n, nil
	}
	n, err := readAt(0)
	if err != nil {
		return boltMeta{}, err
	}
	if n == len(buf) {
		if m, err := parseMeta(buf[:]); err == nil {
			pageSize = int(m.pageSize)
		} else {
			note(err)
		}
	}
	for i := 0; pageSize == 0 && i <= 14; i++ {
		pos := int64(minPageSize) << i
		if pos >= size-minPageSize {
			break
		}
		n, err := readAt(pos)
		if err != nil {
			return boltMeta{}, err
		}
		if n < pageHeaderSize+metaSize {
			continue
		}
		if m, err := parseMeta(buf[:n]); err == nil {
			pageSize = int(m.pageSize)
		} else {
			note(err)
		}
	}
	if pageSize == 0 {
		switch {
		case badSum:
			return boltMeta{}, errors.New("both bbolt meta pages fail their checksum")
		case badVersion:
			return boltMeta{}, errors.New("unsupported bbolt format version")
		default:
			return boltMeta{}, errors.New("not a bbolt database")
		}
	}
	if pageSize < minPageSize || pageSize&(pageSize-1) != 0 {
		return boltMeta{}, fmt.Errorf("invalid page size %d", pageSize)
	}
	if size < 2*int64(pageSize) {
		return boltMeta{}, fmt.Errorf("truncated: %d bytes, less than its two header pages", size)
	}

	// bbolt's DB.meta: the valid meta page with the higher transaction id.
	var metas [2]*boltMeta
	for i := range metas {
		n, err := readAt(int64(i * pageSize))
		if err != nil {
			return boltMeta{}, err
		}
		if n < pageHeaderSize+metaSize {
			continue
		}
		if m, err := parseMeta(buf[:n]); err == nil {
			metas[i] = &m
		}
	}
	m := metas[0]
	if m == nil || (metas[1] != nil && metas[1].txid > m.txid) {
		m = metas[1]
	}
	if m == nil {
		return boltMeta{}, errors.New("both bbolt meta pages fail their checksum")
	}
	if m.pageSize != uint32(pageSize) {
		return boltMeta{}, fmt.Errorf("meta pages disagree on the page size (%d, %d)", pageSize, m.pageSize)
	}
	need := int64(m.pgid) * int64(pageSize)
	if m.pgid > uint64(size) || need > size {
		return boltMeta{}, fmt.Errorf("truncated: %d bytes, its header says %d", size, need)
	}
	if m.root >= m.pgid || (m.freelist >= m.pgid && m.freelist != noFreelist) {
		return boltMeta{}, errors.New("bbolt meta page points past the end of the data")
	}
	return *m, nil
}

// readError is a failure to read the file, as opposed to what was read
// being wrong: the file is not to be called corrupt for it.
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

const (
	minPageSize    = 1024
	pageHeaderSize = 16                 // id u64, flags u16, count u16, overflow u32
	metaSize       = 64                 // the Meta struct, checksum included
	metaSumOffset  = 56                 // checksum covers the meta bytes before it
	boltMagic      = 0xED0CDAED         // common.Magic
	boltVersion    = 2                  // common.Version
	noFreelist     = 0xffffffffffffffff // common.PgidNoFreelist
)

var (
	errNotBolt     = errors.New("bad magic")
	errBoltVersion = errors.New("bad version")
	errBoltSum     = errors.New("bad checksum")
)

// boltMeta holds the fields of bbolt's meta page that checkFile needs.
type boltMeta struct {
	pageSize             uint32
	root, freelist, pgid uint64
	txid                 uint64
}

// parseMeta decodes and validates the meta page at the start of page, in
// the byte order bbolt writes (the machine's own).
func parseMeta(page []byte) (boltMeta, error) {
	b := page[pageHeaderSize : pageHeaderSize+metaSize]
	le := binary.NativeEndian
	if le.Uint32(b[0:]) != boltMagic {
		return boltMeta{}, errNotBolt
	}
	if le.Uint32(b[4:]) != boltVersion {
		return boltMeta{}, errBoltVersion
	}
	h := fnv.New64a()
	h.Write(b[:metaSumOffset])
	if h.Sum64() != le.Uint64(b[metaSumOffset:]) {
		return boltMeta{}, errBoltSum
	}
	return boltMeta{
		pageSize: le.Uint32(b[8:]),
		// b[12:16] flags; b[16:32] root bucket (root pgid, sequence)
		root:     le.Uint64(b[16:]),
		freelist: le.Uint64(b[32:]),
		pgid:     le.Uint64(b[40:]),
		txid:     le.Uint64(b[48:]),
	}, nil
}

// IsStateFile reports whether head, the start of a file, is a state file
// (bbolt's first meta page) rather than a state document: what a user
// moving a state file may push by mistake.
func IsStateFile(head []byte) bool {
	const magicAt = pageHeaderSize
	return len(head) >= magicAt+4 && binary.NativeEndian.Uint32(head[magicAt:]) == boltMagic
}
