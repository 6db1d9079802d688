package thumbnail

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/png"
	"sync"
)

// Encode is img as PNG bytes. An opaque picture (every thumbnail of an
// opaque source) is written here: RGB rows, each with the Sub filter,
// compressed at zlib's fastest level. image/png tries five filters on
// every row and keeps the best, which cost a comment's thumbnails a
// seventh of their time for files a few percent smaller; a thumbnail is
// written once and shown small. Others go through image/png.
func Encode(img *image.RGBA) ([]byte, error) {
	if !img.Opaque() {
		var b bytes.Buffer
		enc := png.Encoder{CompressionLevel: png.BestSpeed}
		if err := enc.Encode(&b, img); err != nil {
			return nil, fmt.Errorf("encoding the thumbnail: %w", err)
		}
		return b.Bytes(), nil
	}
	w, h := img.Rect.Dx(), img.Rect.Dy()
	st := states.Get().(*encodeState)
	defer states.Put(st)
	st.idat.Reset()
	st.z.Reset(&st.idat)
	if cap(st.row) < 1+3*w {
		st.row = make([]byte, 1+3*w)
	}
	row := st.row[:1+3*w]
	row[0] = 1 // Sub: each byte less the one a pixel to its left
	for y := range h {
		pix := img.Pix[img.PixOffset(img.Rect.Min.X, img.Rect.Min.Y+y):]
		out := row[1:]
		var pr, pg, pb byte
		for x := range w {
			r, g, b := pix[4*x], pix[4*x+1], pix[4*x+2]
			out[3*x], out[3*x+1], out[3*x+2] = r-pr, g-pg, b-pb
			pr, pg, pb = r, g, b
		}
		if _, err := st.z.Write(row); err != nil {
			return nil, fmt.Errorf("encoding the thumbnail: %w", err)
		}
	}
	if err := st.z.Close(); err != nil {
		return nil, fmt.Errorf("encoding the thumbnail: %w", err)
	}
	out := bytes.NewBuffer(make([]byte, 0, st.idat.Len()+64))
	out.WriteString("\x89PNG\r\n\x1a\n")
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 8, 2 // 8 bits a sample, RGB
	chunk(out, "IHDR", ihdr[:])
	chunk(out, "IDAT", st.idat.Bytes())
	chunk(out, "IEND", nil)
	return out.Bytes(), nil
}

// chunk writes one PNG chunk: its length, type, data and CRC.
func chunk(b *bytes.Buffer, typ string, data []byte) {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(data)))
	b.Write(n[:])
	crc := crc32.NewIEEE()
	crc.Write([]byte(typ))
	crc.Write(data)
	b.WriteString(typ)
	b.Write(data)
	binary.BigEndian.PutUint32(n[:], crc.Sum32())
	b.Write(n[:])
}

// encodeState is what encoding a thumbnail reuses: the zlib writer (its
// compressor's tables are most of a megabyte), the compressed bytes, and
// a row.
type encodeState struct {
	z    *zlib.Writer
	idat bytes.Buffer
	row  []byte
}

var states = sync.Pool{New: func() any {
	st := &encodeState{}
	st.z, _ = zlib.NewWriterLevel(&st.idat, zlib.BestSpeed)
	return st
}}
