package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/genform/genform/internal/addrs"
)

// TestRequestBodies pins the exact JSON each endpoint is sent, with the
// documented defaults filled in and the undocumented ones left out.
func TestRequestBodies(t *testing.T) {
	tests := []struct {
		name     string
		block    string
		endpoint addrs.Endpoint
		body     string
	}{
		{
			name:     "image minimal",
			block:    `image "a" { prompt = "a lighthouse" }`,
			endpoint: addrs.Text2Image,
			body:     `{"config":{"image_number":4},"is_public":false,"prompt":"a lighthouse","settings":{"aspect_ratio":"16:9","resolution":720,"seed":-1}}`,
		},
		{
			name: "image full",
			block: `image "a" {
  prompt          = "a lighthouse"
  negative_prompt = "blurry"
  image_number    = 2
  aspect_ratio    = "9:16"
  resolution      = 1080
  seed            = 42
  is_public       = true
  dir             = "assets/hero"
}`,
			endpoint: addrs.Text2Image,
			body:     `{"config":{"image_number":2},"is_public":true,"negative_prompt":"blurry","prompt":"a lighthouse","settings":{"aspect_ratio":"9:16","resolution":1080,"seed":42}}`,
		},
		{
			name:     "image-to-video minimal",
			block:    `video "v" { source_image = "https://example.com/a.png" }`,
			endpoint: addrs.Image2Video,
			body:     `{"config":{"source_image":"https://example.com/a.png"},"gen_mode":"smooth","is_enable_prompt_enhancer":true,"is_public":false}`,
		},
		{
			name: "image-to-video full",
			block: `video "v" {
  source_image              = "https://example.com/a.png"
  prompt                    = "slow dolly in"
  negative_prompt           = "shaky"
  gen_mode                  = "enhanced"
  is_enable_prompt_enhancer = false
  seed                      = 3
  duration                  = 4
  is_public                 = true
  watermark_free            = true
}`,
			endpoint: addrs.Image2Video,
			body:     `{"config":{"source_image":"https://example.com/a.png"},"gen_mode":"enhanced","is_enable_prompt_enhancer":false,"is_public":true,"negative_prompt":"shaky","prompt":"slow dolly in","settings":{"duration":4,"seed":3}}`,
		},
		{
			name: "key frames minimal",
			block: `video "v" {
  source_images = ["https://example.com/a.png", "data:image/png;base64,AAAA"]
  frame_indices = [0, 31]
  input_width   = 1280
  input_height  = 720
}`,
			endpoint: addrs.KeyFrames,
			body:     `{"config":{"frame_indices":[0,31],"input_height":720,"input_width":1280,"source_images":["https://example.com/a.png","data:image/png;base64,AAAA"]},"is_public":false}`,
		},
		{
			name: "key frames full",
			block: `video "v" {
  source_images   = ["https://example.com/a.png", "https://example.com/b.png", "https://example.com/c.png"]
  frame_indices   = [0, 15, 31]
  input_width     = 1280
  input_height    = 720
  prompt          = "morph"
  negative_prompt = "flicker"
  seed            = 9
  duration        = 4
}`,
			endpoint: addrs.KeyFrames,
			body:     `{"config":{"frame_indices":[0,15,31],"input_height":720,"input_width":1280,"source_images":["https://example.com/a.png","https://example.com/b.png","https://example.com/c.png"]},"is_public":false,"negative_prompt":"flicker","prompt":"morph","settings":{"duration":4,"seed":9}}`,
		},
		{
			name:     "text-to-video minimal",
			block:    `video "v" { prompt = "title card" }`,
			endpoint: addrs.Text2Video,
			body:     `{"gen_mode":"standard","is_enable_prompt_enhancer":true,"is_public":false,"prompt":"title card"}`,
		},
		{
			name: "text-to-video full",
			block: `video "v" {
  prompt                    = "title card \"ACME\" <b> & \u00e9"
  negative_prompt           = "text"
  gen_mode                  = "smooth"
  aspect_ratio              = "9:16"
  seed                      = 4294967295
  duration                  = 8
  is_enable_prompt_enhancer = false
}`,
			endpoint: addrs.Text2Video,
			body:     `{"gen_mode":"smooth","is_enable_prompt_enhancer":false,"is_public":false,"negative_prompt":"text","prompt":"title card \"ACME\" <b> & é","settings":{"aspect_ratio":"9:16","duration":8,"seed":4294967295}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustLoad(t, tt.block, Options{})
			insts := expandAll(t, c, nil)
			if len(insts) != 1 {
				t.Fatalf("got %d instances, want 1", len(insts))
			}
			for _, in := range insts {
				if in.Endpoint != tt.endpoint {
					t.Errorf("endpoint = %s, want %s", in.Endpoint, tt.endpoint)
				}
				if string(in.Request) != tt.body {
					t.Errorf("request =\n%s\nwant\n%s", in.Request, tt.body)
				}
				// The canonical bytes are the Body's, and valid JSON.
				fromBody, err := JSON(in.Body())
				if err != nil || !bytes.Equal(fromBody, in.Request) {
					t.Errorf("JSON(Body) = %s, %v; want the Request bytes", fromBody, err)
				}
				if !json.Valid(in.Request) {
					t.Errorf("request is not valid JSON")
				}
				flat, err := FlattenRequest(in.Endpoint, in.Request)
				if err != nil {
					t.Fatal(err)
				}
				if len(flat) != len(in.Attrs()) {
					t.Errorf("FlattenRequest gives %d attributes, Attrs has %d", len(flat), len(in.Attrs()))
				}
				// Attr is Attrs, one name at a time, and knows no
				// other names.
				attrs := in.Attrs()
				for _, name := range attrNames {
					v, ok := in.Attr(name)
					w, wok := attrs[name]
					if ok != wok || ok && !v.RawEquals(w) {
						t.Errorf("Attr(%q) = %#v, %v; Attrs has %#v, %v", name, v, ok, w, wok)
					}
				}
				if v, ok := in.Attr("dir"); ok {
					t.Errorf("Attr(\"dir\") = %#v: dir is not a request field", v)
				}
				for name, v := range in.Attrs() {
					want, _ := JSON(v)
					var got bytes.Buffer
					enc := json.NewEncoder(&got)
					enc.SetEscapeHTML(false)
					enc.Encode(flat[name])
					if strings.TrimSpace(got.String()) != string(want) {
						t.Errorf("attribute %s: flattened %s, Attrs %s", name, got.String(), want)
					}
				}
			}
		})
	}
}

// endpointCase is a block for one endpoint with every request field set,
// so each can be changed in turn, and the same block with only what is
// required.
type endpointCase struct {
	kind     string
	required map[string]string
	all      map[string]string // every request field, non-default values
	defaults map[string]string // the documented defaults, written out
	changed  map[string]string // another value for each field of all
}

var endpointCases = map[addrs.Endpoint]endpointCase{
	addrs.Text2Image: {
		kind:     "image",
		required: map[string]string{"prompt": `"a lighthouse"`},
		all: map[string]string{
			"prompt": `"a lighthouse"`, "negative_prompt": `"blurry"`, "image_number": "2",
			"aspect_ratio": `"1:1"`, "resolution": "1080", "seed": "42", "is_public": "true",
		},
		defaults: map[string]string{
			"image_number": "4", "aspect_ratio": `"16:9"`, "resolution": "720", "seed": "-1", "is_public": "false",
		},
		changed: map[string]string{
			"prompt": `"a lighthouse at dawn"`, "negative_prompt": `"grainy"`, "image_number": "3",
			"aspect_ratio": `"4:3"`, "resolution": "720", "seed": "43", "is_public": "false",
		},
	},
	addrs.Image2Video: {
		kind:     "video",
		required: map[string]string{"source_image": `"https://example.com/a.png"`},
		all: map[string]string{
			"source_image": `"https://example.com/a.png"`, "prompt": `"dolly"`, "negative_prompt": `"shaky"`,
			"gen_mode": `"enhanced"`, "is_enable_prompt_enhancer": "false", "seed": "1", "duration": "4", "is_public": "true",
		},
		defaults: map[string]string{"gen_mode": `"smooth"`, "is_enable_prompt_enhancer": "true", "is_public": "false"},
		changed: map[string]string{
			"source_image": `"https://example.com/b.png"`, "prompt": `"pan"`, "negative_prompt": `"dark"`,
			"gen_mode": `"smooth"`, "is_enable_prompt_enhancer": "true", "seed": "2", "duration": "6", "is_public": "false",
		},
	},
	addrs.KeyFrames: {
		kind: "video",
		required: map[string]string{
			"source_images": `["https://example.com/a.png", "https://example.com/b.png"]`,
			"frame_indices": "[0, 31]", "input_width": "1280", "input_height": "720",
		},
		all: map[string]string{
			"source_images": `["https://example.com/a.png", "https://example.com/b.png"]`,
			"frame_indices": "[0, 15]", "input_width": "1280", "input_height": "720",
			"prompt": `"morph"`, "negative_prompt": `"flicker"`, "seed": "5", "duration": "4", "is_public": "true",
		},
		defaults: map[string]string{"is_public": "false"},
		changed: map[string]string{
			"source_images": `["https://example.com/a.png", "https://example.com/c.png"]`,
			"frame_indices": "[0, 7]", "input_width": "1920", "input_height": "1080",
			"prompt": `"melt"`, "negative_prompt": `"blur"`, "seed": "6", "duration": "2", "is_public": "false",
		},
	},
	addrs.Text2Video: {
		kind:     "video",
		required: map[string]string{"prompt": `"title card"`},
		all: map[string]string{
			"prompt": `"title card"`, "negative_prompt": `"text"`, "gen_mode": `"enhanced"`, "aspect_ratio": `"9:16"`,
			"is_enable_prompt_enhancer": "false", "seed": "7", "duration": "4", "is_public": "true",
		},
		defaults: map[string]string{"gen_mode": `"standard"`, "is_enable_prompt_enhancer": "true", "is_public": "false"},
		changed: map[string]string{
			"prompt": `"end card"`, "negative_prompt": `"logo"`, "gen_mode": `"smooth"`, "aspect_ratio": `"16:9"`,
			"is_enable_prompt_enhancer": "true", "seed": "8", "duration": "8", "is_public": "false",
		},
	},
}

func block(kind string, attrs map[string]string, extra ...map[string]string) string {
	merged := map[string]string{}
	for k, v := range attrs {
		merged[k] = v
	}
	for _, e := range extra {
		for k, v := range e {
			merged[k] = v
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s \"x\" {\n", kind)
	for _, k := range sortedKeys(merged) {
		fmt.Fprintf(&b, "  %s = %s\n", k, merged[k])
	}
	b.WriteString("}\n")
	return b.String()
}

// fingerprintOf loads one block and returns its instance's fingerprint
// against service.
func fingerprintOf(t *testing.T, src, service string) (string, *Instance) {
	t.Helper()
	c := mustLoad(t, src, Options{})
	for _, in := range expandAll(t, c, nil) {
		if in.Request == nil {
			t.Fatalf("request of %s is not known", in.Addr)
		}
		return Fingerprint(service, in.Endpoint, in.Request), in
	}
	t.Fatal("no instance")
	return "", nil
}

func TestFingerprintDefaultsExplicit(t *testing.T) {
	for ep, ec := range endpointCases {
		t.Run(ep.Title(), func(t *testing.T) {
			implicit, _ := fingerprintOf(t, block(ec.kind, ec.required), "simulator")
			explicit, in := fingerprintOf(t, block(ec.kind, ec.required, ec.defaults), "simulator")
			if in.Endpoint != ep {
				t.Fatalf("endpoint %s, want %s", in.Endpoint, ep)
			}
			if implicit != explicit {
				t.Errorf("writing the defaults out changed the fingerprint")
			}
		})
	}
}

func TestFingerprintChangesWithEveryField(t *testing.T) {
	for ep, ec := range endpointCases {
		base, _ := fingerprintOf(t, block(ec.kind, ec.all), "simulator")
		for field, v := range ec.changed {
			t.Run(ep.Title()+"/"+field, func(t *testing.T) {
				if ec.all[field] == v {
					t.Fatalf("test case: changed %s equals the base value", field)
				}
				fp, in := fingerprintOf(t, block(ec.kind, ec.all, map[string]string{field: v}), "simulator")
				if in.Endpoint != ep {
					t.Fatalf("endpoint %s, want %s", in.Endpoint, ep)
				}
				if fp == base {
					t.Errorf("changing %s from %s to %s kept the fingerprint", field, ec.all[field], v)
				}
			})
		}
		if len(ec.changed) != len(ec.all) {
			t.Errorf("%s: the test changes %d of %d fields", ep, len(ec.changed), len(ec.all))
		}
	}
}

func TestFingerprintIgnoresLocalAttributesAndToken(t *testing.T) {
	const img = `image "a" { prompt = "a lighthouse" }`
	base, _ := fingerprintOf(t, img, "simulator")
	for name, src := range map[string]string{
		"dir":   `image "a" {` + "\n" + `prompt = "a lighthouse"` + "\n" + `dir = "assets/a"` + "\n}",
		"token": `service { token = "secret-token-1234" }` + "\n" + img,
	} {
		t.Run(name, func(t *testing.T) {
			fp, in := fingerprintOf(t, src, "simulator")
			if fp != base {
				t.Errorf("setting %s changed the fingerprint", name)
			}
			if bytes.Contains(in.Request, []byte("secret-token")) {
				t.Errorf("the request holds the token")
			}
		})
	}
	const vid = `video "v" { prompt = "x" }`
	plain, _ := fingerprintOf(t, vid, "simulator")
	free, _ := fingerprintOf(t, `video "v" {`+"\n"+`prompt = "x"`+"\n"+`watermark_free = true`+"\n}", "simulator")
	if plain != free {
		t.Errorf("watermark_free changed the fingerprint")
	}
	other, _ := fingerprintOf(t, img, "https://gen.example.com")
	if other == base {
		t.Errorf("the service identity is not part of the fingerprint")
	}
}

func TestFingerprintSeparatesInputs(t *testing.T) {
	// Moving bytes between the service, the endpoint and the body must not
	// give the same hash.
	a := Fingerprint("ab", addrs.Text2Image, []byte("c"))
	b := Fingerprint("a", addrs.Text2Image, []byte("bc"))
	if a == b {
		t.Errorf("fingerprints of different inputs collide")
	}
	if Fingerprint("s", addrs.Text2Video, []byte("{}")) == Fingerprint("s", addrs.Image2Video, []byte("{}")) {
		t.Errorf("the endpoint is not part of the fingerprint")
	}
	if len(a) != 64 {
		t.Errorf("fingerprint %q is not hex sha256", a)
	}
}

func TestCanonicalJSON(t *testing.T) {
	v := cty.ObjectVal(map[string]cty.Value{
		"b":    cty.NumberFloatVal(0.1),
		"a":    cty.ListVal([]cty.Value{cty.NumberIntVal(-1), cty.NumberIntVal(1e15)}),
		"s":    cty.StringVal("line\nbreak\t\"q\" \\ \x01 \u2028"),
		"nil":  cty.NullVal(cty.String),
		"m":    cty.MapVal(map[string]cty.Value{"z": cty.True, "y": cty.False}),
		"big":  cty.MustParseNumberVal("123456789012345678901234567890"),
		"frac": cty.MustParseNumberVal("2.50"),
	})
	got, err := JSON(v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a":[-1,1000000000000000],"b":0.1,"big":123456789012345678901234567890,"frac":2.5,"m":{"y":false,"z":true},"nil":null,"s":"line\nbreak\t\"q\" \\ \u0001 \u2028"}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if !json.Valid(got) {
		t.Errorf("not valid JSON")
	}
	if _, err := JSON(cty.UnknownVal(cty.String)); err == nil {
		t.Errorf("an unknown value encoded")
	}
}

func TestFlattenRequest(t *testing.T) {
	got, err := FlattenRequest(addrs.Text2Image, []byte(`{"config":{"image_number":2},"is_public":false,"prompt":"p","settings":{"seed":-1,"aspect_ratio":"16:9","resolution":720}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"image_number": "2", "is_public": "false", "prompt": "p", "seed": "-1", "aspect_ratio": "16:9", "resolution": "720"}
	if len(got) != len(want) {
		t.Errorf("got %v", got)
	}
	for k, v := range want {
		if fmt.Sprint(got[k]) != v {
			t.Errorf("%s = %v, want %s", k, got[k], v)
		}
	}
	if _, err := FlattenRequest(addrs.Endpoint{}, []byte(`{}`)); err == nil {
		t.Errorf("an unknown endpoint was accepted")
	}
	if _, err := FlattenRequest(addrs.Text2Image, []byte(`{`)); err == nil {
		t.Errorf("broken JSON was accepted")
	}
}

// Fingerprints are recorded in every state file: the same request must
// give the same fingerprint in every genform version, or an upgrade would
// plan to generate everything again.
func TestFingerprintIsStable(t *testing.T) {
	got := Fingerprint(SimulatorService, addrs.Text2Image, []byte(`{"prompt":"p"}`))
	const want = "a23405067638803302a252a2034427f2e2700ad98d15ad4f1244556ae34751ca"
	if got != want {
		t.Errorf("fingerprint = %s, want %s", got, want)
	}
}

// A plan fingerprints every instance: the result string is the one
// allocation, for a request as long as a generated configuration's (the
// hasher, the sum and the hex digits stay on the stack).
func TestFingerprintAllocations(t *testing.T) {
	req := []byte(`{"config":{"image_number":1},"is_public":false,"prompt":"picture number 4096","settings":{"aspect_ratio":"16:9","resolution":720,"seed":-1}}`)
	if n := testing.AllocsPerRun(100, func() { Fingerprint(SimulatorService, addrs.Text2Image, req) }); n > 1 {
		t.Errorf("Fingerprint allocates %v times, want 1", n)
	}
	// Past the stack buffer, the same bytes are hashed.
	long := append(append([]byte(`{"prompt":"`), bytes.Repeat([]byte("x"), 1000)...), `"}`...)
	h := sha256.New()
	fmt.Fprintf(h, "genform-fingerprint-v1\x00%d:%s\x00%d:%s\x00", len("svc"), "svc", len("/v1/jobs/text2image"), "/v1/jobs/text2image")
	h.Write(long)
	if got, want := Fingerprint("svc", addrs.Text2Image, long), hex.EncodeToString(h.Sum(nil)); got != want {
		t.Errorf("fingerprint of a long request = %s, want %s", got, want)
	}
}

// TestJSONValue pins the plain Go form of values, and that the fast path
// for primitives gives what the trip through canonical JSON gives.
func TestJSONValue(t *testing.T) {
	for _, tc := range []struct {
		in   cty.Value
		want string
	}{
		{cty.StringVal("a \"<b>\""), `"a \"<b>\""`},
		{cty.NumberIntVal(720), `720`},
		{cty.NumberFloatVal(0.5), `0.5`},
		{cty.NumberFloatVal(1e21), `1000000000000000000000`},
		{cty.True, `true`},
		{cty.NullVal(cty.String), `null`},
		{cty.UnknownVal(cty.String), `null`},
		{cty.ListVal([]cty.Value{cty.NumberIntVal(0), cty.NumberIntVal(31)}), `[0,31]`},
		{cty.ObjectVal(map[string]cty.Value{"w": cty.NumberIntVal(1280), "s": cty.StringVal("x"), "u": cty.UnknownVal(cty.Bool)}), `{"s":"x","u":null,"w":1280}`},
	} {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(JSONValue(tc.in)); err != nil || strings.TrimSpace(buf.String()) != tc.want {
			t.Errorf("%#v: %s (%v), want %s", tc.in, buf.String(), err, tc.want)
		}
		if tc.in.IsWhollyKnown() && !tc.in.IsNull() {
			b, err := JSON(tc.in)
			if err != nil || string(b) != tc.want {
				t.Errorf("JSON(%#v) = %s, %v; want %s", tc.in, b, err, tc.want)
			}
		}
	}
}
