package statefile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
)

// Records are written in the protocol buffers wire format, hand-encoded: each
// field is a varint key (field number << 3 | wire type) followed by a varint
// or a length-prefixed byte string. The format was chosen over JSON for
// speed: a no-op plan of 10,000 resources has 0.5 s in total, and
// encoding/json needs about 180 ms to decode 10,000 resource records of four
// outputs each on a 2-core machine, where this decoder needs about 20 ms
// (BenchmarkDecodeResource), most of it copying bytes out of bbolt's memory.
// It keeps what JSON would have given: fields are tagged, so a reader skips
// fields it does not know and a record can grow without a schema change,
// and a record can be inspected with standard tools (protoc --decode_raw).
//
// Only the wire types genform writes (varint and bytes) have meaning here;
// fixed32 and fixed64 fields are skipped like any unknown field, and group
// wire types are refused.

// Wire types, as protocol buffers numbers them.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// maxFieldNumber bounds field numbers so that a key always fits a uint64
// without overflow and garbage does not produce absurd numbers.
const maxFieldNumber = 1<<29 - 1

// encoder appends fields to a byte slice. Zero values are left out, as in
// proto3, so a decoder reads an absent field as the zero value.
type encoder struct {
	b []byte
}

func (e *encoder) key(field, wire int) {
	e.b = binary.AppendUvarint(e.b, uint64(field)<<3|uint64(wire))
}

func (e *encoder) uvarint(field int, v uint64) {
	if v == 0 {
		return
	}
	e.key(field, wireVarint)
	e.b = binary.AppendUvarint(e.b, v)
}

// svarint writes a signed value zigzag-encoded (protobuf's sint64), so small
// negative numbers stay short.
func (e *encoder) svarint(field int, v int64) {
	e.uvarint(field, uint64(v<<1)^uint64(v>>63))
}

func (e *encoder) bool(field int, v bool) {
	if v {
		e.uvarint(field, 1)
	}
}

func (e *encoder) string(field int, s string) {
	if s == "" {
		return
	}
	e.key(field, wireBytes)
	e.b = binary.AppendUvarint(e.b, uint64(len(s)))
	e.b = append(e.b, s...)
}

// repeatedString writes one entry, even an empty one: in a list, an empty
// entry is still an entry.
func (e *encoder) repeatedString(field int, s string) {
	e.key(field, wireBytes)
	e.b = binary.AppendUvarint(e.b, uint64(len(s)))
	e.b = append(e.b, s...)
}

func (e *encoder) bytes(field int, b []byte) {
	if len(b) == 0 {
		return
	}
	e.key(field, wireBytes)
	e.b = binary.AppendUvarint(e.b, uint64(len(b)))
	e.b = append(e.b, b...)
}

// message writes a nested message built by fn. The nested bytes are built in
// place after a reserved length prefix, then moved if the length needed more
// than the one byte reserved.
func (e *encoder) message(field int, fn func(*encoder)) {
	e.key(field, wireBytes)
	lenAt := len(e.b)
	e.b = append(e.b, 0)
	start := len(e.b)
	fn(e)
	n := len(e.b) - start
	if n < 0x80 {
		e.b[lenAt] = byte(n)
		return
	}
	var lenBuf [binary.MaxVarintLen64]byte
	ln := binary.PutUvarint(lenBuf[:], uint64(n))
	e.b = append(e.b, lenBuf[:ln-1]...) // grow by the extra length bytes
	copy(e.b[start+ln-1:], e.b[start:start+n])
	copy(e.b[lenAt:], lenBuf[:ln])
}

// time writes a timestamp as protobuf's google.protobuf.Timestamp does:
// seconds (1) and nanoseconds (2) since the Unix epoch. The zero time is
// left out.
func (e *encoder) time(field int, t time.Time) {
	if t.IsZero() {
		return
	}
	e.message(field, func(e *encoder) {
		e.svarint(1, t.Unix())
		e.uvarint(2, uint64(t.Nanosecond()))
	})
}

// field is one decoded field: its number, wire type, and either its varint
// value or the [start, end) range of its bytes in the record.
type field struct {
	num, wire  int
	v          uint64
	start, end int
}

// reader walks the fields of a record or of a nested message in it. buf is
// the whole record; str is a string copy of a prefix of it, so that string
// fields become substrings of one allocation instead of one allocation each.
type reader struct {
	buf      []byte
	str      string
	off, end int
	f        field
	err      error
}

func newReader(buf []byte, str string) reader {
	return reader{buf: buf, str: str, end: len(buf)}
}

var (
	errTruncated = errors.New("truncated field")
	errVarint    = errors.New("malformed varint")
)

