package statefile

import (
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestResourceRecordRoundTrip(t *testing.T) {
	long := strings.Repeat("x", 300) // nested messages longer than 127 bytes need a 2-byte length
	tests := []struct {
		name string
		r    *Resource
	}{
		{"address only", &Resource{Addr: "image.a"}},
		{"after a success", sampleResource("image.hero", 4)},
		{"instance key", sampleResource(`video.clip["a \"quoted\" key"]`, 1)},
		{"long output fields", &Resource{Addr: "image.a", Outputs: []Output{{Index: 3, MediaURL: "https://x/" + long, Path: long, SHA256: long}}}},
		{"empty outputs are kept", &Resource{Addr: "image.a", Outputs: []Output{{}, {Index: 1}}}},
		{"empty dependency is kept", &Resource{Addr: "image.a", Deps: []string{"", "image.b"}}},
		{"failure", &Resource{Addr: "image.a", Status: "failed", Error: "prompt refused: [fail]", WatermarkFree: true}},
		{"odd times and sizes", &Resource{
			Addr:      "image.a",
			CreatedAt: time.Unix(0, 0).UTC(),
			UpdatedAt: time.Date(3000, 1, 2, 3, 4, 5, 999999999, time.UTC),
			Outputs: []Output{
				{Index: -1, Size: -1, ModTime: time.Date(1601, 1, 1, 0, 0, 0, 1, time.UTC)},
				{Size: 1 << 40, ModTime: time.Unix(1, 0).UTC()},
			},
		}},
		{"unicode", &Resource{Addr: "image.ünïcode", Dir: "生成/画像", Request: []byte(`{"prompt":"灯台 🌅"}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeResource(encodeResource(tt.r))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.r, got); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTimesComeBackInUTC(t *testing.T) {
	local := time.Date(2026, 5, 1, 12, 0, 0, 5, time.FixedZone("CEST", 2*3600))
	got, err := decodeResource(encodeResource(&Resource{Addr: "image.a", CreatedAt: local}))
	if err != nil {
		t.Fatal(err)
	}
	if !got.CreatedAt.Equal(local) || got.CreatedAt.Location() != time.UTC {
		t.Errorf("CreatedAt = %v, want %v in UTC", got.CreatedAt, local)
	}
}

func TestIntentAndProtectionRoundTrip(t *testing.T) {
	intents := []*Intent{
		{Addr: "image.a"},
		{Addr: "video.b[2]", Kind: "video", Endpoint: "/v1/jobs/keyframes", Fingerprint: "sha256:ab", Request: []byte(`{"a":[1,2]}`), GenerationID: "g", CreatedAt: t0, SubmittedAt: t0.Add(time.Second)},
	}
	for _, in := range intents {
		got, err := decodeIntent(encodeIntent(in))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(in, got); diff != "" {
			t.Errorf("intent round trip (-want +got):\n%s", diff)
		}
	}
	for _, p := range []*Protection{{Addr: "image.a", PreventDestroy: true}, {Addr: "image.b"}} {
		got, err := decodeProtection(encodeProtection(p))
		if err != nil {
			t.Fatal(err)
		}
		if *got != *p {
			t.Errorf("protection round trip = %+v, want %+v", got, p)
		}
	}
}

// TestDecodedRecordOwnsItsMemory: bbolt's value bytes are only valid inside
// the transaction, so nothing decoded may point into them.
func TestDecodedRecordOwnsItsMemory(t *testing.T) {
	want := sampleResource("image.hero", 2)
	buf := encodeResource(want)
	got, err := decodeResource(buf)
	if err != nil {
		t.Fatal(err)
	}
	for i := range buf {
		buf[i] = 0xAA
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded resource changed with the buffer (-want +got):\n%s", diff)
	}
}

// TestUnknownFieldsAreSkipped: a record written by a later genform with a
// field this one does not know still reads.
func TestUnknownFieldsAreSkipped(t *testing.T) {
	want := sampleResource("image.hero", 1)
	e := encoder{b: encodeResource(want)}
	e.string(99, "from the future")
	e.uvarint(100, 7)
	e.b = binary.AppendUvarint(e.b, 101<<3|wireFixed64)
	e.b = append(e.b, 1, 2, 3, 4, 5, 6, 7, 8)
	e.b = binary.AppendUvarint(e.b, 102<<3|wireFixed32)
	e.b = append(e.b, 1, 2, 3, 4)
	got, err := decodeResource(e.b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDecodeResourceErrors(t *testing.T) {
	good := encodeResource(sampleResource("image.hero", 2))
	field := func(num, wire int, rest ...byte) []byte {
		return append(binary.AppendUvarint([]byte{0x08, 0x01}, uint64(num)<<3|uint64(wire)), rest...)
	}
	tests := []struct {
		name string
		buf  []byte
		want string
	}{
		{"empty", nil, "no record format version"},
		{"no address", []byte{0x08, 0x01}, "no address"},
		{"no format", good[2:], "no record format version"},
		{"newer format", []byte{0x08, 0x02}, "record format 2 is newer than this genform reads (1); upgrade genform"},
		{"cut short", good[:len(good)-10], "truncated field"},
		{"cut in a key", append(good[:2:2], 0x80), "malformed varint"},
		{"varint too long", field(resWatermarkFree, wireVarint, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01), "malformed varint"},
		{"length past the end", field(resAddr, wireBytes, 0x7f, 'a'), "127 bytes declared, 1 left"},
		{"huge length", field(resAddr, wireBytes, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01), "truncated field"},
		{"string field as varint", field(resAddr, wireVarint, 5), "field 2 has wire type 0, want 2"},
		{"varint field as string", field(resWatermarkFree, wireBytes, 0), "field 12 has wire type 2, want 0"},
		{"group wire type", field(resKind, 3), "unsupported wire type 3"},
		{"field number 0", []byte{0x08, 0x01, 0x00}, "invalid field number 0"},
		{"boolean 2", field(resWatermarkFree, wireVarint, 2), "boolean value 2"},
		{"output garbage", field(resOutput, wireBytes, 2, 0xff, 0xff), "output 0"},
		{"timestamp garbage", field(resCreatedAt, wireBytes, 1, 0x0a), "timestamp in field 14"},
		{"nanoseconds out of range", field(resCreatedAt, wireBytes, 6, 0x10, 0x80, 0x94, 0xeb, 0xdc, 0x03), "nanoseconds 1000000000 out of range"},
		{"truncated fixed64", field(50, wireFixed64, 1, 2), "truncated field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := decodeResource(tt.buf)
			if err == nil {
				t.Fatalf("decoded %+v", r)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

var updateSeeds = flag.Bool("update-seeds", false, "rewrite the fuzz seed corpus in testdata/fuzz")

// seedRecords are the fuzz seeds: real records of each kind. With
// -update-seeds they are also written to testdata/fuzz, where `go test`
// runs them as regular cases.
func seedRecords() map[string][][]byte {
	big := sampleResource(`image.hero["red"]`, 4)
	big.Deps = []string{"image.a", "image.b"}
	big.WatermarkFree = true
	full := encodeResource(big)
	return map[string][][]byte{
		"FuzzDecodeResource": {
			full[:len(full)/2], // cut inside an output
			full,
			encodeResource(&Resource{Addr: "image.a"}),
			encodeResource(sampleResource("image.hero", 1)),
			encodeResource(&Resource{Addr: "image.f", Status: "failed", Error: "refused", CreatedAt: t0}),
		},
		"FuzzDecodeIntent": {
			encodeIntent(&Intent{Addr: "image.a"}),
			encodeIntent(&Intent{Addr: "video.b", Kind: "video", Endpoint: "/v1/jobs/text2video", Fingerprint: "sha256:1", Request: []byte(`{"prompt":"p"}`), GenerationID: "g-1", CreatedAt: t0, SubmittedAt: t0}),
		},
		"FuzzDecodeProtection": {
			encodeProtection(&Protection{Addr: "image.a", PreventDestroy: true}),
		},
	}
}

func TestWriteFuzzSeeds(t *testing.T) {
	if !*updateSeeds {
		t.Skip("run with -update-seeds to rewrite testdata/fuzz")
	}
	for name, recs := range seedRecords() {
		dir := filepath.Join("testdata", "fuzz", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i, rec := range recs {
			body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", rec)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%d", i)), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// The fuzz targets check that no bytes make a decoder panic, and that what
// decodes is stable: encoding it and decoding again gives the same value.

func FuzzDecodeResource(f *testing.F) {
	for _, rec := range seedRecords()["FuzzDecodeResource"] {
		f.Add(rec)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeResource(b)
		if err != nil {
			return
		}
		again, err := decodeResource(encodeResource(r))
		if err != nil {
			t.Fatalf("re-decoding: %v", err)
		}
		if diff := cmp.Diff(r, again); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

func FuzzDecodeIntent(f *testing.F) {
	for _, rec := range seedRecords()["FuzzDecodeIntent"] {
		f.Add(rec)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := decodeIntent(b)
		if err != nil {
			return
		}
		again, err := decodeIntent(encodeIntent(in))
		if err != nil {
			t.Fatalf("re-decoding: %v", err)
		}
		if diff := cmp.Diff(in, again); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

func FuzzDecodeProtection(f *testing.F) {
	for _, rec := range seedRecords()["FuzzDecodeProtection"] {
		f.Add(rec)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodeProtection(b)
		if err != nil {
			return
		}
		again, err := decodeProtection(encodeProtection(p))
		if err != nil || *again != *p {
			t.Fatalf("round trip: %+v, %v; want %+v", again, err, p)
		}
	})
}
