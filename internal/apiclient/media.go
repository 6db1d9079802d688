package apiclient

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/genform/genform/internal/atomicfile"
)

// sniffLen is how many first bytes of a download decide what it is: as
// many as net/http.DetectContentType reads.
const sniffLen = 512

// extensions maps media types to file extensions.
var extensions = map[string]string{
	"image/png":       "png",
	"image/jpeg":      "jpg",
	"image/jpg":       "jpg", // not registered, but seen in the wild
	"image/gif":       "gif",
	"image/webp":      "webp",
	"image/bmp":       "bmp",
	"image/tiff":      "tiff",
	"image/avif":      "avif",
	"image/heic":      "heic",
	"video/mp4":       "mp4",
	"video/webm":      "webm",
	"video/quicktime": "mov",
	"video/avi":       "avi",
}

// genericTypes are the Content-Types that say nothing about what a file
// is: storage services send them for anything uploaded without a type,
// so the bytes decide.
var genericTypes = map[string]bool{
	"":                         true,
	"application/octet-stream": true,
	"binary/octet-stream":      true,
}

// mediaType decides whether a download is an image or a video, from the
// Content-Type the server declared and from its first bytes, and returns
// the media type its file is named after. Both must agree that it is
// media: a declared type of another kind (an HTML error page sent with
// 200, a JSON answer) and bytes that are not a known image or video
// container are refused, since saving them as an output would report a
// generation done that is not. A generic declared type
// (application/octet-stream) leaves it to the bytes.
func mediaTypeOf(declared string, head []byte) (string, error) {
	dt, _, err := mime.ParseMediaType(declared)
	if err != nil {
		dt = strings.TrimSpace(declared)
	}
	dt = strings.ToLower(dt)
	sniffed := sniffMedia(head)
	switch {
	case len(head) == 0:
		return "", fmt.Errorf("the server sent an empty file (%s), not an image or a video", describeType(declared))
	case !genericTypes[dt] && !strings.HasPrefix(dt, "image/") && !strings.HasPrefix(dt, "video/"):
		return "", fmt.Errorf("the server sent %s, not an image or a video", describeType(declared))
	case sniffed == "":
		got, _, _ := mime.ParseMediaType(http.DetectContentType(head))
		return "", fmt.Errorf("the server declared %s, but the file's first bytes are %s, not an image or a video", describeType(declared), got)
	}
	// The bytes name the more trustworthy type; the declared one names
	// formats the sniffer does not know apart.
	if _, ok := extensions[sniffed]; ok {
		return sniffed, nil
	}
	if _, ok := extensions[dt]; ok {
		return dt, nil
	}
	return sniffed, nil
}

// describeType shows a Content-Type in a message: escaped, since the
// service chose it, and named when absent.
func describeType(ct string) string {
	if strings.TrimSpace(ct) == "" {
		return "no Content-Type"
	}
	return fmt.Sprintf("%q", ct)
}

// sniffMedia names the image or video type of a file from its first
// bytes, or returns "" when they are not one: net/http.DetectContentType
// for the formats it knows (PNG, JPEG, GIF, WebP, BMP, WebM, MP4, AVI),
// and the containers it does not tell apart (ISO media files such as
// QuickTime, AVIF and HEIC; TIFF) by their signatures.
func sniffMedia(head []byte) string {
	if t, _, err := mime.ParseMediaType(http.DetectContentType(head)); err == nil &&
		(strings.HasPrefix(t, "image/") || strings.HasPrefix(t, "video/")) {
		return t
	}
	switch {
	case len(head) >= 12 && string(head[4:8]) == "ftyp":
		switch string(head[8:12]) {
		case "avif", "avis":
			return "image/avif"
		case "heic", "heix", "mif1", "msf1":
			return "image/heic"
		case "qt  ":
			return "video/quicktime"
		}
		return "video/mp4"
	case bytes.HasPrefix(head, []byte("II*\x00")), bytes.HasPrefix(head, []byte("MM\x00*")):
		return "image/tiff"
	}
	return ""
}

// InlineMedia checks that data, a file a provider answered with inline,
// is an image or a video as WriteMedia would write it, and returns its
// media type and the extension its file is named with.
func InlineMedia(data []byte, contentType string) (mediaType, ext string, err error) {
	mt, err := mediaTypeOf(contentType, data[:min(len(data), sniffLen)])
	if err != nil {
		return "", "", err
	}
	return mt, extensionOf(mt), nil
}

// extensionOf is the file extension of media type mt ("bin" for a type
// with none).
func extensionOf(mt string) string {
	if ext := extensions[mt]; ext != "" {
		return ext
	}
	return "bin"
}

// WriteMedia writes data, a file a provider answered with inline (no URL
// to download it from), into dir as base.ext, as Download writes a
// download: its type checked from its first bytes and contentType, ext
// named by that type, through a temporary file renamed into place, and no
// larger than maxSize (0 for the default).
func WriteMedia(dir, base string, data []byte, contentType string, maxSize int64) (*Downloaded, error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxDownloadSize
	}
	op := "writing the inline output " + base
	if int64(len(data)) > maxSize {
		return nil, fmt.Errorf("%s: %d bytes, more than the largest download allowed (%d bytes; max_download_size)", op, len(data), maxSize)
	}
	mt, ext, err := InlineMedia(data, contentType)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	final := filepath.Join(dir, base+"."+ext)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, &LocalError{Path: dir, Err: err}
	}
	if err := atomicfile.Write(final, 0o644, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, atomicfile.TempPattern("."+base+".*"+tempSuffix)); err != nil {
		return nil, &LocalError{Path: final, Err: err}
	}
	sum := sha256.Sum256(data)
	return &Downloaded{Path: final, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), ContentType: cmp.Or(contentType, mt)}, nil
}

// IsExpiredLink reports whether err is a download refused as a link that
// no longer leads to the file (403, 404 or 410 on the media URL): a
// provider whose URLs expire hands out fresh ones when its job is fetched
// again.
func IsExpiredLink(err error) bool {
	var se *Error
	if !errors.As(err, &se) || !se.media {
		return false
	}
	switch se.HTTPStatus {
	case http.StatusForbidden, http.StatusNotFound, http.StatusGone:
		return true
	}
	return false
}