// next reads the next field into r.f. It returns false at the end of the
// message or on an error, which it leaves in r.err.
func (r *reader) next() bool {
	if r.err != nil || r.off >= r.end {
		return false
	}
	k, n := binary.Uvarint(r.buf[r.off:r.end])
	if n <= 0 {
		r.err = fmt.Errorf("at byte %d: %w", r.off, errVarint)
		return false
	}
	at := r.off
	r.off += n
	num, wire := k>>3, int(k&7)
	if num == 0 || num > maxFieldNumber {
		r.err = fmt.Errorf("at byte %d: invalid field number %d", at, num)
		return false
	}
	r.f = field{num: int(num), wire: wire}
	switch wire {
	case wireVarint:
		v, n := binary.Uvarint(r.buf[r.off:r.end])
		if n <= 0 {
			r.err = fmt.Errorf("field %d at byte %d: %w", num, at, errVarint)
			return false
		}
		r.f.v = v
		r.off += n
	case wireBytes:
		l, n := binary.Uvarint(r.buf[r.off:r.end])
		if n <= 0 {
			r.err = fmt.Errorf("field %d at byte %d: %w", num, at, errVarint)
			return false
		}
		r.off += n
		if l > uint64(r.end-r.off) {
			r.err = fmt.Errorf("field %d at byte %d: %w (%d bytes declared, %d left)", num, at, errTruncated, l, r.end-r.off)
			return false
		}
		r.f.start, r.f.end = r.off, r.off+int(l)
		r.off = r.f.end
	case wireFixed64, wireFixed32:
		size := 8
		if wire == wireFixed32 {
			size = 4
		}
		if r.end-r.off < size {
			r.err = fmt.Errorf("field %d at byte %d: %w", num, at, errTruncated)
			return false
		}
		r.off += size
	default:
		r.err = fmt.Errorf("field %d at byte %d: unsupported wire type %d", num, at, wire)
		return false
	}
	return true
}

// want checks the current field's wire type; a known field with another
// type means the bytes are not what genform wrote.
func (r *reader) want(wire int) bool {
	if r.f.wire != wire {
		r.err = fmt.Errorf("field %d has wire type %d, want %d", r.f.num, r.f.wire, wire)
		return false
	}
	return true
}

func (r *reader) string() string {
	if !r.want(wireBytes) {
		return ""
	}
	if r.f.end <= len(r.str) {
		return r.str[r.f.start:r.f.end]
	}
	return string(r.buf[r.f.start:r.f.end])
}

// bytes returns a copy: the record's buffer belongs to the backend (bbolt's
// memory map) and is only valid inside the transaction.
func (r *reader) bytes() []byte {
	if !r.want(wireBytes) {
		return nil
	}
	return append([]byte(nil), r.buf[r.f.start:r.f.end]...)
}

func (r *reader) uvarint() uint64 {
	if !r.want(wireVarint) {
		return 0
	}
	return r.f.v
}

func (r *reader) svarint() int64 {
	u := r.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

func (r *reader) int() int {
	v := r.svarint()
	if v < math.MinInt || v > math.MaxInt {
		r.err = fmt.Errorf("field %d: value %d out of range", r.f.num, v)
		return 0
	}
	return int(v)
}

func (r *reader) bool() bool {
	v := r.uvarint()
	if v > 1 {
		r.err = fmt.Errorf("field %d: boolean value %d", r.f.num, v)
	}
	return v == 1
}

// sub returns a reader over the current field's nested message.
func (r *reader) sub() reader {
	if !r.want(wireBytes) {
		return reader{err: r.err}
	}
	return reader{buf: r.buf, str: r.str, off: r.f.start, end: r.f.end}
}

// time decodes a timestamp written by encoder.time, always in UTC.
func (r *reader) time() time.Time {
	s := r.sub()
	var sec int64
	var nsec uint64
	for s.next() {
		switch s.f.num {
		case 1:
			sec = s.svarint()
		case 2:
			nsec = s.uvarint()
		}
	}
	if s.err == nil && nsec >= 1e9 {
		s.err = fmt.Errorf("nanoseconds %d out of range", nsec)
	}
	if s.err != nil {
		r.err = fmt.Errorf("timestamp in field %d: %w", r.f.num, s.err)
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec)).UTC()
}

// stringPrefix returns how much of a record to copy into one string for its
// string fields: everything up to the end of the last field that is not one
// of the blob fields, which are copied as bytes anyway. The encoder writes
// blobs last, so the blobs are not copied twice. It also counts the fields
// numbered count, so the decoder can size a slice once.
func stringPrefix(buf []byte, isBlob func(num int) bool, count int) (prefix, counted int) {
	r := newReader(buf, "")
	for r.next() {
		if r.f.num == count {
			counted++
		}
		if !isBlob(r.f.num) {
			prefix = r.off
		}
	}
	if r.err != nil {
		// Let the decoder report the error at the right field.
		return len(buf), 0
	}
	return prefix, counted
}
