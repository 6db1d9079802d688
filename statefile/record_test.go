package statefile

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/statefile/filetest"
)

// decodeOwn decodes a record filed under its own address, as the store
// files every record it writes.
func decodeOwn[T any](decode func(k, v []byte) (*T, error), addr addrs.Instance, rec []byte) (*T, error) {
	return decode(key(addr), rec)
}

func TestResourceRecordRoundTrip(t *testing.T) {
	long := strings.Repeat("x", 300) // nested messages longer than 127 bytes need a 2-byte length
	tests := []struct {
		name string
		r    *Resource
	}{
		{"address and endpoint only", &Resource{Addr: a("image.a"), Endpoint: addrs.Text2Image}},
		{"after a success", sampleResource("image.hero", 4)},
		{"instance key", sampleResource(`video.clip["a \"quoted\" key"]`, 1)},
		{"count index", sampleResource("video.clip[12]", 1)},
		{"every endpoint: image-to-video", &Resource{Addr: a("video.v"), Endpoint: addrs.Image2Video}},
		{"every endpoint: key frames", &Resource{Addr: a("video.v"), Endpoint: addrs.KeyFrames}},
		{"every endpoint: text-to-video", &Resource{Addr: a("video.v"), Endpoint: addrs.Text2Video}},
		{"long output fields", &Resource{Addr: a("image.a"), Endpoint: addrs.Text2Image, Outputs: []Output{{Index: 3, MediaURL: "https://x/" + long, Path: long, SHA256: long}}}},
		{"empty outputs are kept", &Resource{Addr: a("image.a"), Endpoint: addrs.Text2Image, Outputs: []Output{{}, {Index: 1}}}},
		{"dependencies keep their order and kinds", &Resource{Addr: a("video.a"), Endpoint: addrs.Image2Video, Deps: []addrs.Resource{dep("video.z"), dep("image.b"), dep("image.a")}}},
		{"failure", &Resource{Addr: a("image.a"), Endpoint: addrs.Text2Image, Status: "failed", Error: "prompt refused: [fail]", WatermarkFree: true}},
		{"odd times and sizes", &Resource{
			Addr:      a("image.a"),
			Endpoint:  addrs.Text2Image,
			CreatedAt: time.Unix(0, 0).UTC(),
			UpdatedAt: time.Date(3000, 1, 2, 3, 4, 5, 999999999, time.UTC),
			Outputs: []Output{
				{Index: -1, Size: -1, ModTime: time.Date(1601, 1, 1, 0, 0, 0, 1, time.UTC)},
				{Size: 1 << 40, ModTime: time.Unix(1, 0).UTC()},
			},
		}},
		{"unicode", &Resource{Addr: a(`image.hero["ünïcode 灯台"]`), Endpoint: addrs.Text2Image, Dir: "生成/画像", Request: []byte(`{"prompt":"灯台 🌅"}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeOwn(decodeResource, tt.r.Addr, encodeResource(tt.r))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.r, got, cmpAddrs); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTimesComeBackInUTC(t *testing.T) {
	local := time.Date(2026, 5, 1, 12, 0, 0, 5, time.FixedZone("CEST", 2*3600))
	got, err := decodeOwn(decodeResource, a("image.a"), encodeResource(&Resource{Addr: a("image.a"), Endpoint: addrs.Text2Image, CreatedAt: local}))
	if err != nil {
		t.Fatal(err)
	}
	if !got.CreatedAt.Equal(local) || got.CreatedAt.Location() != time.UTC {
		t.Errorf("CreatedAt = %v, want %v in UTC", got.CreatedAt, local)
	}
}

func TestIntentAndProtectionRoundTrip(t *testing.T) {
	intents := []*Intent{
		intent("image.a", ""),
		{Addr: a("video.b[2]"), Endpoint: addrs.KeyFrames, Fingerprint: "sha256:ab", Request: []byte(`{"a":[1,2]}`), GenerationID: "g", CreatedAt: t0, SubmittedAt: t0.Add(time.Second)},
	}
	for _, in := range intents {
		got, err := decodeOwn(decodeIntent, in.Addr, encodeIntent(in))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(in, got, cmpAddrs); diff != "" {
			t.Errorf("intent round trip (-want +got):\n%s", diff)
		}
	}
	for _, p := range []*Protection{{Addr: a("image.a"), PreventDestroy: true}, {Addr: a(`video.b["k"]`)}} {
		got, err := decodeOwn(decodeProtection, p.Addr, encodeProtection(p))
		if err != nil {
			t.Fatal(err)
		}
		if *got != *p {
			t.Errorf("protection round trip = %+v, want %+v", got, p)
		}
	}
}

// TestFileFormatUnchanged reads the fuzz seeds written before addresses,
// kinds and endpoints were typed: the records a genform of then wrote read
// the same today, and are written byte for byte the same. (The other seeds
// are records no genform wrote: without a kind or endpoint, or with an
// endpoint path the service does not have. They are refused now.)
func TestFileFormatUnchanged(t *testing.T) {
	old := sampleResource(`image.hero["red"]`, 4)
	old.Deps = []addrs.Resource{dep("image.a"), dep("image.b")}
	old.WatermarkFree = true
	tests := []struct {
		file string
		want any
	}{
		{"FuzzDecodeResource/seed-1", old},
		{"FuzzDecodeResource/seed-3", sampleResource("image.hero", 1)},
		{"FuzzDecodeProtection/seed-0", &Protection{Addr: a("image.a"), PreventDestroy: true}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			rec := readSeed(t, filepath.Join("testdata", "fuzz", tt.file))
			var got any
			var again []byte
			var err error
			switch want := tt.want.(type) {
			case *Resource:
				got, err = decodeOwn(decodeResource, want.Addr, rec)
				again = encodeResource(want)
			case *Intent:
				got, err = decodeOwn(decodeIntent, want.Addr, rec)
				again = encodeIntent(want)
			case *Protection:
				got, err = decodeOwn(decodeProtection, want.Addr, rec)
				again = encodeProtection(want)
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpAddrs); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
			if !bytes.Equal(rec, again) {
				t.Errorf("encoded today:\n%q\nwritten then:\n%q", again, rec)
			}
		})
	}
}

// readSeed reads the one []byte value of a fuzz corpus file.
func readSeed(t *testing.T, path string) []byte {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(string(filetest.ReadFile(t, path))), "\n")
	if len(lines) != 2 || lines[0] != "go test fuzz v1" || !strings.HasPrefix(lines[1], "[]byte(") || !strings.HasSuffix(lines[1], ")") {
		t.Fatalf("%s is not a corpus file of one []byte", path)
	}
	s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return []byte(s)
}

// TestDecodedRecordOwnsItsMemory: bbolt's value bytes are only valid inside
// the transaction, so nothing decoded may point into them.
func TestDecodedRecordOwnsItsMemory(t *testing.T) {
	want := sampleResource(`image.hero["red"]`, 2)
	k, buf := key(want.Addr), encodeResource(want)
	got, err := decodeResource(k, buf)
	if err != nil {
		t.Fatal(err)
	}
	for i := range buf {
		buf[i] = 0xAA
	}
	for i := range k {
		k[i] = 0xAA
	}
	if diff := cmp.Diff(want, got, cmpAddrs); diff != "" {
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
	got, err := decodeOwn(decodeResource, want.Addr, e.b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, cmpAddrs); diff != "" {
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
			r, err := decodeResource([]byte("image.hero"), tt.buf)
			if err == nil {
				t.Fatalf("decoded %+v", r)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

// TestDecodeRefusesInconsistentRecords: a record's kind and endpoint must
// be those its address can have, and its address the canonical one of the
// key it is filed under. Each case is a record the encoder wrote with one
// field changed, as a damaged or hand-edited file would hold it.
func TestDecodeRefusesInconsistentRecords(t *testing.T) {
	img := encodeResource(sampleResource(`image.hero["red"]`, 1))
	vid := encodeResource(&Resource{Addr: a("video.clip[2]"), Endpoint: addrs.Image2Video, Deps: []addrs.Resource{dep("image.hero")}})
	imgIntent := encodeIntent(intent("image.hero", "g-1"))
	vidIntent := encodeIntent(intent("video.clip[2]", ""))
	prot := encodeProtection(&Protection{Addr: a("image.hero[0]"), PreventDestroy: true})
	type decoder func(k, v []byte) error
	var (
		res decoder = func(k, v []byte) error { _, err := decodeResource(k, v); return err }
		in  decoder = func(k, v []byte) error { _, err := decodeIntent(k, v); return err }
		pr  decoder = func(k, v []byte) error { _, err := decodeProtection(k, v); return err }
	)
	tests := []struct {
		name   string
		decode decoder
		key    string
		rec    []byte
		want   string
	}{
		{"resource: the kind of the other address", res, `image.hero["red"]`, tamper(img, resKind, "video"), `kind "video" does not match the address`},
		{"resource: no kind", res, `image.hero["red"]`, tamper(img, resKind, ""), `kind "" does not match the address`},
		{"resource: an unknown kind", res, `image.hero["red"]`, tamper(img, resKind, "audio"), `kind "audio" does not match the address`},
		{"resource: an unknown endpoint", res, `image.hero["red"]`, tamper(img, resEndpoint, "/v1/jobs/text2audio"), `endpoint "/v1/jobs/text2audio" is not one a image is generated by`},
		{"resource: no endpoint", res, `image.hero["red"]`, tamper(img, resEndpoint, ""), `endpoint "" is not one a image is generated by`},
		{"resource: a video endpoint for an image", res, `image.hero["red"]`, tamper(img, resEndpoint, addrs.Text2Video.Path()), `endpoint "/v1/jobs/gen2/text2video" is not one a image is generated by`},
		{"resource: an image endpoint for a video", res, "video.clip[2]", tamper(vid, resEndpoint, addrs.Text2Image.Path()), `endpoint "/v1/jobs/text2image" is not one a video is generated by`},
		{"resource: the kind and endpoint of an image for a video", res, "video.clip[2]", tamper(tamper(vid, resKind, "image"), resEndpoint, addrs.Text2Image.Path()), `kind "image" does not match the address`},
		{"resource: an address that is no address", res, "image", tamper(img, resAddr, "image"), "image is not an address genform writes"},
		{"resource: an address not written as genform writes it", res, "video.clip[02]", tamper(vid, resAddr, "video.clip[02]"), "video.clip[02] is not an address genform writes"},
		{"resource: an address with spaces", res, "video.clip [2]", tamper(vid, resAddr, "video.clip [2]"), `video.clip [2] is not an address genform writes`},
		{"resource: filed under another key", res, "video.clip[3]", vid, "record says it is video.clip[2]"},
		{"resource: filed under the address's other form", res, "video.clip[02]", vid, "record says it is video.clip[2]"},
		{"resource: an instance as a dependency", res, "video.clip[2]", append(bytes.Clone(vid), tamper(nil, resDep, "image.hero[0]")...), "dependency 1 is not a resource address"},
		{"resource: no dependency", res, "video.clip[2]", append(bytes.Clone(vid), 13<<3|wireBytes, 0), "dependency 1 is not a resource address"},
		{"intent: the kind of the other address", in, "image.hero", tamper(imgIntent, intKind, "video"), `kind "video" does not match the address`},
		{"intent: an unknown endpoint", in, "image.hero", tamper(imgIntent, intEndpoint, "/v1/jobs/text2image/"), `endpoint "/v1/jobs/text2image/" is not one a image is generated by`},
		{"intent: no endpoint", in, "image.hero", tamper(imgIntent, intEndpoint, ""), `endpoint "" is not one a image is generated by`},
		{"intent: an image endpoint for a video", in, "video.clip[2]", tamper(vidIntent, intEndpoint, addrs.Text2Image.Path()), `endpoint "/v1/jobs/text2image" is not one a video is generated by`},
		{"intent: a video endpoint for an image", in, "image.hero", tamper(imgIntent, intEndpoint, addrs.KeyFrames.Path()), `endpoint "/v1/jobs/gen2/afc" is not one a image is generated by`},
		{"intent: an address not written as genform writes it", in, "video.clip[ 2 ]", tamper(vidIntent, intAddr, "video.clip[ 2 ]"), "is not an address genform writes"},
		{"intent: filed under another key", in, "image.other", imgIntent, "record says it is image.hero"},
		{"protection: an address not written as genform writes it", pr, "image.hero[00]", tamper(prot, protAddr, "image.hero[00]"), "image.hero[00] is not an address genform writes"},
		{"protection: an address of another kind of resource", pr, "model.hero", tamper(prot, protAddr, "model.hero"), "model.hero is not an address genform writes"},
		{"protection: filed under another key", pr, "image.hero[1]", prot, "record says it is image.hero[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.decode([]byte(tt.key), tt.rec)
			if err == nil {
				t.Fatal("decoded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
	// The records tampered with decode as they are.
	for _, ok := range []struct {
		decode   decoder
		key, rec []byte
	}{
		{res, []byte(`image.hero["red"]`), img},
		{res, []byte("video.clip[2]"), vid},
		{in, []byte("image.hero"), imgIntent},
		{in, []byte("video.clip[2]"), vidIntent},
		{pr, []byte("image.hero[0]"), prot},
	} {
		if err := ok.decode(ok.key, ok.rec); err != nil {
			t.Errorf("untouched record %s: %v", ok.key, err)
		}
	}
}

var updateSeeds = flag.Bool("update-seeds", false, "rewrite the fuzz seed corpus in testdata/fuzz")

// seedRecords are the fuzz seeds: real records of each kind. With
// -update-seeds they are also written to testdata/fuzz, where `go test`
// runs them as regular cases.
func seedRecords() map[string][][]byte {
	big := sampleResource(`image.hero["red"]`, 4)
	big.Deps = []addrs.Resource{dep("image.a"), dep("image.b")}
	big.WatermarkFree = true
	full := encodeResource(big)
	return map[string][][]byte{
		"FuzzDecodeResource": {
			full[:len(full)/2], // cut inside an output
			full,
			encodeResource(&Resource{Addr: a("image.a"), Endpoint: addrs.Text2Image}),
			encodeResource(sampleResource("image.hero", 1)),
			encodeResource(&Resource{Addr: a("image.f"), Endpoint: addrs.Text2Image, Status: "failed", Error: "refused", CreatedAt: t0}),
			encodeResource(&Resource{Addr: a("video.v[3]"), Endpoint: addrs.KeyFrames, Deps: []addrs.Resource{dep("image.a"), dep("video.b")}}),
		},
		"FuzzDecodeIntent": {
			encodeIntent(intent("image.a", "")),
			encodeIntent(&Intent{Addr: a("video.b"), Endpoint: addrs.Text2Video, Fingerprint: "sha256:1", Request: []byte(`{"prompt":"p"}`), GenerationID: "g-1", CreatedAt: t0, SubmittedAt: t0}),
		},
		"FuzzDecodeProtection": {
			encodeProtection(&Protection{Addr: a("image.a"), PreventDestroy: true}),
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
// A fuzz input is one record, decoded as filed under the address it
// carries (field 2 of every record), so that the fuzzer reaches past the
// check of the key: the store files every record under its own address.

func FuzzDecodeResource(f *testing.F) {
	for _, rec := range seedRecords()["FuzzDecodeResource"] {
		f.Add(rec)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeResource([]byte(fieldOf(b, resAddr)), b)
		if err != nil {
			return
		}
		if r.Addr.Resource.Kind != r.Endpoint.Kind() {
			t.Fatalf("decoded %s with endpoint %s", r.Addr, r.Endpoint)
		}
		again, err := decodeResource(key(r.Addr), encodeResource(r))
		if err != nil {
			t.Fatalf("re-decoding: %v", err)
		}
		if diff := cmp.Diff(r, again, cmpAddrs); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

func FuzzDecodeIntent(f *testing.F) {
	for _, rec := range seedRecords()["FuzzDecodeIntent"] {
		f.Add(rec)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := decodeIntent([]byte(fieldOf(b, intAddr)), b)
		if err != nil {
			return
		}
		if in.Addr.Resource.Kind != in.Endpoint.Kind() {
			t.Fatalf("decoded %s with endpoint %s", in.Addr, in.Endpoint)
		}
		again, err := decodeIntent(key(in.Addr), encodeIntent(in))
		if err != nil {
			t.Fatalf("re-decoding: %v", err)
		}
		if diff := cmp.Diff(in, again, cmpAddrs); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

func FuzzDecodeProtection(f *testing.F) {
	for _, rec := range seedRecords()["FuzzDecodeProtection"] {
		f.Add(rec)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodeProtection([]byte(fieldOf(b, protAddr)), b)
		if err != nil {
			return
		}
		again, err := decodeProtection(key(p.Addr), encodeProtection(p))
		if err != nil || *again != *p {
			t.Fatalf("round trip: %+v, %v; want %+v", again, err, p)
		}
	})
}

// TestFailureRoundTrip: a failure kept beside a record reads back as it was
// written, and a record without one reads back without one.
func TestFailureRoundTrip(t *testing.T) {
	s := openNew(t)
	rec := sampleResource("image.hero", 2)
	rec.Failure = &Failure{Endpoint: addrs.Text2Image, Fingerprint: "fp-failed", Request: json.RawMessage(`{"prompt":"a [fail]"}`),
		GenerationID: "job-9", Error: "the service reported the generation failed", At: t0.Add(time.Hour)}
	plain := sampleResource("image.plain", 1)
	if err := s.Update(func(tx *Tx) error {
		if err := tx.Record(rec); err != nil {
			return err
		}
		return tx.Record(plain)
	}); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s)
	got, err := s.Resource(a("image.hero"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rec.Failure, got.Failure); diff != "" {
		t.Errorf("failure (-written +read):\n%s", diff)
	}
	if len(got.Outputs) != 2 || got.Fingerprint != rec.Fingerprint {
		t.Errorf("the record beside the failure changed: %+v", got)
	}
	if p, _ := s.Resource(a("image.plain")); p.Failure != nil {
		t.Errorf("a record without a failure reads back with %+v", p.Failure)
	}
	bad := sampleResource("image.bad", 1)
	bad.Failure = &Failure{Endpoint: addrs.Text2Video}
	if err := s.Update(func(tx *Tx) error { return tx.Record(bad) }); err == nil {
		t.Error("a failure of the other kind's endpoint was recorded")
	}
}
