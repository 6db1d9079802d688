package boltstate

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// releaser gives back to the kernel the pages of the state file's mapping
// while a read-only ForEach reads through it, with madvise(MADV_DONTNEED).
//
// What it buys: bbolt reads the file through a shared, read-only mapping,
// and every page a reader touches stays resident until the store closes.
// The kernel also maps the cached pages around each one touched (fault
// around, 64 KiB), so reading every record of a file whose pages are
// scattered maps most of the file: 36 MB for 10,000 applied images, on
// top of the decoded records, held while the plan is made. Every
// releaseEvery pages read, and at the end, the whole mapping is given
// back; a page given back is still in the page cache, and touching it
// again (the next record, a branch page) only maps it again.
//
// Only the mapping is ever advised: a value of a read-write transaction
// may be heap memory, which the advice would zero, so rawTx hands a
// releaser only to read-only transactions, and passed ignores a value
// outside the mapping. TestSnapshotGivesBackTheFilesPages guards it.
type releaser struct {
	lo, hi   uintptr        // the mapped pages of the file in use
	base     unsafe.Pointer // a pointer into the mapping, at baseAddr
	baseAddr uintptr
	page     uintptr
	last     uintptr // the page of the last value read
	pages    int     // pages read since the last release
}

// releaseEvery is how many pages a ForEach reads between releases: at most
// about 16 times as many are then resident (fault around), 4 MiB.
const releaseEvery = 64

// newReleaser covers the mapping of size bytes at data.
func newReleaser(data uintptr, size int64) *releaser {
	return &releaser{lo: data, hi: data + uintptr(size), page: uintptr(os.Getpagesize())}
}

// passed notes that v, just read, is not needed any more.
func (r *releaser) passed(v []byte) {
	if r == nil || len(v) == 0 {
		return
	}
	p := unsafe.Pointer(unsafe.SliceData(v))
	a := uintptr(p)
	if a < r.lo || a+uintptr(len(v)) > r.hi {
		return // not in the mapping
	}
	if r.base == nil {
		r.base, r.baseAddr = p, a
	}
	if pg := a &^ (r.page - 1); pg != r.last {
		r.last = pg
		if r.pages++; r.pages >= releaseEvery {
			r.done()
		}
	}
}

// done gives back the whole mapping.
func (r *releaser) done() {
	if r == nil || r.base == nil {
		return
	}
	r.pages = 0
	lo := r.lo &^ (r.page - 1)
	b := unsafe.Slice((*byte)(unsafe.Add(r.base, -int(r.baseAddr-lo))), int(r.hi-lo))
	_ = unix.Madvise(b, unix.MADV_DONTNEED) // advice: a failure only keeps the pages
}
