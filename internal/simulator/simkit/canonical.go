package simkit

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Fingerprint identifies a request by what it asks for, not how it is
// spelled: the lowercase hex sha256 of the endpoint path, a newline, and
// the canonical JSON of the body (the body as received, no defaults
// filled in): objects with keys sorted, no whitespace, strings without
// HTML escaping, whole numbers below 1e21 written as integers (4, 4.0 and
// 4e0 are all 4) and other numbers as the shortest form that round-trips
// through float64.
func Fingerprint(endpoint string, body []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("decoding body: %w", err)
	}
	var buf bytes.Buffer
	buf.WriteString(endpoint)
	buf.WriteByte('\n')
	if err := writeCanonical(&buf, v); err != nil {
		return "", err
	}
	sum := sha256.Sum256(buf.Bytes())
	return hex.EncodeToString(sum[:]), nil
}

// writeCanonical writes v as compact JSON with object keys sorted, strings
// without HTML escaping, and numbers normalised (see normalNumber).
func writeCanonical(buf *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case map[string]any:
		keys := slices.Sorted(maps.Keys(v))
		return writeList(buf, '{', '}', len(keys), func(i int) error {
			if err := writeCanonical(buf, keys[i]); err != nil {
				return err
			}
			buf.WriteByte(':')
			return writeCanonical(buf, v[keys[i]])
		})
	case []any:
		return writeList(buf, '[', ']', len(v), func(i int) error { return writeCanonical(buf, v[i]) })
	case string:
		enc := json.NewEncoder(buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return fmt.Errorf("encoding string: %w", err)
		}
		buf.Truncate(buf.Len() - 1) // Encode appends a newline
	case json.Number:
		s, err := normalNumber(v)
		if err != nil {
			return err
		}
		buf.WriteString(s)
	case bool:
		buf.WriteString(strconv.FormatBool(v))
	case nil:
		buf.WriteString("null")
	default:
		return fmt.Errorf("unexpected JSON value of type %T", v)
	}
	return nil
}

// writeList writes n items between opening and closing, separated by
// commas, each written by item.
func writeList(buf *bytes.Buffer, opening, closing byte, n int, item func(i int) error) error {
	buf.WriteByte(opening)
	for i := range n {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := item(i); err != nil {
			return err
		}
	}
	buf.WriteByte(closing)
	return nil
}

// normalNumber spells a JSON number one way: whole numbers below 1e21 as
// plain integers (4, 4.0 and 4e0 all become 4), others as the shortest
// decimal that round-trips through float64.
func normalNumber(n json.Number) (string, error) {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return "", fmt.Errorf("number %s: %w", n, err)
	}
	if f == 0 {
		return "0", nil // also folds -0
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64), nil
	}
	return strconv.FormatFloat(f, 'g', -1, 64), nil
}

// NewUUID returns a random UUID (version 4): random rather than counted so
// ids never collide across restarts, servers or data directories.
func NewUUID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generating a job id: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
}

// SeedFromID picks the seed of a job that asked for a random one: random
// across jobs, fixed for the job (0..max), so its outputs are stable.
func SeedFromID(id string, max int64) int64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return int64(h.Sum64() % uint64(max+1))
}

// Owner is the hash that names the user of key in limits and job
// ownership, so that the key itself is never kept, on disk or in memory.
func Owner(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// KeyOf reads the key of an "Authorization: <scheme> <key>" header, the
// scheme compared without regard to case; "" when the header is missing,
// of another scheme, or carries no key.
func KeyOf(r *http.Request, scheme string) string {
	s, key, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(s, scheme) {
		return ""
	}
	return strings.TrimSpace(key)
}
